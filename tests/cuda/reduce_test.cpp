// The CUDA reductions (Reduce*, ArgMax, ArgMin) against the CPU's reference kernels (double
// accumulation): every kind in every float type over the last axis, a leading axis, a non-contiguous
// set of axes, all axes, the attribute form (opsets 13/17) and the input form (18), keepdims,
// noop_with_empty_axes, empty reductions, int32/int64, and a million-element row.
#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

struct Geometry {
  rt::Shape shape;
  std::vector<int64_t> axes;
};

const std::vector<Geometry>& geometries() {
  static const std::vector<Geometry> g = {{{300, 1000}, {1}},      // a block per row
                                          {{2048, 40}, {-1}},      // a warp per row
                                          {{60, 2000}, {0}},       // a leading axis, a warp per column
                                          {{40, 5000}, {0}},       // a leading axis, a thread per column
                                          {{24, 33, 50}, {0, 2}},  // not contiguous
                                          {{7, 5, 3}, {}},         // every axis
                                          {{9, 1, 8}, {1}}};       // a size-1 axis
  return g;
}

// Values each reduction is well defined and well conditioned on.
std::pair<float, float> range_for(const std::string& op) {
  if (op == "ReduceProd") return {0.97f, 1.03f};
  if (op == "ReduceLogSum" || op == "ReduceL2") return {0.5f, 1.5f};
  if (op == "ReduceLogSumExp") return {-50.0f, 50.0f};
  return {-2.0f, 2.0f};
}

const char* const kOps[] = {"ReduceSum", "ReduceMean", "ReduceMax",    "ReduceMin",       "ReduceProd",
                            "ReduceL1",  "ReduceL2",   "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};

// float32: a Kahan sum per thread and a tree of at most 8 levels: a few ulp of the sum of magnitudes
// (4096 elements of at most 2 per group here gives the absolute term); the half types round once after
// float32 math: one unit of the type.
TEST_F(CudaOps, ReductionsMatchTheReferenceInEveryFloatType) {
  uint32_t seed = 100;
  for (const char* op : kOps) {
    const auto [lo, hi] = range_for(op);
    for (DataType t : {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16}) {
      for (const auto& g : geometries()) {
        for (int keepdims : {0, 1}) {
          OneNode n = node(op, 18, {ir::Attribute::of_int("keepdims", keepdims)});
          n.inputs = {random_tensor(t, g.shape, lo, hi, seed++)};
          if (!g.axes.empty()) n.inputs.push_back(ints({static_cast<int64_t>(g.axes.size())}, g.axes));
          const double rtol = t == DataType::kFloat ? 64 * type_eps(t) : 2 * type_eps(t);
          expect_matches(n, rtol, 1e-4, label(op, type_name(t), rt::shape_str(g.shape)));
        }
      }
    }
  }
}

TEST_F(CudaOps, ReductionAxesAsAttributeBeforeTheirVersion) {
  for (const char* op : kOps) {
    const int opset = std::string(op) == "ReduceSum" ? 11 : 17;
    OneNode n =
        node(op, opset, {ir::Attribute::of_ints("axes", {0, -1}), ir::Attribute::of_int("keepdims", 0)});
    const auto [lo, hi] = range_for(op);
    n.inputs = {random_tensor(DataType::kFloat, {40, 6, 70}, lo, hi, 7)};
    expect_matches(n, 64 * 0x1p-23, 1e-4, label(op, "opset", std::to_string(opset)));
  }
}

TEST_F(CudaOps, ReductionEdgeCases) {
  // noop_with_empty_axes with no axes: each element on its own (ReduceSumSquare squares it).
  for (const char* op : {"ReduceSum", "ReduceSumSquare", "ReduceLogSumExp"}) {
    OneNode n = node(op, 18, {ir::Attribute::of_int("noop_with_empty_axes", 1)});
    n.inputs = {random_tensor(DataType::kFloat, {5, 7}, -3.0f, 3.0f, 11)};
    expect_matches(n, 4 * 0x1p-23, 0, label(op, "noop"));
  }
  // Reducing an empty axis gives the reduction's identity.
  for (const char* op : kOps) {
    OneNode n = node(op, 18);
    n.inputs = {rt::Tensor::zeros(DataType::kFloat, {3, 0, 4}), ints({1}, {1})};
    expect_matches(n, 0, 0, label(op, "empty"));
  }
  // NaN and infinities propagate as the reference's.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* op : {"ReduceMax", "ReduceMin", "ReduceSum", "ReduceLogSumExp"}) {
    OneNode n = node(op, 18);
    n.inputs = {floats(DataType::kFloat, {4, 3}, {1, nan, 2, inf, 1, 2, -inf, -inf, -inf, -inf, 3, 1}),
                ints({1}, {1})};
    expect_matches(n, 4 * 0x1p-23, 0, label(op, "special values"));
  }
}

