// com.tessera MatMulBiasGelu on the GPU (cuBLASLt's GELU_BIAS epilogue in float16/bfloat16, the bias
// epilogue and the tanh GELU kernel in float32 or where cuBLASLt has no GELU_BIAS algorithm) against the
// tanh GELU of the product computed in double on the host from the same (rounded) inputs. Pre-activations
// reach |x| ~ 5, so the erf GELU (4.7e-4 away at x = -2.7, 5% of the value there) would fail the
// tolerance at many elements; the test checks that it would. Tolerance: 2 ulp of the output type relative
// plus 2^-14 (float16) / 2^-11 (bfloat16) absolute: the output's rounding and the epilogue's own float32
// GELU; float32: 2e-6 relative (a sum of 96 float32 products) plus 1e-6.
// Also a GPT-2 MLP in a float16 session: the rule fuses it and the node runs on the GPU; and the time of
// GPT-2's b32 FFN-up with the GELU epilogue against the bias epilogue alone (printed).
#include <fmt/format.h>

#include <cmath>

#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}
double gelu_erf(double x) {
  return 0.5 * x * std::erfc(-x * 0.70710678118654752);
}

OneNode gelu_node(DataType t, int64_t m, int64_t k, int64_t n, uint32_t seed) {
  OneNode c = node("MatMulBiasGelu", 17);
  c.domain = "com.tessera";
  c.inputs = {random_tensor(t, {2, m, k}, -1, 1, seed), random_tensor(t, {k, n}, -0.5f, 0.5f, seed + 1),
              random_tensor(t, {n}, -1, 1, seed + 2)};
  return c;
}

TEST_F(CudaOps, MatMulBiasGeluIsTheTanhGeluOfTheProduct) {
  for (DataType t : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat}) {
    for (int64_t n : {200, 77}) {
      const int64_t m = 257, k = 96;
      const std::string what = fmt::format("MatMulBiasGelu {} n={}", type_name(t), n);
      OneNode c = gelu_node(t, m, k, n, 60);
      Outputs r = run_both(c);
      EXPECT_EQ(r.gpu_nodes, 1u) << what << " did not run on the GPU";
      ASSERT_EQ(r.gpu.size(), 1u);
      const rt::Tensor &a = c.inputs[0], &b = c.inputs[1], &bias = c.inputs[2], &y = r.gpu[0];
      const double rtol = t == DataType::kFloat ? 2e-6 : 2 * type_eps(t);
      const double atol = t == DataType::kFloat ? 1e-6 : t == DataType::kFloat16 ? 0x1p-14 : 0x1p-11;
      int bad = 0, erf_would_fail = 0;
      double worst = 0;
      for (int64_t row = 0; row < 2 * m; ++row) {
        for (int64_t j = 0; j < n; ++j) {
          double x = bias.to_double(j);
          for (int64_t q = 0; q < k; ++q) x += a.to_double(row * k + q) * b.to_double(q * n + j);
          const double want = gelu_tanh(x), got = y.to_double(row * n + j);
          const double tol = rtol * std::fabs(want) + atol;
          worst = std::max(worst, std::fabs(got - want) / tol);
          if (std::fabs(gelu_erf(x) - want) > 2 * tol) ++erf_would_fail;
          if (std::fabs(got - want) <= tol || bad >= 5) continue;
          ++bad;
          ADD_FAILURE() << what << " [" << row << ", " << j << "] x " << x << ": cuda " << got
                        << ", tanh GELU " << want << ", erf GELU " << gelu_erf(x);
        }
      }
      // Only float16's tolerance is finer than the forms' difference (at most 4.7e-4, near x = -2.7): there
      // the test proves which GELU the epilogue computes. bfloat16's 2^-7 relative is coarser than that.
      if (t == DataType::kFloat16) {
        EXPECT_GT(erf_would_fail, 100) << what << ": the inputs cannot tell the forms apart";
      }
      const Timed tm = time_node(c, 2);
      fmt::print("[matmul-gelu] {:<36} worst {:.2f} of the tolerance, path '{}'\n", what, worst, tm.path);
    }
  }
}

// GPT-2's MLP up-projection as exported (MatMul, bias Add, the tanh GELU with Pow), in a float16 session.
TEST_F(CudaOps, Gpt2MlpRunsAsOneProductWithTheGeluEpilogue) {
  constexpr int64_t kB = 4, kS = 33, kE = 128, kF = 512;
  auto f32 = [](std::vector<int64_t> dims) {
    ir::Shape s;
    for (int64_t d : dims) s.push_back(ir::Dim::of(d));
    return ir::Type::tensor(DataType::kFloat, s);
  };
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  int counter = 0;
  auto c = [&](float v) { return b.constant_floats(fmt::format("c{}", counter++), {}, v); };
  auto x = b.node("Add",
                  {b.node("MatMul", {b.input("x", f32({kB, kS, kE})), b.random_normal("w", {kE, kF}, 0.15f)}),
                   b.random_normal("bias", {kF}, 0.5f)});
  auto inner = b.node(
      "Mul",
      {c(0.7978845608f), b.node("Add", {x, b.node("Mul", {c(0.044715f), b.node("Pow", {x, c(3.0f)})})})});
  auto y = b.node("Mul", {b.node("Mul", {c(0.5f), x}), b.node("Add", {c(1.0f), b.node("Tanh", {inner})})});
  b.output(y, f32({kB, kS, kF}));
  const std::vector<std::pair<std::string, rt::Value>> feeds = {
      {"x", rt::Value(random_tensor(DataType::kFloat, {kB, kS, kE}, -1, 1, 70))}};
  rt::Session gpu(m, {.backend = "cuda", .precision = tessera::passes::Precision::kFp16});
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
  size_t fused = 0;
  for (const auto& bi : gpu.backends())
    if (bi.name == "cuda" && bi.ops.count("MatMulBiasGelu")) fused += bi.ops.at("MatMulBiasGelu");
  EXPECT_EQ(fused, 1u);
  size_t elsewhere = 0;
  for (const auto& bi : gpu.backends())
    if (bi.name != "cuda") elsewhere += bi.nodes;
  EXPECT_EQ(elsewhere, 0u) << "every node on the GPU";
  const auto want = ref.run(feeds);
  const auto got = gpu.run(feeds);
  ASSERT_EQ(got.size(), 1u);
  // Products over 128 float16 terms of order 0.15: ~1e-2 of values of order 1 (as the attention blocks).
  expect_near(got[0].tensor(), want[0].tensor(), 2e-2, 2e-2, "gpt-2 mlp");
}

TEST_F(CudaOps, MatMulGeluEpilogueTimeAtGpt2Batch32) {
  const DataType h = DataType::kFloat16;
  OneNode gelu = node("MatMulBiasGelu", 17);
  gelu.domain = "com.tessera";
  gelu.inputs = {random_tensor(h, {4096, 768}, -1, 1, 80), random_tensor(h, {768, 3072}, -0.1f, 0.1f, 81),
                 random_tensor(h, {3072}, -1, 1, 82)};
  OneNode plain = gelu;
  plain.op = "MatMulBias";
  const Timed tg = time_node(gelu, 10), tp = time_node(plain, 10);
  EXPECT_TRUE(tg.on_gpu && tp.on_gpu);
  fmt::print(
      "[matmul-gelu] f16 [4096,768]x[768,3072]: MatMulBiasGelu {:.1f} us ('{}'), MatMulBias {:.1f} us\n",
      tg.best_us, tg.path, tp.best_us);
}

}  // namespace
}  // namespace tessera::cuda_test
