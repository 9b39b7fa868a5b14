// The CUDA backend's data kernels (views, copies, gathers, scatters, pads, casts, comparisons, integer
// arithmetic) against the CPU's reference kernels. These kernels move or convert elements without
// float arithmetic (CumSum accumulates in double as the reference does), so outputs must be equal bit
// for bit. Each case asserts the node ran on the GPU. Every test skips, saying why, where no GPU is.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include "cuda_test_util.h"
#include "ir/builder.h"
#include "runtime/backend.h"
#include "runtime/backend_loader.h"
#include "runtime/half.h"
#include "runtime/session.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::Attribute;
using ir::DataType;
using ir::Dim;
using ir::Type;

namespace {

class CudaData : public cuda_test::CudaBackendTest {};

// A tensor of `t` whose element i is f(i) converted to the element type.
rt::Tensor make(DataType t, rt::Shape shape, const std::function<double(int64_t)>& f) {
  rt::Tensor out = rt::Tensor::zeros(t, std::move(shape));
  for (int64_t i = 0; i < out.numel(); ++i) {
    const double v = f(i);
    switch (t) {
      case DataType::kFloat:
        out.data<float>()[i] = static_cast<float>(v);
        break;
      case DataType::kDouble:
        out.data<double>()[i] = v;
        break;
      case DataType::kFloat16:
        out.data<rt::Float16>()[i] = rt::Float16(static_cast<float>(v));
        break;
      case DataType::kBFloat16:
        out.data<rt::BFloat16>()[i] = rt::BFloat16(static_cast<float>(v));
        break;
      // Integers through int64, so that negative values wrap into the unsigned types.
      case DataType::kInt8:
        out.data<int8_t>()[i] = static_cast<int8_t>(static_cast<int64_t>(v));
        break;
      case DataType::kUint8:
        out.data<uint8_t>()[i] = static_cast<uint8_t>(static_cast<int64_t>(v));
        break;
      case DataType::kInt16:
        out.data<int16_t>()[i] = static_cast<int16_t>(static_cast<int64_t>(v));
        break;
      case DataType::kUint16:
        out.data<uint16_t>()[i] = static_cast<uint16_t>(static_cast<int64_t>(v));
        break;
      case DataType::kInt32:
        out.data<int32_t>()[i] = static_cast<int32_t>(static_cast<int64_t>(v));
        break;
      case DataType::kUint32:
        out.data<uint32_t>()[i] = static_cast<uint32_t>(static_cast<int64_t>(v));
        break;
      case DataType::kInt64:
        out.data<int64_t>()[i] = static_cast<int64_t>(v);
        break;
      case DataType::kUint64:
        out.data<uint64_t>()[i] = static_cast<uint64_t>(static_cast<int64_t>(v));
        break;
      case DataType::kBool:
        out.data<bool>()[i] = v != 0;
        break;
      default:
        ADD_FAILURE() << "make: no filler for " << ir::dtype_name(t);
    }
  }
  return out;
}

// Pseudo-random values in [lo, hi): integers when `integral`.
rt::Tensor random(DataType t, rt::Shape shape, double lo, double hi, bool integral = false,
                  uint32_t seed = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  return make(t, std::move(shape), [&](int64_t) {
    double v = u(rng);
    return integral ? std::floor(v) : v;
  });
}

rt::Tensor ints(std::vector<int64_t> v) {
  rt::Shape s{static_cast<int64_t>(v.size())};
  return rt::Tensor::from_vector<int64_t>(DataType::kInt64, s, v);
}

struct Case {
  std::string op;
  std::vector<rt::Tensor> inputs;  // empty tensors (undefined) leave an optional input out
  std::vector<Attribute> attrs = {};
  size_t outputs = 1;
  int opset = 18;
};

std::string describe(const Case& c) {
  std::string s = c.op;
  s.append(" opset ").append(std::to_string(c.opset)).append(" inputs");
  for (const auto& t : c.inputs) {
    s.append(" ");
    if (!t.defined()) {
      s.append("-");
      continue;
    }
    s.append(ir::dtype_name(t.dtype())).append(rt::shape_str(t.shape()));
  }
  return s;
}

// Runs the one-node model of `c` on the GPU and with the reference kernels; expects equal outputs and
// the node on the GPU.
void expect_same(const Case& c) {
  SCOPED_TRACE(describe(c));
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", c.opset}};
  ir::GraphBuilder b(m.graph);
  std::vector<std::string> ins;
  std::vector<std::pair<std::string, rt::Value>> feeds;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const rt::Tensor& t = c.inputs[k];
    if (!t.defined()) {
      ins.emplace_back();
      continue;
    }
    ir::Shape s;
    for (int64_t d : t.shape()) s.push_back(Dim::of(d));
    std::string name = fmt::format("x{}", k);
    ins.push_back(b.input(name, Type::tensor(t.dtype(), s)));
    feeds.emplace_back(name, rt::Value(t));
  }
  auto outs = b.nodes(c.op, ins, c.attrs, "op", c.outputs);
  for (const auto& o : outs) b.output(o);
  // float32 precision: the kernels are compared in the element types the inputs have (float16 and
  // bfloat16 ones are fed as such), not lowered to float16 by the session.
  rt::Session gpu(m, {.optimization = rt::OptLevel::kNone,
                      .backend = "cuda",
                      .profile = true,
                      .precision = tessera::passes::Precision::kFp32});
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
  auto g = gpu.run(feeds);
  auto r = ref.run(feeds);
  bool on_gpu = false;
  for (const auto& ev : gpu.last_stats().events) on_gpu |= ev.node_name == "op" && ev.backend == "cuda";
  EXPECT_TRUE(on_gpu) << "did not run on the GPU";
  ASSERT_EQ(g.size(), r.size());
  for (size_t k = 0; k < g.size(); ++k) {
    const rt::Tensor& gt = g[k].tensor();
    const rt::Tensor& rt_ = r[k].tensor();
    ASSERT_EQ(gt.dtype(), rt_.dtype()) << "output " << k;
    ASSERT_EQ(gt.shape(), rt_.shape()) << "output " << k;
    if (gt.nbytes() == 0) continue;
    if (std::memcmp(gt.raw(), rt_.raw(), gt.nbytes()) == 0) continue;
    int shown = 0;
    for (int64_t i = 0; i < gt.numel() && shown < 5; ++i) {
      double a = gt.to_double(i), e = rt_.to_double(i);
      if (a == e || (std::isnan(a) && std::isnan(e))) continue;
      ++shown;
      ADD_FAILURE() << "output " << k << " element " << i << ": cuda " << a << ", reference " << e;
    }
    if (shown == 0 && gt.dtype() != DataType::kFloat && gt.dtype() != DataType::kFloat16 &&
        gt.dtype() != DataType::kBFloat16 && gt.dtype() != DataType::kDouble)
      ADD_FAILURE() << "output " << k << " differs in its bytes";
  }
}