TEST_F(CudaOps, IntegerReductionsWrapAsTheReference) {
  uint32_t seed = 300;
  for (const char* op :
       {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceSumSquare"}) {
    for (DataType t : {DataType::kInt32, DataType::kInt64}) {
      for (const auto& g : geometries()) {
        OneNode n = node(op, 18);
        n.inputs = {random_tensor(t, g.shape, -1000.0f, 1000.0f, seed++)};
        if (!g.axes.empty()) n.inputs.push_back(ints({static_cast<int64_t>(g.axes.size())}, g.axes));
        expect_matches(n, 0, 0, label(op, type_name(t), rt::shape_str(g.shape)));
      }
    }
  }
}

// double accumulates in double: the reference's arithmetic, to a few ulp; bool through ReduceMax/Min.
TEST_F(CudaOps, DoubleAndBoolReductions) {
  uint32_t seed = 700;
  for (const char* op : kOps) {
    const auto [lo, hi] = range_for(op);
    for (const auto& g : geometries()) {
      OneNode n = node(op, 18);
      n.inputs = {random_tensor(DataType::kDouble, g.shape, lo, hi, seed++)};
      if (!g.axes.empty()) n.inputs.push_back(ints({static_cast<int64_t>(g.axes.size())}, g.axes));
      expect_matches(n, 1e-12, 1e-12, label(op, "double", rt::shape_str(g.shape)));
    }
  }
  // bool came with opset 20.
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    for (const auto& g : geometries()) {
      OneNode n = node(op, 20);
      n.inputs = {random_tensor(DataType::kBool, g.shape, 0.0f, 1.0f, seed++)};
      if (!g.axes.empty()) n.inputs.push_back(ints({static_cast<int64_t>(g.axes.size())}, g.axes));
      expect_matches(n, 0, 0, label(op, "bool", rt::shape_str(g.shape)));
    }
    OneNode e = node(op, 20);
    e.inputs = {rt::Tensor::zeros(DataType::kBool, {2, 0}), ints({1}, {1})};
    expect_matches(e, 0, 0, label(op, "bool empty"));
  }
}

// A million values near 1: a float32 running sum would drift by about 1e-3 relative; the compensated
// per-thread sums and the tree stay within a few ulp.
TEST_F(CudaOps, MillionElementRowsStayAccurate) {
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceL2", "ReduceSumSquare"}) {
    OneNode n = node(op, 18);
    n.inputs = {random_tensor(DataType::kFloat, {1, 1 << 20}, 0.9f, 1.1f, 5), ints({1}, {1})};
    expect_matches(n, 8 * 0x1p-23, 0, label(op, "long row"));
  }
}

TEST_F(CudaOps, ArgMaxArgMinMatchTheReference) {
  uint32_t seed = 500;
  const std::vector<std::pair<rt::Shape, int64_t>> cases = {
      {{300, 1000}, 1}, {{2048, 40}, -1}, {{60, 2000}, 0}, {{30, 5000}, 0}, {{6, 70, 9}, 1}, {{5000, 3}, 1}};
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (DataType t :
         {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16, DataType::kInt32, DataType::kInt64}) {
      for (const auto& [shape, axis] : cases) {
        for (int last : {0, 1}) {
          for (int keepdims : {0, 1}) {
            OneNode n =
                node(op, 13,
                     {ir::Attribute::of_int("axis", axis), ir::Attribute::of_int("keepdims", keepdims),
                      ir::Attribute::of_int("select_last_index", last)});
            // A narrow range makes ties common.
            n.inputs = {random_tensor(t, shape, -20.0f, 20.0f, seed++)};
            expect_matches(n, 0, 0, label(op, type_name(t), rt::shape_str(shape)));
          }
        }
      }
    }
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int last : {0, 1}) {
    OneNode n = node("ArgMax", 13,
                     {ir::Attribute::of_int("select_last_index", last), ir::Attribute::of_int("axis", 1)});
    n.inputs = {floats(DataType::kFloat, {2, 4}, {1, nan, 3, nan, 2, 2, 1, 2})};
    expect_matches(n, 0, 0, "ArgMax NaN");
  }
}

}  // namespace
}  // namespace tessera::cuda_test
