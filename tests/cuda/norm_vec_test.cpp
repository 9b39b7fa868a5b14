// The 16-byte vector paths of the memory-bound kernels against the CPU's reference kernels: the row
// normalisations (LayerNormalization, RMSNormalization and the com.microsoft skip forms) at transformer
// widths with few rows (a row spread over several warps) and many (a row a warp), widths that are not a
// multiple of the vector (the general kernel), BiasGelu in all three float types with biases the row
// kernel takes and ones it leaves, and the transposes with a short side (NCHW <-> NHWC of an image).
#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

// As norm_test.cpp: outputs up to about 4 in magnitude; float32 two-pass statistics about 1e-6
// relative; the half types round once after float32 math: 2 ulp relative plus a unit at 4 absolute.
double rtol_for(DataType t) {
  return t == DataType::kFloat ? 1e-5 : 2 * type_eps(t);
}
double atol_for(DataType t) {
  return t == DataType::kFloat ? 1e-5 : 4 * type_eps(t);
}

const DataType kFloatTypes[] = {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16};

// Few rows (batch 1: 4 or 8 warps a row), many rows (a warp a row), the widest row the vector path
// holds in 16 bits (8192), one past it, and widths that are no multiple of 8 or of 4.
const rt::Shape kRowShapes[] = {{1, 128, 768}, {16, 128, 768}, {2, 50, 1024}, {3, 7, 4096}, {2, 8192},
                                {2, 12288},    {5, 33, 770},   {9, 1000},     {300, 36}};

TEST_F(CudaOps, VectorLayerNormalizationMatchesTheReference) {
  uint32_t seed = 7000;
  for (DataType t : kFloatTypes) {
    for (const rt::Shape& shape : kRowShapes) {
      const rt::Shape norm{shape.back()};
      OneNode n = node("LayerNormalization", 17, {ir::Attribute::of_int("axis", -1)});
      n.outputs = 3;
      n.inputs = {random_tensor(t, shape, -3.0f, 5.0f, seed++), random_tensor(t, norm, -2.0f, 2.0f, seed++),
                  random_tensor(t, norm, -1.0f, 1.0f, seed++)};
      expect_matches(n, rtol_for(t), atol_for(t),
                     label("LayerNormalization", type_name(t), rt::shape_str(shape)));
      OneNode r = node("RMSNormalization", 23, {ir::Attribute::of_int("axis", -1)});
      r.inputs = {random_tensor(t, shape, -3.0f, 5.0f, seed++), random_tensor(t, norm, -2.0f, 2.0f, seed++)};
      expect_matches(r, rtol_for(t), atol_for(t),
                     label("RMSNormalization", type_name(t), rt::shape_str(shape)));
    }
  }
}

// Every output of the skip forms (y, mean, inverse deviation, the sum), a full skip and one broadcast
// over the batch, with and without the bias added before the normalisation.
TEST_F(CudaOps, VectorSkipLayerNormalizationMatchesTheReference) {
  uint32_t seed = 7500;
  const std::string ms = "com.microsoft";
  for (DataType t : kFloatTypes) {
    for (const rt::Shape& shape : kRowShapes) {
      const int64_t n = shape.back();
      const rt::Shape row_skip(shape.begin() + 1, shape.end());
      for (const char* op : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"}) {
        const bool simplified = std::string(op) == "SkipSimplifiedLayerNormalization";
        for (const rt::Shape& skip : {shape, row_skip}) {
          OneNode c = node(op, 17, {ir::Attribute::of_float("epsilon", 1e-5f)});
          c.domain = ms;
          c.outputs = 4;
          c.inputs = {random_tensor(t, shape, -3.0f, 5.0f, seed++),
                      random_tensor(t, skip, -1.0f, 1.0f, seed++),
                      random_tensor(t, {n}, -2.0f, 2.0f, seed++)};
          if (!simplified) c.inputs.push_back(random_tensor(t, {n}, -1.0f, 1.0f, seed++));
          c.inputs.push_back(random_tensor(t, {n}, -0.5f, 0.5f, seed++));
          expect_matches(c, rtol_for(t), atol_for(t),
                         label(op, type_name(t), rt::shape_str(shape), "skip", rt::shape_str(skip)));
        }
      }
    }
  }
}