rt::Tensor floats(rt::Shape s, uint32_t seed = 1) {
  return random(DataType::kFloat, std::move(s), -10, 10, false, seed);
}

const rt::Tensor kNone;

}  // namespace

TEST_F(CudaData, ViewsAndShapes) {
  rt::Tensor x = floats({2, 3, 4});
  expect_same({"Reshape", {x, ints({0, -1})}});
  expect_same({"Reshape", {x, ints({4, 0, 2})}, {Attribute::of_int("allowzero", 0)}});
  expect_same({"Reshape", {floats({0, 3}), ints({3, 0})}, {Attribute::of_int("allowzero", 1)}});
  expect_same({"Flatten", {x}, {Attribute::of_int("axis", -1)}});
  expect_same({"Flatten", {x}, {Attribute::of_int("axis", 0)}});
  rt::Tensor ones = floats({1, 3, 1, 5});
  expect_same({"Squeeze", {ones, ints({-2})}});
  expect_same({"Squeeze", {ones}});
  expect_same({"Squeeze", {ones}, {Attribute::of_ints("axes", {0})}, 1, 11});
  expect_same({"Unsqueeze", {x, ints({0, -1})}});
  expect_same({"Unsqueeze", {x}, {Attribute::of_ints("axes", {1})}, 1, 11});
  expect_same({"Identity", {x}});
  expect_same({"Shape", {x}});
  expect_same({"Shape", {x}, {Attribute::of_int("start", 1), Attribute::of_int("end", -1)}});
  expect_same({"Size", {x}});
  expect_same({"Constant", {}, {Attribute::of_tensor("value", floats({3, 4}).to_ir())}});
  expect_same({"Constant", {}, {Attribute::of_ints("value_ints", {3, -1, 7})}});
  expect_same({"Constant", {}, {Attribute::of_float("value_float", 2.5f)}});
}

TEST_F(CudaData, TransposeEveryElementSize) {
  for (DataType t :
       {DataType::kFloat, DataType::kFloat16, DataType::kInt64, DataType::kBool, DataType::kInt8}) {
    rt::Tensor x = random(t, {3, 17, 33, 5}, -50, 50, true);
    expect_same({"Transpose", {x}, {Attribute::of_ints("perm", {0, 2, 1, 3})}});
    expect_same({"Transpose", {x}});  // reversed axes
    // The tiled path: batches of 2-D transposes (K^T, NCHW <-> NHWC, swapped halves).
    for (std::vector<int64_t> perm :
         std::vector<std::vector<int64_t>>{{0, 1, 3, 2}, {0, 2, 3, 1}, {0, 3, 1, 2}, {2, 3, 0, 1}})
      expect_same({"Transpose", {x}, {Attribute::of_ints("perm", perm)}});
  }
  // Attention's K^T at sizes that are not multiples of the tile, and a large 2-D one.
  expect_same({"Transpose", {floats({4, 129, 67})}, {Attribute::of_ints("perm", {0, 2, 1})}});
  expect_same({"Transpose", {floats({1000, 333})}});
  // Rows that move as 16-, 8- and 4-byte words (attention's head split), and 64 x 64 tiles of float16.
  rt::Tensor h = random(DataType::kFloat16, {4, 50, 12, 64}, -50, 50);
  expect_same({"Transpose", {h}, {Attribute::of_ints("perm", {0, 2, 1, 3})}});
  expect_same({"Transpose", {floats({197, 8, 96})}, {Attribute::of_ints("perm", {1, 0, 2})}});
  expect_same({"Transpose", {floats({5, 7, 6})}, {Attribute::of_ints("perm", {1, 0, 2})}});
  expect_same({"Transpose",
               {random(DataType::kFloat16, {3, 130, 70}, -50, 50)},
               {Attribute::of_ints("perm", {0, 2, 1})}});
  expect_same({"Transpose",
               {random(DataType::kInt8, {2, 200, 65}, -50, 50, true)},
               {Attribute::of_ints("perm", {0, 2, 1})}});
  expect_same({"Transpose",
               {floats({2, 3, 4, 5, 6, 7, 2, 3})},
               {Attribute::of_ints("perm", {7, 6, 5, 4, 3, 2, 1, 0})}});
}

TEST_F(CudaData, ExpandTileConcatSplit) {
  expect_same({"Expand", {floats({3, 1}), ints({2, 3, 5})}});
  expect_same({"Expand", {floats({1, 257}), ints({513, 1})}});
  expect_same({"Tile", {floats({2, 3, 4}), ints({2, 1, 3})}});
  expect_same({"Tile", {random(DataType::kInt64, {5}, 0, 9, true), ints({0})}});
  expect_same({"Concat",
               {floats({2, 3, 4}), floats({2, 5, 4}, 2), floats({2, 1, 4}, 3)},
               {Attribute::of_int("axis", 1)}});
  expect_same(
      {"Concat", {floats({300, 7}), floats({300, 0}), floats({300, 129})}, {Attribute::of_int("axis", -1)}});
  rt::Tensor x = random(DataType::kFloat16, {4, 10, 3}, -5, 5);
  expect_same({"Split", {x, ints({2, 5, 3})}, {Attribute::of_int("axis", 1)}, 3});
  expect_same({"Split", {x}, {Attribute::of_int("axis", 1), Attribute::of_int("num_outputs", 3)}, 3});
  expect_same({"Split", {x}, {Attribute::of_int("axis", 0)}, 2, 13});
  expect_same({"Split", {x}, {Attribute::of_int("axis", 1), Attribute::of_ints("split", {4, 6})}, 2, 11});
}

TEST_F(CudaData, SliceAllVersionsAndNegativeSteps) {
  rt::Tensor x = floats({20, 10, 35});
  expect_same({"Slice", {x, ints({1, -1}), ints({1000, -30}), ints({0, 2}), ints({3, -2})}});
  expect_same({"Slice", {x, ints({-1}), ints({-1000}), ints({1}), ints({-1})}});
  expect_same({"Slice", {x, ints({2, 0}), ints({5, 7})}});
  expect_same(
      {"Slice",
       {random(DataType::kInt8, {9, 9}, -100, 100, true), ints({8}), ints({0}), ints({-1}), ints({-3})}});
  expect_same(
      {"Slice",
       {x},
       {Attribute::of_ints("starts", {1}), Attribute::of_ints("ends", {4}), Attribute::of_ints("axes", {2})},
       1,
       9});
}

