// The CUDA normalisations against the CPU's reference kernels (statistics in double):
// LayerNormalization (axes, bias or not, the Mean/InvStdDev outputs), RMSNormalization,
// InstanceNormalization, GroupNormalization (opsets 18 and 21) and BatchNormalization at inference, in
// float32, float16 and bfloat16, plus rows near 1000 with a spread of 0.01.
#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

// Outputs of magnitude up to about 4 (normalised values times a scale up to 2, plus a bias up to 1):
// float32 after a two-pass float32 mean and variance: about 1e-6 relative, 1e-5 absolute; the half
// types round once after float32 math: one unit of the type at that magnitude (2 ulp relative plus a
// unit at 4 absolute).
double rtol_for(DataType t) {
  return t == DataType::kFloat ? 1e-5 : 2 * type_eps(t);
}
double atol_for(DataType t) {
  return t == DataType::kFloat ? 1e-5 : 4 * type_eps(t);
}

TEST_F(CudaOps, LayerNormalizationMatchesTheReference) {
  struct Case {
    rt::Shape shape;
    int64_t axis;
  };
  const std::vector<Case> cases = {
      {{512, 768}, -1}, {{4096, 24}, -1}, {{6, 10, 30}, 1}, {{3, 5000}, 1}, {{1000, 4}, 1}};
  uint32_t seed = 1000;
  for (DataType t : {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16}) {
    for (const auto& c : cases) {
      const auto a = static_cast<size_t>(c.axis < 0 ? c.axis + static_cast<int64_t>(c.shape.size()) : c.axis);
      const rt::Shape norm(c.shape.begin() + static_cast<std::ptrdiff_t>(a), c.shape.end());
      for (int with_bias : {0, 1}) {
        OneNode n = node("LayerNormalization", 17,
                         {ir::Attribute::of_int("axis", c.axis), ir::Attribute::of_float("epsilon", 1e-5f)});
        n.outputs = 3;
        n.inputs = {random_tensor(t, c.shape, -3.0f, 5.0f, seed++),
                    random_tensor(t, norm, -2.0f, 2.0f, seed++), random_tensor(t, norm, -1.0f, 1.0f, seed++)};
        if (!with_bias) n.inputs.pop_back();
        expect_matches(n, rtol_for(t), atol_for(t),
                       label("LayerNormalization", type_name(t), rt::shape_str(c.shape)));
      }
      OneNode r = node("RMSNormalization", 23, {ir::Attribute::of_int("axis", c.axis)});
      r.inputs = {random_tensor(t, c.shape, -3.0f, 5.0f, seed++),
                  random_tensor(t, norm, -2.0f, 2.0f, seed++)};
      expect_matches(r, rtol_for(t), atol_for(t),
                     label("RMSNormalization", type_name(t), rt::shape_str(c.shape)));
    }
  }
}

// Issue 12's case: rows around 1000 with a spread of 0.01. A float32 mean of the raw values would be
// off by up to half an ulp of 1000 (3e-5), which the spread magnifies to 5e-3 in the output.
TEST_F(CudaOps, LayerNormalizationKeepsTheDigitsOfALargeOffset) {
  OneNode n = node("LayerNormalization", 17, {ir::Attribute::of_int("axis", -1)});
  n.inputs = {random_tensor(DataType::kFloat, {64, 768}, 999.99f, 1000.01f, 77),
              floats(DataType::kFloat, {768}, std::vector<float>(768, 1.0f))};
  expect_matches(n, 1e-5, 2e-5, "LayerNormalization offset 1000");
}

TEST_F(CudaOps, GroupAndInstanceNormalizationMatchTheReference) {
  uint32_t seed = 2000;
  for (DataType t : {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16}) {
    for (const rt::Shape& shape : {rt::Shape{2, 6, 17, 9}, rt::Shape{3, 32, 100}, rt::Shape{1, 8, 4096}}) {
      const int64_t c = shape[1];
      // InstanceNormalization's schema has no bfloat16.
      if (t != DataType::kBFloat16) {
        OneNode in = node("InstanceNormalization", 6);
        in.inputs = {random_tensor(t, shape, -3.0f, 5.0f, seed++), random_tensor(t, {c}, -2.0f, 2.0f, seed++),
                     random_tensor(t, {c}, -1.0f, 1.0f, seed++)};
        expect_matches(in, rtol_for(t), atol_for(t),
                       label("InstanceNormalization", type_name(t), rt::shape_str(shape)));
      }
      for (int opset : {18, 21}) {
        const int64_t groups = 2;
        const int64_t params = opset == 18 ? groups : c;
        OneNode g = node("GroupNormalization", opset, {ir::Attribute::of_int("num_groups", groups)});
        g.inputs = {random_tensor(t, shape, -3.0f, 5.0f, seed++),
                    random_tensor(t, {params}, -2.0f, 2.0f, seed++),
                    random_tensor(t, {params}, -1.0f, 1.0f, seed++)};
        expect_matches(g, rtol_for(t), atol_for(t),
                       label("GroupNormalization", opset, type_name(t), rt::shape_str(shape)));
      }
    }
  }
}