// BERT's form, which the lean instantiation of the one-warp float16 kernel takes (rows of 768, enough of
// them for a warp a row, no bias before the normalisation, the output alone): with and without beta, a
// full skip and one broadcast over the batch, a row count that leaves the last block part-empty.
TEST_F(CudaOps, VectorSkipLayerNormalizationLeanFormMatchesTheReference) {
  uint32_t seed = 7700;
  const DataType t = DataType::kFloat16;
  for (const rt::Shape& shape : {rt::Shape{16, 128, 768}, rt::Shape{4099, 768}}) {
    const rt::Shape row_skip(shape.begin() + 1, shape.end());
    for (const rt::Shape& skip : {shape, row_skip}) {
      for (bool beta : {true, false}) {
        OneNode c = node("SkipLayerNormalization", 17, {ir::Attribute::of_float("epsilon", 1e-5f)});
        c.domain = "com.microsoft";
        c.inputs = {random_tensor(t, shape, -3.0f, 5.0f, seed++), random_tensor(t, skip, -1.0f, 1.0f, seed++),
                    random_tensor(t, {768}, -2.0f, 2.0f, seed++)};
        if (beta) c.inputs.push_back(random_tensor(t, {768}, -1.0f, 1.0f, seed++));
        expect_matches(c, rtol_for(t), atol_for(t),
                       label("SkipLayerNormalization lean", rt::shape_str(shape), "skip", rt::shape_str(skip),
                             beta ? "beta" : "no beta"));
      }
    }
  }
}

// The lean kernel with the sum output (GPT-2 and ViT's pre-LN residual): the node's outputs are y and the
// sum, mean and inverse deviation left out; both against the reference.
TEST_F(CudaOps, VectorSkipLayerNormalizationLeanFormWithSumMatchesTheReference) {
  const DataType t = DataType::kFloat16;
  const rt::Shape shape{4097, 768};
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}, {"com.microsoft", 1}};
  ir::GraphBuilder b(m.graph);
  auto ty = [&](const rt::Shape& s) {
    ir::Shape d;
    for (int64_t v : s) d.push_back(ir::Dim::of(v));
    return ir::Type::tensor(t, d);
  };
  const rt::Tensor x = random_tensor(t, shape, -3.0f, 5.0f, 7800),
                   skip = random_tensor(t, shape, -1, 1, 7801), gamma = random_tensor(t, {768}, -2, 2, 7802),
                   beta = random_tensor(t, {768}, -1, 1, 7803);
  ir::Node n;
  n.op_type = "SkipLayerNormalization";
  n.domain = "com.microsoft";
  n.name = "op";
  n.inputs = {b.input("x", ty(shape)), b.input("skip", ty(shape)), b.input("gamma", ty({768})),
              b.input("beta", ty({768}))};
  n.outputs = {"y", "", "", "sum"};
  n.attributes = {ir::Attribute::of_float("epsilon", 1e-5f)};
  m.graph.add_node(std::move(n));
  b.output("y", ty(shape));
  b.output("sum", ty(shape));
  const std::vector<std::pair<std::string, rt::Value>> feeds = {
      {"x", rt::Value(x)}, {"skip", rt::Value(skip)}, {"gamma", rt::Value(gamma)}, {"beta", rt::Value(beta)}};
  rt::Session gpu(m, {.optimization = rt::OptLevel::kNone,
                      .backend = "cuda",
                      .precision = tessera::passes::Precision::kFp32});
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
  size_t on_gpu = 0;
  for (const auto& bi : gpu.backends())
    if (bi.name == "cuda") on_gpu += bi.nodes;
  EXPECT_EQ(on_gpu, 1u);
  const auto got = gpu.run(feeds), want = ref.run(feeds);
  ASSERT_EQ(got.size(), 2u);
  expect_near(got[0].tensor(), want[0].tensor(), rtol_for(t), atol_for(t), "lean y");
  expect_near(got[1].tensor(), want[1].tensor(), rtol_for(t), atol_for(t), "lean sum");
}