TEST_F(CudaData, GatherFamily) {
  rt::Tensor data = floats({50, 40, 30});
  rt::Tensor i64 = random(DataType::kInt64, {7, 3}, -50, 50, true);
  rt::Tensor i32 = random(DataType::kInt32, {11}, -40, 40, true);
  expect_same({"Gather", {data, i64}});
  expect_same({"Gather", {data, i32}, {Attribute::of_int("axis", 1)}});
  expect_same(
      {"Gather", {data, rt::Tensor::scalar<int64_t>(DataType::kInt64, -1)}, {Attribute::of_int("axis", -1)}});
  expect_same({"Gather", {random(DataType::kBool, {9, 4}, 0, 2, true), ints({3, 0, 8})}});
  // Compress along an axis, flattened, with a condition shorter than the axis and one keeping nothing.
  rt::Tensor cond = random(DataType::kBool, {40}, 0, 2, true, 17);
  expect_same({"Compress", {data, cond}, {Attribute::of_int("axis", 1)}});
  expect_same({"Compress", {data, random(DataType::kBool, {5000}, 0, 2, true, 18)}});
  expect_same(
      {"Compress", {data, random(DataType::kBool, {7}, 0, 2, true, 19)}, {Attribute::of_int("axis", -1)}});
  expect_same({"Compress",
               {data, make(DataType::kBool, {3}, [](int64_t) { return 0.0; })},
               {Attribute::of_int("axis", 0)}});
  // Rows moved as 16-byte words (embedding lookups).
  expect_same({"Gather", {random(DataType::kFloat16, {100, 768}, -5, 5), ints({3, 99, -1, 0, 42})}});
  rt::Tensor ge_idx = random(DataType::kInt64, {50, 17, 30}, -40, 40, true);
  expect_same({"GatherElements", {data, ge_idx}, {Attribute::of_int("axis", 1)}});
  expect_same({"GatherElements",
               {data, random(DataType::kInt32, {20, 40, 30}, 0, 30, true)},
               {Attribute::of_int("axis", 2)}});
  rt::Tensor nd = random(DataType::kInt64, {6, 2}, -30, 30, true);
  expect_same({"GatherND", {data, nd}});
  rt::Tensor nd_b = random(DataType::kInt64, {50, 4, 1}, 0, 40, true);
  expect_same({"GatherND", {data, nd_b}, {Attribute::of_int("batch_dims", 1)}});
}

TEST_F(CudaData, ScatterReductions) {
  rt::Tensor data = random(DataType::kFloat, {40, 30}, -4, 4, true);
  // Distinct indices per column for 'none' (the spec leaves duplicates' winner open), duplicates for
  // the reductions.
  rt::Tensor perm =
      make(DataType::kInt64, {20, 30}, [](int64_t i) { return (i / 30) * 2 - 40 * ((i / 30) % 2); });
  rt::Tensor dup = random(DataType::kInt64, {25, 30}, -40, 40, true, 3);
  rt::Tensor upd20 = random(DataType::kFloat, {20, 30}, -4, 4, true, 4);
  rt::Tensor upd25 = random(DataType::kFloat, {25, 30}, 1, 3, true, 5);  // products stay exact
  expect_same({"ScatterElements", {data, perm, upd20}});
  for (const char* r : {"add", "mul", "max", "min"})
    expect_same({"ScatterElements", {data, dup, upd25}, {Attribute::of_string("reduction", r)}});
  rt::Tensor h = random(DataType::kFloat16, {40, 30}, -4, 4, true);
  expect_same({"ScatterElements",
               {h, dup, random(DataType::kFloat16, {25, 30}, -3, 3, true)},
               {Attribute::of_string("reduction", "add")}});
  rt::Tensor i64 = random(DataType::kInt64, {40, 30}, -100, 100, true);
  expect_same({"ScatterElements",
               {i64, dup, random(DataType::kInt64, {25, 30}, -9, 9, true)},
               {Attribute::of_string("reduction", "max")}});
  expect_same(
      {"ScatterElements",
       {random(DataType::kInt8, {40, 30}, -9, 9, true), dup, random(DataType::kInt8, {25, 30}, -3, 3, true)},
       {Attribute::of_string("reduction", "add")}});
  // ScatterND: rows by distinct indices, then duplicates added.
  rt::Tensor rows2 = rt::Tensor::from_vector<int64_t>(DataType::kInt64, {4, 1}, {3, 0, -1, 17});
  expect_same({"ScatterND", {data, rows2, random(DataType::kFloat, {4, 30}, -9, 9, true)}});
  rt::Tensor dup2 =
      rt::Tensor::from_vector<int64_t>(DataType::kInt64, {5, 2}, {1, 2, 1, 2, 39, 29, 0, 0, 1, 2});
  expect_same({"ScatterND",
               {data, dup2, random(DataType::kFloat, {5}, -9, 9, true)},
               {Attribute::of_string("reduction", "add")}});
  expect_same({"ScatterND",
               {data, dup2, random(DataType::kFloat, {5}, 1, 3, true)},
               {Attribute::of_string("reduction", "mul")}});
}

TEST_F(CudaData, PadModes) {
  rt::Tensor x = floats({3, 20, 30});
  rt::Tensor pads = ints({0, 3, 2, 1, 4, 5});
  for (const char* mode : {"constant", "reflect", "edge", "wrap"})
    expect_same({"Pad", {x, pads}, {Attribute::of_string("mode", mode)}, 1, 19});
  expect_same({"Pad", {x, pads, rt::Tensor::scalar<float>(DataType::kFloat, 2.5f)}});
  expect_same({"Pad", {x, ints({-1, -2, 3, 0, 4, -6})}});
  expect_same({"Pad", {x, ints({1, 2}), kNone, ints({-1})}, {Attribute::of_string("mode", "reflect")}});
  expect_same({"Pad",
               {random(DataType::kInt64, {5, 6}, -9, 9, true), ints({1, 2, 3, 4}),
                rt::Tensor::scalar<int64_t>(DataType::kInt64, -7)}});
  expect_same({"Pad",
               {x},
               {Attribute::of_ints("pads", {0, 1, 1, 0, 2, 2}), Attribute::of_float("value", 1.5f)},
               1,
               2});
}