TEST_F(CudaOps, BatchNormalizationInferenceMatchesTheReference) {
  uint32_t seed = 3000;
  for (DataType t : {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16}) {
    for (const rt::Shape& shape : {rt::Shape{2, 64, 28, 28}, rt::Shape{5, 7}, rt::Shape{3, 16, 50}}) {
      const int64_t c = shape[1];
      for (int opset : {9, 15}) {
        if (opset < 14 && t == DataType::kBFloat16) continue;  // bfloat16 came with opset 14
        OneNode n = node("BatchNormalization", opset);
        n.inputs = {random_tensor(t, shape, -3.0f, 5.0f, seed++), random_tensor(t, {c}, -2.0f, 2.0f, seed++),
                    random_tensor(t, {c}, -1.0f, 1.0f, seed++), random_tensor(t, {c}, -1.0f, 2.0f, seed++),
                    random_tensor(t, {c}, 0.5f, 3.0f, seed++)};
        expect_matches(n, rtol_for(t), atol_for(t),
                       label("BatchNormalization", type_name(t), rt::shape_str(shape)));
      }
    }
  }
}

// LpNormalization along the last and an inner axis (a zero row gives zeros), MeanVarianceNormalization
// over its default axes [0, 2, 3] (not contiguous) and over the last two.
TEST_F(CudaOps, LpAndMeanVarianceNormalizationMatchTheReference) {
  uint32_t seed = 5000;
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    for (int64_t p : {1, 2}) {
      for (const auto& [shape, axis] :
           {std::pair{rt::Shape{300, 1000}, int64_t{-1}}, std::pair{rt::Shape{20, 30, 40}, int64_t{1}}}) {
        OneNode n =
            node("LpNormalization", 1, {ir::Attribute::of_int("p", p), ir::Attribute::of_int("axis", axis)});
        n.inputs = {random_tensor(t, shape, -3.0f, 3.0f, seed++)};
        expect_matches(n, rtol_for(t), 1e-7, label("LpNormalization", type_name(t)));
      }
    }
    OneNode z = node("LpNormalization", 1);
    z.inputs = {floats(t, {2, 3}, {0, 0, 0, 3, 0, 4})};
    expect_matches(z, rtol_for(t), 0, "LpNormalization zero row");
    for (const auto& axes : {std::vector<int64_t>{0, 2, 3}, std::vector<int64_t>{-2, -1}}) {
      OneNode m = node("MeanVarianceNormalization", 13, {ir::Attribute::of_ints("axes", axes)});
      m.inputs = {random_tensor(t, {3, 5, 40, 30}, -3.0f, 5.0f, seed++)};
      expect_matches(m, rtol_for(t), atol_for(t), label("MeanVarianceNormalization", type_name(t)));
    }
  }
}

// LRN with odd and even window sizes (the window is asymmetric for even ones), clipped at the edges.
TEST_F(CudaOps, LrnMatchesTheReference) {
  uint32_t seed = 5100;
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    for (int64_t size : {1, 3, 4}) {
      OneNode n = node("LRN", 13,
                       {ir::Attribute::of_int("size", size), ir::Attribute::of_float("alpha", 2e-3f),
                        ir::Attribute::of_float("beta", 0.6f), ir::Attribute::of_float("bias", 1.5f)});
      n.inputs = {random_tensor(t, {3, 7, 9, 11}, -3.0f, 3.0f, seed++)};
      expect_matches(n, rtol_for(t), atol_for(t), label("LRN", type_name(t), size));
    }
  }
}

}  // namespace
}  // namespace tessera::cuda_test