// Issue 12's accuracy case through the skip form's vector path: x + skip near 1000 with a spread of
// 0.01, in a few rows (several warps a row) and many (a warp a row). The contrib reference kernel
// accumulates its mean in float32 as ONNX Runtime does (off by up to half an ulp of 1000, which the
// spread turns into about 1% of the output), so the expected values here are the float32 sums'
// statistics in double.
TEST_F(CudaOps, VectorSkipLayerNormalizationKeepsTheDigitsOfALargeOffset) {
  const int64_t n = 768;
  const float eps = 1e-5f;
  for (const rt::Shape& shape : {rt::Shape{3, n}, rt::Shape{4096, n}}) {
    OneNode c = node("SkipLayerNormalization", 17, {ir::Attribute::of_float("epsilon", eps)});
    c.domain = "com.microsoft";
    c.inputs = {random_tensor(DataType::kFloat, shape, 499.995f, 500.005f, 78),
                random_tensor(DataType::kFloat, shape, 499.995f, 500.005f, 79),
                floats(DataType::kFloat, {n}, std::vector<float>(static_cast<size_t>(n), 1.0f))};
    const std::string what = label("SkipLayerNormalization offset 1000", rt::shape_str(shape));
    Outputs r = run_both(c);
    EXPECT_EQ(r.gpu_nodes, 1u) << what << " did not run on the GPU";
    const float* x = c.inputs[0].data<float>();
    const float* skip = c.inputs[1].data<float>();
    rt::Tensor want = rt::Tensor::zeros(DataType::kFloat, shape);
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t row = 0; row < shape[0]; ++row) {
      double mean = 0, var = 0;
      for (int64_t k = 0; k < n; ++k) {
        v[static_cast<size_t>(k)] = static_cast<double>(x[row * n + k] + skip[row * n + k]);  // float sum
        mean += v[static_cast<size_t>(k)];
      }
      mean /= static_cast<double>(n);
      for (double e : v) var += (e - mean) * (e - mean);
      const double inv = 1.0 / std::sqrt(var / static_cast<double>(n) + static_cast<double>(eps));
      for (int64_t k = 0; k < n; ++k)
        want.data<float>()[row * n + k] = static_cast<float>((v[static_cast<size_t>(k)] - mean) * inv);
    }
    expect_near(r.gpu[0], want, 1e-5, 2e-5, what);
  }
}

// float32 within a few ulps (double math), the half types within one ulp (float32 math far inside half
// an ulp, then one rounding), the smallest normal's ulp below the normal range.
void expect_gelu_matches(const OneNode& c, DataType t, const std::string& what) {
  const double eps = t == DataType::kFloat ? 4 * 0x1p-23 : type_eps(t);
  Outputs r = run_both(c);
  EXPECT_EQ(r.gpu_nodes, 1u) << what << " did not run on the GPU";
  ASSERT_EQ(r.gpu.size(), 1u);
  expect_near(r.gpu[0], r.ref[0], eps, eps * (t == DataType::kFloat ? 1e-6 : 0x1p-14), what);
}

// BiasGelu with 3072 and 256 columns (the row kernel), 8 (too few vectors for it) and 770 (no
// multiple of the vector: the scalar kernel); Gelu without a bias; normal inputs of spread 3, so the
// far tails (erfc of 3 to 6) are covered.
TEST_F(CudaOps, VectorBiasGeluMatchesTheReference) {
  uint32_t seed = 7800;
  for (DataType t : kFloatTypes) {
    for (const rt::Shape& shape :
         {rt::Shape{3, 37, 3072}, rt::Shape{129, 256}, rt::Shape{1000, 8}, rt::Shape{7, 770}}) {
      OneNode c = node("BiasGelu", 17);
      c.domain = "com.microsoft";
      c.inputs = {random_tensor(t, shape, -9.0f, 9.0f, seed++),
                  random_tensor(t, {shape.back()}, -1.0f, 1.0f, seed++)};
      expect_gelu_matches(c, t, label("BiasGelu", type_name(t), rt::shape_str(shape)));
    }
    OneNode g = node("Gelu", 17);
    g.domain = "com.microsoft";
    g.inputs = {random_tensor(t, {65, 3072}, -9.0f, 9.0f, seed++)};
    expect_gelu_matches(g, t, label("Gelu", type_name(t)));
  }
}