TEST_F(CudaData, WhereTriluEyeOneHotConstantCumSum) {
  rt::Tensor cond = random(DataType::kBool, {4, 1, 30}, 0, 2, true);
  expect_same({"Where", {cond, floats({20, 1}), floats({4, 20, 30}, 3)}});
  expect_same(
      {"Where",
       {random(DataType::kBool, {100000}, 0, 2, true), random(DataType::kInt64, {100000}, -9, 9, true),
        random(DataType::kInt64, {1}, -9, 9, true)}});
  rt::Tensor m = floats({3, 17, 23});
  for (int64_t k : {-2, 0, 5})
    for (int64_t upper : {0, 1})
      expect_same({"Trilu",
                   {m, rt::Tensor::scalar<int64_t>(DataType::kInt64, k)},
                   {Attribute::of_int("upper", upper)}});
  expect_same({"Trilu", {m}});
  expect_same({"EyeLike", {floats({7, 9})}, {Attribute::of_int("k", 2)}});
  expect_same({"EyeLike", {floats({7, 9})}, {Attribute::of_int("k", -3), Attribute::of_int("dtype", 7)}});
  expect_same(
      {"OneHot",
       {random(DataType::kInt64, {5, 7}, -12, 12, true), rt::Tensor::scalar<int64_t>(DataType::kInt64, 10),
        rt::Tensor::from_vector<float>(DataType::kFloat, {2}, {-1.0f, 3.0f})},
       {Attribute::of_int("axis", 1)}});
  expect_same({"OneHot",
               {random(DataType::kInt32, {6}, 0, 4, true), rt::Tensor::scalar<float>(DataType::kFloat, 4.0f),
                rt::Tensor::from_vector<int64_t>(DataType::kInt64, {2}, {0, 1})}});
  rt::Tensor float_idx = make(DataType::kFloat, {7}, [](int64_t i) {
    const double v[] = {1.7, -2.2, 9.9, 10.5, -11, std::numeric_limits<double>::quiet_NaN(), 0};
    return v[i];
  });
  expect_same({"OneHot",
               {float_idx, rt::Tensor::scalar<float>(DataType::kFloat, 10.0f),
                rt::Tensor::from_vector<float>(DataType::kFloat, {2}, {0.0f, 1.0f})}});
  expect_same({"ConstantOfShape", {ints({3, 4, 5})}});
  ir::Tensor seven = rt::Tensor::from_vector<int64_t>(DataType::kInt64, {1}, {7}).to_ir();
  expect_same({"ConstantOfShape", {ints({2, 7, 5})}, {Attribute::of_tensor("value", seven)}});
  expect_same({"ConstantOfShape", {ints({2, 0, 5})}});
  rt::Tensor a1 = rt::Tensor::scalar<int64_t>(DataType::kInt64, 1);
  for (DataType t :
       {DataType::kFloat, DataType::kFloat16, DataType::kInt64, DataType::kInt32, DataType::kDouble})
    for (int64_t exclusive : {0, 1})
      for (int64_t reverse : {0, 1})
        expect_same({"CumSum",
                     {random(t, {6, 301, 5}, -20, 20, true), a1},
                     {Attribute::of_int("exclusive", exclusive), Attribute::of_int("reverse", reverse)}});
  // CumProd (26) over values near 1 so that float products stay in range; integers wrap.
  for (DataType t : {DataType::kFloat, DataType::kFloat16, DataType::kInt64, DataType::kUint32})
    for (int64_t reverse : {0, 1})
      expect_same({"CumProd",
                   {random(t, {4, 37, 3}, -2, 3, true), rt::Tensor::scalar<int32_t>(DataType::kInt32, -2)},
                   {Attribute::of_int("exclusive", 1), Attribute::of_int("reverse", reverse)},
                   1,
                   26});
}

TEST_F(CudaData, CastBetweenEveryPair) {
  const std::vector<DataType> types = {
      DataType::kFloat, DataType::kFloat16, DataType::kBFloat16, DataType::kDouble, DataType::kInt8,
      DataType::kUint8, DataType::kInt16,   DataType::kInt32,    DataType::kInt64,  DataType::kBool};
  // Fractions both ways, values past the small integer types, halves (rounding), and for floats the
  // specials.
  std::vector<double> v = {0,      -0.0,  0.5,   -0.5, 1.5,  2.5,  -2.5,  1.9999,  -7.75,
                           100,    127,   128,   -129, 255,  256,  300.7, 32767.5, 40000,
                           -40000, 65504, 70000, 1e9,  -3e9, 1e20, -1e20};
  for (int i = 0; i < 2000; ++i) v.push_back(std::sin(i * 0.37) * std::pow(10.0, i % 12 - 3));
  const double inf = std::numeric_limits<double>::infinity();
  for (DataType from : types) {
    std::vector<double> vals = v;
    if (from == DataType::kFloat || from == DataType::kDouble || from == DataType::kFloat16 ||
        from == DataType::kBFloat16)
      vals.insert(vals.end(), {inf, -inf, std::numeric_limits<double>::quiet_NaN()});
    rt::Tensor x = make(from, {static_cast<int64_t>(vals.size())}, [&](int64_t i) {
      // Integer sources get integer values within their range (the conversion to them is the C one).
      double d = vals[static_cast<size_t>(i)];
      if (from == DataType::kInt8) return std::fmod(std::trunc(d), 128.0);
      if (from == DataType::kUint8) return std::fmod(std::fabs(std::trunc(d)), 256.0);
      if (from == DataType::kInt16) return std::fmod(std::trunc(d), 32768.0);
      if (from == DataType::kInt32) return std::fmod(std::trunc(d), 2147483648.0);
      if (from == DataType::kInt64) return std::fmod(std::trunc(d), 9.0e18);
      return d;
    });
    for (DataType to : types) {
      expect_same({"Cast", {x}, {Attribute::of_int("to", static_cast<int64_t>(to))}});
    }
    expect_same({"CastLike", {x, make(DataType::kFloat16, {1}, [](int64_t) { return 0.0; })}});
  }
}

TEST_F(CudaData, ComparisonsAndLogic) {
  for (DataType t :
       {DataType::kFloat, DataType::kFloat16, DataType::kInt64, DataType::kInt32, DataType::kDouble}) {
    rt::Tensor a = random(t, {30, 1, 40}, -5, 5, true, 1), b = random(t, {7, 40}, -5, 5, true, 2);
    for (const char* op : {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"})
      expect_same({op, {a, b}});
  }
  rt::Tensor p = random(DataType::kBool, {100, 1001}, 0, 2, true, 1),
             q = random(DataType::kBool, {1001}, 0, 2, true, 2);
  for (const char* op : {"And", "Or", "Xor", "Equal"}) expect_same({op, {p, q}});
  expect_same({"Not", {p}});
  rt::Tensor s = make(DataType::kFloat, {6}, [](int64_t i) {
    const double v[] = {1,
                        std::numeric_limits<double>::infinity(),
                        -std::numeric_limits<double>::infinity(),
                        std::numeric_limits<double>::quiet_NaN(),
                        -0.0,
                        1e38};
    return v[i];
  });
  expect_same({"IsNaN", {s}});
  expect_same({"IsInf", {s}});
  expect_same({"IsInf", {s}, {Attribute::of_int("detect_negative", 0)}});
  expect_same({"IsInf", {s}, {Attribute::of_int("detect_positive", 0)}});
}

TEST_F(CudaData, IntegerArithmetic) {
  for (DataType t : {DataType::kInt64, DataType::kInt32, DataType::kInt8}) {
    rt::Tensor a = random(t, {20, 1, 30}, -100, 100, true, 1);
    // Divisors without 0 (the reference fails on an integer division by zero).
    rt::Tensor b = make(t, {7, 30}, [](int64_t i) { return ((i * 37) % 23 - 11) | 1; });
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min", "BitwiseAnd", "BitwiseOr", "BitwiseXor"})
      expect_same({op, {a, b}});
    expect_same({"Mod", {a, b}});
    expect_same({"Mod", {a, b}, {Attribute::of_int("fmod", 1)}});
    expect_same({"BitwiseNot", {a}});
  }
  rt::Tensor u = random(DataType::kUint8, {300}, 0, 255, true, 1),
             by = random(DataType::kUint8, {300}, 0, 10, true, 2);
  expect_same({"BitShift", {u, by}, {Attribute::of_string("direction", "LEFT")}});
  expect_same({"BitShift", {u, by}, {Attribute::of_string("direction", "RIGHT")}});
}

TEST_F(CudaData, UnsignedTypesBitShiftAndIntegerClip) {
  for (DataType t : {DataType::kUint16, DataType::kUint32, DataType::kUint64, DataType::kUint8}) {
    rt::Tensor a = random(t, {20, 1, 30}, 0, 250, true, 1);
    rt::Tensor b = random(t, {7, 30}, 1, 100, true, 2);
    for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Mod", "BitwiseAnd",
                           "BitwiseXor", "Add", "Sub", "Mul", "Div"})
      expect_same({op, {a, b}});
  }
  for (DataType t : {DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kInt64, DataType::kUint16,
                     DataType::kUint64}) {
    // Shifts past the width and negative ones are defined as the spec's tests do.
    rt::Tensor x = random(t, {500}, -120, 120, true, 3), by = random(t, {500}, -3, 70, true, 4);
    expect_same({"BitShift", {x, by}, {Attribute::of_string("direction", "LEFT")}, 1, 28});
    expect_same({"BitShift", {x, by}, {Attribute::of_string("direction", "RIGHT")}, 1, 28});
  }
  for (DataType t : {DataType::kInt8, DataType::kInt64, DataType::kUint32}) {
    rt::Tensor x = random(t, {1000}, 0, 120, true, 5);
    rt::Tensor lo = make(t, {}, [](int64_t) { return 17; }), hi = make(t, {}, [](int64_t) { return 90; });
    expect_same({"Clip", {x, lo, hi}});
    expect_same({"Clip", {x, rt::Tensor(), hi}});
    expect_same({"Clip", {x, lo}});
    expect_same({"Clip", {x}});
  }
}

TEST_F(CudaData, RangeDepthSpaceDropout) {
  auto scalar = [](DataType t, double v) { return make(t, {}, [v](int64_t) { return v; }); };
  for (DataType t : {DataType::kFloat, DataType::kDouble}) {  // Range's float types
    expect_same({"Range", {scalar(t, 1.5), scalar(t, 97.25), scalar(t, 0.375)}});
    expect_same({"Range", {scalar(t, 10), scalar(t, -3), scalar(t, -0.7)}});
    expect_same({"Range", {scalar(t, 0), scalar(t, -3), scalar(t, 1)}});  // empty
  }
  for (DataType t : {DataType::kInt32, DataType::kInt64, DataType::kInt16}) {
    expect_same({"Range", {scalar(t, -7), scalar(t, 20000), scalar(t, 3)}});
    expect_same({"Range", {scalar(t, 10), scalar(t, -30), scalar(t, -4)}});
  }
  rt::Tensor x = floats({2, 18, 5, 7});
  expect_same({"DepthToSpace", {x}, {Attribute::of_int("blocksize", 3)}});
  expect_same(
      {"DepthToSpace", {x}, {Attribute::of_int("blocksize", 3), Attribute::of_string("mode", "CRD")}});
  rt::Tensor s = random(DataType::kInt64, {2, 3, 12, 8}, -50, 50, true);
  expect_same({"SpaceToDepth", {s}, {Attribute::of_int("blocksize", 4)}, 1, 13});
  expect_same({"Dropout", {x}, {}, 2, 13});
  expect_same({"Dropout", {x, rt::Tensor::scalar<float>(DataType::kFloat, 0.3f)}, {}, 1, 13});
}

TEST_F(CudaData, CenterCropPadReverseSequenceBitCastScatter) {
  rt::Tensor x = floats({7, 10, 9});
  expect_same({"CenterCropPad", {x, ints({4, 13, 9})}});
  expect_same({"CenterCropPad", {x, ints({12, 3})}, {Attribute::of_ints("axes", {0, -1})}});
  rt::Tensor seq = random(DataType::kInt32, {6, 5, 3}, -50, 50, true);
  expect_same({"ReverseSequence",
               {seq, ints({6, 0, 3, 1, 5})},
               {Attribute::of_int("batch_axis", 1), Attribute::of_int("time_axis", 0)}});
  expect_same({"ReverseSequence",
               {seq, ints({1, 5, 2, 4, 3, 0})},
               {Attribute::of_int("batch_axis", 0), Attribute::of_int("time_axis", 1)}});
  expect_same({"BitCast",
               {floats({3, 5})},
               {Attribute::of_int("to", static_cast<int64_t>(DataType::kInt32))},
               1,
               26});
  expect_same({"BitCast",
               {random(DataType::kUint8, {40}, 0, 4, true)},
               {Attribute::of_int("to", static_cast<int64_t>(DataType::kBool))},
               1,
               26});
  rt::Tensor data = floats({6, 8});
  rt::Tensor idx = rt::Tensor::from_vector<int64_t>(DataType::kInt64, {1, 3}, {5, -6, 2});
  expect_same({"Scatter", {data, idx, floats({1, 3}, 9)}, {}, 1, 10});
}

TEST_F(CudaData, CosineSumWindows) {
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"})
    for (int64_t size : {0, 1, 10, 1001})
      for (int64_t periodic : {0, 1})
        for (DataType t : {DataType::kFloat, DataType::kFloat16})  // float64 would see cos's last bit
          expect_same({op,
                       {rt::Tensor::scalar<int64_t>(DataType::kInt64, size)},
                       {Attribute::of_int("periodic", periodic),
                        Attribute::of_int("output_datatype", static_cast<int64_t>(t))},
                       1,
                       17});
}