// Every float16 and bfloat16 value through the com.microsoft GELU forms (the accuracy sweep's inputs):
// within one unit of the type of the reference (double, rounded once), and no subnormal result flushed
// to zero (bfloat16 keeps float32's subnormals: FastGelu(-10.125) is -6.6e-39; Gelu of the smallest
// float16 subnormal is a hair above a rounding tie).
TEST_F(CudaOps, GeluFormsRoundEverySixteenBitValue) {
  for (DataType t : {DataType::kFloat16, DataType::kBFloat16}) {
    rt::Tensor x = rt::Tensor::zeros(t, {65536});
    auto* bits = static_cast<uint16_t*>(x.raw());
    for (int i = 0; i < 65536; ++i) bits[i] = static_cast<uint16_t>(i);
    const double min_sub = t == DataType::kFloat16 ? 0x1p-24 : 0x1p-133;
    for (const char* op : {"Gelu", "FastGelu", "QuickGelu"}) {
      OneNode c = node(op, 17);
      c.domain = "com.microsoft";
      c.inputs = {x};
      const std::string what = label(op, type_name(t));
      Outputs r = run_both(c);
      EXPECT_EQ(r.gpu_nodes, 1u) << what << " did not run on the GPU";
      ASSERT_EQ(r.gpu.size(), 1u);
      expect_near(r.gpu[0], r.ref[0], type_eps(t), min_sub, what);
      int flushed = 0;
      for (int64_t i = 0; i < x.numel() && flushed < 5; ++i) {
        const double g = r.gpu[0].to_double(i), w = r.ref[0].to_double(i);
        if (g != 0 || w == 0 || std::isnan(w)) continue;
        ++flushed;
        ADD_FAILURE() << what << " x = " << x.to_double(i) << ": 0 where the reference has " << w;
      }
    }
  }
}

// The short-side transposes: NCHW -> NHWC of an image batch (3 channels), the way back, K^T of 64-wide
// heads over 197 positions, short sides that do not divide the block (40, 17), odd sizes, 1, 2, 4 and
// 8-byte elements; a transpose is exact.
TEST_F(CudaOps, ShortSideTransposesMatchTheReference) {
  uint32_t seed = 7900;
  struct Case {
    rt::Shape shape;
    std::vector<int64_t> perm;
  };
  const std::vector<Case> cases = {{{4, 3, 224, 224}, {0, 2, 3, 1}},
                                   {{4, 224, 224, 3}, {0, 3, 1, 2}},
                                   {{3, 5, 17, 13}, {0, 2, 3, 1}},
                                   {{2, 16, 999}, {0, 2, 1}},
                                   {{2, 999, 16}, {0, 2, 1}},
                                   {{7, 1, 1000}, {0, 2, 1}},
                                   {{1000, 2}, {1, 0}},
                                   {{6, 197, 64}, {0, 2, 1}},
                                   {{5, 77, 40}, {0, 2, 1}},
                                   {{2, 3000, 17}, {0, 2, 1}}};
  for (DataType t : {DataType::kFloat, DataType::kFloat16, DataType::kBool, DataType::kInt64}) {
    for (const auto& c : cases) {
      OneNode n = node("Transpose", 17, {ir::Attribute::of_ints("perm", c.perm)});
      n.inputs = {random_tensor(t, c.shape, -100.0f, 100.0f, seed++)};
      expect_matches(n, 0, 0, label("Transpose", type_name(t), rt::shape_str(c.shape)));
    }
  }
}

}  // namespace
}  // namespace tessera::cuda_test