TEST_F(CudaData, PowWithMixedTypes) {
  // Small integer bases and exponents: every result is exact in each type, so both sides agree bit for bit.
  rt::Tensor fbase = random(DataType::kFloat, {4, 50}, -6, 6, true, 1);
  rt::Tensor ibase32 = random(DataType::kInt32, {4, 50}, -6, 6, true, 2);
  // No 0 base: the reference fails on 0 to a negative integer power.
  rt::Tensor ibase64 = make(DataType::kInt64, {4, 50}, [](int64_t i) {
    return (i % 2 ? 1.0 : -1.0) * static_cast<double>(1 + (i * 7) % 40);
  });
  for (DataType e : {DataType::kInt32, DataType::kInt64, DataType::kUint32, DataType::kInt8}) {
    rt::Tensor ex = random(e, {50}, 0, 7, true, 4);
    expect_same({"Pow", {fbase, ex}});
    expect_same({"Pow", {ibase32, ex}});
  }
  expect_same({"Pow", {ibase32, random(DataType::kFloat, {50}, 0, 7, true, 7)}});
  // Wrapping and negative exponents of integers.
  expect_same({"Pow", {ibase64, random(DataType::kInt64, {4, 50}, -3, 30, true, 5)}});
  expect_same(
      {"Pow",
       {random(DataType::kDouble, {300}, -3, 3, true, 6), random(DataType::kDouble, {300}, 0, 5, true)}});
}

TEST_F(CudaData, DoubleMaxMinMod) {
  rt::Tensor a = random(DataType::kDouble, {30, 1, 20}, -50, 50, false, 1);
  rt::Tensor b = make(DataType::kDouble, {7, 20}, [](int64_t i) {
    return i == 3 ? std::numeric_limits<double>::quiet_NaN() : ((i * 37) % 23 - 11.5) * 0.75;
  });
  for (const char* op : {"Max", "Min", "Add", "Sub", "Mul", "Div"}) expect_same({op, {a, b}});
  expect_same({"Mod", {a, b}, {Attribute::of_int("fmod", 1)}});
  expect_same({"Mod", {a, b}, {}, 1, 28});  // fmod=0 on floats from 28
}

TEST_F(CudaData, CastToAndFromFloat8) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {0,
                           -0.0,
                           inf,
                           -inf,
                           std::numeric_limits<double>::quiet_NaN(),
                           1e6,
                           -1e6,
                           448,
                           449,
                           464,
                           57344,
                           61440,
                           1e-9,
                           -1e-9,
                           0.0009765625,
                           0.00048828125};
  for (int i = 0; i < 3000; ++i) v.push_back(std::sin(i * 0.61) * std::pow(2.0, i % 40 - 24));
  const int64_t n = static_cast<int64_t>(v.size());
  const DataType f8[] = {DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
                         DataType::kFloat8E5M2FNUZ};
  for (DataType from : {DataType::kFloat, DataType::kFloat16, DataType::kDouble}) {
    rt::Tensor x = make(from, {n}, [&](int64_t i) { return v[static_cast<size_t>(i)]; });
    for (DataType to : f8)
      for (int64_t saturate : {0, 1})
        expect_same(
            {"Cast",
             {x},
             {Attribute::of_int("to", static_cast<int64_t>(to)), Attribute::of_int("saturate", saturate)},
             1,
             19});
  }
  for (DataType from : f8) {
    rt::Tensor codes = rt::Tensor::zeros(from, {256});
    for (int i = 0; i < 256; ++i) static_cast<uint8_t*>(codes.raw())[i] = static_cast<uint8_t>(i);
    for (DataType to : {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16, DataType::kDouble})
      expect_same({"Cast", {codes}, {Attribute::of_int("to", static_cast<int64_t>(to))}, 1, 19});
  }
}

// Casts to and from the small types: the packed 4- and 2-bit integers and float4e2m1 (odd lengths, so
// the last byte is half used), float8e8m0 with its rounding modes, and pairs of small types.
TEST_F(CudaData, CastToAndFromSmallTypes) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {0,    -0.0, inf, -inf, std::numeric_limits<double>::quiet_NaN(),
                           0.5,  -0.5, 1.5, -2.5, 7,
                           8,    -8,   -9,  15,   16,
                           1e6,  -1e6, 6,   6.5,  1e-40,
                           3e38, 1e300};
  for (int i = 0; i < 4097; ++i) v.push_back(std::sin(i * 0.37) * std::pow(2.0, i % 12 - 4));
  const int64_t n = static_cast<int64_t>(v.size());  // odd
  const DataType small[] = {DataType::kInt4,  DataType::kUint4,      DataType::kInt2,
                            DataType::kUint2, DataType::kFloat4E2M1, DataType::kFloat8E8M0};
  auto cast = [](rt::Tensor x, DataType to, std::vector<Attribute> extra = {}) {
    extra.push_back(Attribute::of_int("to", static_cast<int64_t>(to)));
    return Case{"Cast", {std::move(x)}, std::move(extra), 1, 25};
  };
  for (DataType from :
       {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16, DataType::kDouble, DataType::kInt8,
        DataType::kUint8, DataType::kInt32, DataType::kInt64, DataType::kUint64, DataType::kBool}) {
    const bool is_int = from != DataType::kFloat && from != DataType::kFloat16 &&
                        from != DataType::kBFloat16 && from != DataType::kDouble;
    rt::Tensor x = make(from, {n}, [&](int64_t i) {
      double d = v[static_cast<size_t>(i)];
      if (!is_int) return d;
      if (!std::isfinite(d)) return 3.0;
      return std::fmod(std::trunc(d * 3), 100.0);
    });
    for (DataType to : small) expect_same(cast(x, to));
    for (const char* mode : {"up", "down", "nearest"})
      for (int64_t sat : {0, 1})
        expect_same(cast(x, DataType::kFloat8E8M0,
                         {Attribute::of_string("round_mode", mode), Attribute::of_int("saturate", sat)}));
  }
  // Every code of each small type (two or four to a byte), to numbers and to the other small types.
  for (DataType from : small) {
    const int bits = ir::dtype_bits(from);
    const int64_t count = (int64_t{1} << bits) * 3 + 1;  // odd
    rt::Tensor codes = rt::Tensor::zeros(from, {count});
    auto* p = static_cast<uint8_t*>(codes.raw());
    for (int64_t i = 0; i < count; ++i) {
      const int per = 8 / bits;
      const uint8_t c = static_cast<uint8_t>((i * 7) % (1 << bits));
      p[i / per] |= static_cast<uint8_t>(c << ((i % per) * bits));
    }
    for (DataType to : {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16, DataType::kDouble,
                        DataType::kInt8, DataType::kUint8, DataType::kInt64, DataType::kBool})
      expect_same(cast(codes, to));
    for (DataType to : small) expect_same(cast(codes, to));
    expect_same(cast(codes, DataType::kFloat8E4M3FN));
    expect_same({"CastLike", {codes, rt::Tensor::zeros(DataType::kFloat, {1})}, {}, 1, 25});
  }
}

namespace {

// A tensor of `t` whose storage bytes are pseudo-random (codes of a quantized type; packed types get
// two or four codes per byte).
rt::Tensor codes(DataType t, rt::Shape shape, uint32_t seed) {
  rt::Tensor out = rt::Tensor::zeros(t, std::move(shape));
  std::mt19937 rng(seed);
  auto* p = static_cast<uint8_t*>(out.raw());
  for (size_t i = 0; i < out.nbytes(); ++i) p[i] = static_cast<uint8_t>(rng());
  return out;
}

}  // namespace

// QuantizeLinear and DequantizeLinear for every quantized type, per tensor, per axis and per block,
// from float32, float16 and int32 inputs (with NaN and infinities, which round to the zero point or
// clamp), checked bit for bit: the GPU does the reference's float arithmetic in the same order.
TEST_F(CudaData, QuantizeAndDequantizeEveryType) {
  const double inf = std::numeric_limits<double>::infinity();
  rt::Tensor x = random(DataType::kFloat, {6, 8, 301}, -300, 300, false, 3);
  x.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
  x.data<float>()[1] = static_cast<float>(inf);
  x.data<float>()[2] = static_cast<float>(-inf);
  x.data<float>()[3] = 2.5f;
  rt::Tensor xh = random(DataType::kFloat16, {6, 8, 301}, -300, 300, false, 4);
  rt::Tensor xi = random(DataType::kInt32, {6, 8, 301}, -3000, 3000, true, 5);
  rt::Tensor scalar_scale = make(DataType::kFloat, {}, [](int64_t) { return 2.0; });
  rt::Tensor axis_scale = random(DataType::kFloat, {8}, 0.5, 40, false, 6);
  rt::Tensor block_scale = random(DataType::kFloat, {6, 2, 301}, 0.5, 40, false, 7);  // blocks of 5 on axis 1
  const DataType types[] = {DataType::kInt8,           DataType::kUint8,      DataType::kInt16,
                            DataType::kUint16,         DataType::kInt4,       DataType::kUint4,
                            DataType::kInt2,           DataType::kUint2,      DataType::kFloat8E4M3FN,
                            DataType::kFloat8E5M2FNUZ, DataType::kFloat4E2M1, DataType::kFloat8E8M0};
  const Attribute axis1 = Attribute::of_int("axis", 1);
  uint32_t seed = 100;
  for (DataType t : types) {
    SCOPED_TRACE(ir::dtype_name(t));
    const bool with_zp = t != DataType::kFloat8E8M0;  // e8m0 has no zero
    auto zp = [&](rt::Shape s) { return with_zp ? codes(t, std::move(s), seed++) : kNone; };
    const std::vector<Attribute> out_type = {Attribute::of_int("output_dtype", static_cast<int64_t>(t))};
    for (int64_t sat : {0, 1}) {
      std::vector<Attribute> attrs = out_type;
      attrs.push_back(Attribute::of_int("saturate", sat));
      expect_same({"QuantizeLinear", {x, scalar_scale, zp({})}, attrs, 1, 25});
    }
    std::vector<Attribute> per_axis = out_type;
    per_axis.push_back(axis1);
    expect_same({"QuantizeLinear", {x, axis_scale, zp({8})}, per_axis, 1, 25});
    std::vector<Attribute> blocked = per_axis;
    blocked.push_back(Attribute::of_int("block_size", 5));
    expect_same({"QuantizeLinear", {x, block_scale, zp({6, 2, 301})}, blocked, 1, 25});
    rt::Tensor q = codes(t, {6, 8, 301}, seed++);
    expect_same({"DequantizeLinear", {q, scalar_scale, zp({})}, {}, 1, 25});
    expect_same({"DequantizeLinear", {q, axis_scale, zp({8})}, {axis1}, 1, 25});
    expect_same({"DequantizeLinear",
                 {q, block_scale, zp({6, 2, 301})},
                 {axis1, Attribute::of_int("block_size", 5)},
                 1,
                 25});
  }
  // float16 and int32 inputs, float16 scales and outputs, and the opset 13 forms.
  rt::Tensor half_scale = random(DataType::kFloat16, {8}, 0.5, 40, false, 8);
  expect_same({"QuantizeLinear", {xh, half_scale, codes(DataType::kInt8, {8}, 9)}, {axis1}, 1, 25});
  expect_same({"QuantizeLinear", {xi, axis_scale, codes(DataType::kUint8, {8}, 10)}, {axis1}, 1, 25});
  expect_same({"QuantizeLinear", {x, axis_scale, codes(DataType::kUint8, {8}, 11)}, {axis1}, 1, 13});
  rt::Tensor q8 = codes(DataType::kInt8, {6, 8, 301}, 12);
  expect_same({"DequantizeLinear", {q8, half_scale, codes(DataType::kInt8, {8}, 13)}, {axis1}, 1, 25});
  expect_same({"DequantizeLinear",
               {q8, axis_scale, codes(DataType::kInt8, {8}, 14)},
               {axis1, Attribute::of_int("output_dtype", static_cast<int64_t>(DataType::kFloat16))},
               1,
               25});
  expect_same({"DequantizeLinear", {q8, axis_scale, codes(DataType::kInt8, {8}, 15)}, {axis1}, 1, 13});
  expect_same(
      {"DequantizeLinear", {random(DataType::kInt32, {1000}, -1e6, 1e6, true), scalar_scale}, {}, 1, 25});
}

// Resize in every mode, coordinate transformation, nearest rounding, roi, axes and aspect-ratio policy,
// enlarging and shrinking by scales that do not divide evenly, bit for bit: the GPU sums the same taps
// with the same weights in float64, in the same order.
TEST_F(CudaData, ResizeEveryMode) {
  rt::Tensor x = floats({2, 3, 17, 23}, 21);
  rt::Tensor xh = random(DataType::kFloat16, {2, 3, 17, 23}, -10, 10, false, 22);
  rt::Tensor xu8 = random(DataType::kUint8, {2, 3, 17, 23}, 0, 256, true, 23);
  auto f32 = [](std::vector<double> v) {
    return make(DataType::kFloat, {static_cast<int64_t>(v.size())}, [&](int64_t i) { return v[i]; });
  };
  const rt::Tensor up = f32({1, 1, 2.3, 1.7}), down = f32({1, 1, 0.6, 0.45});
  const rt::Tensor empty = f32({});  // an input given as empty: roi or scales not used
  auto attrs = [](std::string mode, std::string coord, std::vector<Attribute> more = {}) {
    more.push_back(Attribute::of_string("mode", mode));
    more.push_back(Attribute::of_string("coordinate_transformation_mode", coord));
    return more;
  };
  for (const rt::Tensor& scales : {up, down}) {
    for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
      for (const char* coord : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"})
        expect_same({"Resize",
                     {x, empty, scales},
                     attrs("nearest", coord, {Attribute::of_string("nearest_mode", nearest)}),
                     1,
                     13});
    expect_same({"Resize", {x, empty, scales}, attrs("nearest", "tf_half_pixel_for_nn"), 1, 11});
    for (const char* coord : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}) {
      expect_same({"Resize", {x, empty, scales}, attrs("linear", coord), 1, 13});
      expect_same({"Resize", {xh, empty, scales}, attrs("linear", coord), 1, 13});
      expect_same({"Resize", {xu8, empty, scales}, attrs("linear", coord), 1, 13});
      for (int64_t exclude : {0, 1})
        expect_same({"Resize",
                     {x, empty, scales},
                     attrs("cubic", coord,
                           {Attribute::of_int("exclude_outside", exclude),
                            Attribute::of_float("cubic_coeff_a", -0.5f)}),
                     1,
                     13});
    }
    expect_same({"Resize", {x, empty, scales}, attrs("linear", "half_pixel_symmetric"), 1, 19});
    for (const char* mode : {"linear", "cubic"})
      expect_same({"Resize",
                   {x, empty, scales},
                   attrs(mode, "half_pixel", {Attribute::of_int("antialias", 1)}),
                   1,
                   18});
  }
  // Strong antialiased shrinking (many taps per axis), tf_crop_and_resize with a roi reaching outside.
  expect_same({"Resize",
               {x, empty, f32({1, 1, 0.2, 0.3})},
               attrs("cubic", "half_pixel", {Attribute::of_int("antialias", 1)}),
               1,
               18});
  const rt::Tensor roi = f32({0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3});
  for (const char* mode : {"nearest", "linear", "cubic"})
    expect_same({"Resize",
                 {x, roi, up},
                 attrs(mode, "tf_crop_and_resize", {Attribute::of_float("extrapolation_value", 10.0f)}),
                 1,
                 13});
  // Sizes, axes and keep_aspect_ratio_policy (18), and Resize-10 with integers moved as they are.
  for (const char* policy : {"stretch", "not_larger", "not_smaller"})
    expect_same({"Resize",
                 {x, empty, empty, ints({29, 11})},
                 attrs("linear", "half_pixel",
                       {Attribute::of_ints("axes", {2, 3}),
                        Attribute::of_string("keep_aspect_ratio_policy", policy)}),
                 1,
                 18});
  expect_same({"Resize", {random(DataType::kInt64, {2, 3, 17, 23}, -1000, 1000, true), up}, {}, 1, 10});
  expect_same({"Resize", {x, down}, {Attribute::of_string("mode", "linear")}, 1, 10});
  // Upsample (9: scales input; 7: attribute), nearest and linear.
  const rt::Tensor twice = f32({1, 1, 2, 3});
  expect_same({"Upsample", {x, twice}, {}, 1, 9});
  expect_same({"Upsample", {xh, twice}, {Attribute::of_string("mode", "linear")}, 1, 9});
  expect_same({"Upsample", {x}, {Attribute::of_floats("scales", {1, 1, 1.5f, 2})}, 1, 7});
}

// GridSample in every mode and padding, with and without align_corners, in 2-D and 3-D, coordinates
// reaching past the borders (and one NaN), bit for bit against the CPU.
TEST_F(CudaData, GridSampleEveryMode) {
  rt::Tensor x = floats({2, 3, 9, 11}, 31);
  rt::Tensor grid = random(DataType::kFloat, {2, 7, 5, 2}, -1.4, 1.4, false, 32);
  grid.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
  rt::Tensor x3 = random(DataType::kFloat16, {1, 2, 4, 5, 6}, -10, 10, false, 33);
  rt::Tensor grid3 = random(DataType::kFloat, {1, 3, 4, 5, 3}, -1.3, 1.3, false, 34);
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (int64_t align : {0, 1}) {
        const std::vector<Attribute> a = {Attribute::of_string("mode", mode),
                                          Attribute::of_string("padding_mode", padding),
                                          Attribute::of_int("align_corners", align)};
        expect_same({"GridSample", {x, grid}, a, 1, 22});
        if (std::string(mode) != "cubic") expect_same({"GridSample", {x3, grid3}, a, 1, 22});
      }
  expect_same({"GridSample", {x, grid}, {Attribute::of_string("mode", "bicubic")}, 1, 16});
  expect_same({"GridSample",
               {random(DataType::kDouble, {1, 2, 6, 7}, -100, 100),
                random(DataType::kDouble, {1, 4, 3, 2}, -1.2, 1.2)},
               {},
               1,
               20});
}

// TensorScatter (KV-cache update) in linear and circular mode (wrapping past the end), 3-D and 4-D.
TEST_F(CudaData, TensorScatterLinearAndCircular) {
  rt::Tensor cache = random(DataType::kFloat16, {2, 3, 10, 8}, -5, 5, false, 41);
  rt::Tensor update = random(DataType::kFloat16, {2, 3, 4, 8}, -5, 5, false, 42);
  expect_same({"TensorScatter", {cache, update, ints({0, 6})}, {}, 1, 24});
  expect_same({"TensorScatter", {cache, update}, {}, 1, 24});
  expect_same(
      {"TensorScatter", {cache, update, ints({7, 13})}, {Attribute::of_string("mode", "circular")}, 1, 24});
  rt::Tensor cache3 = floats({3, 12, 5});
  expect_same({"TensorScatter",
               {cache3, floats({3, 12, 5}, 43), ints({0, 0, 0})},
               {Attribute::of_int("axis", 1)},
               1,
               24});
  expect_same({"TensorScatter",
               {floats({2, 5, 6}), floats({2, 5, 6}, 44), ints({0, 3})},
               {Attribute::of_int("axis", -1), Attribute::of_string("mode", "circular")},
               1,
               24});
}
