// merge_sibling_matmuls on the GPU: a float16 CUDA session of a BERT self-attention block (biased Q, K, V
// projections of [E, E], padding mask, out-projection) runs Q, K and V as one MatMulBias whose packed
// output FusedAttention reads (no Split left), both on the GPU; plain siblings whose outputs go elsewhere
// run as one product and a Split on the GPU. Both match the CPU's float32 reference within float16's
// accuracy (products over 256 terms of values of order 1: ~1e-2, as FusedAttentionBlockEndToEnd).
#include <cmath>

#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

using ir::Attribute;

ir::Type f32(std::vector<int64_t> dims) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(ir::Dim::of(d));
  return ir::Type::tensor(DataType::kFloat, s);
}

size_t on_gpu(const rt::Session& s, const std::string& op) {
  size_t n = 0;
  for (const auto& bi : s.backends())
    if (bi.name == "cuda" && bi.ops.count(op)) n += bi.ops.at(op);
  return n;
}

size_t anywhere(const rt::Session& s, const std::string& op) {
  size_t n = 0;
  for (const auto& bi : s.backends())
    if (bi.ops.count(op)) n += bi.ops.at(op);
  return n;
}

TEST_F(CudaOps, MergedQkvProjectionFeedsFusedAttention) {
  constexpr int64_t kB = 4, kS = 77, kH = 4, kD = 64, kE = kH * kD;
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  int counter = 0;
  auto ints = [&](std::vector<int64_t> v) { return b.constant_ints(fmt::format("c{}", counter++), v); };
  auto x = b.input("x", f32({kB, kS, kE}));
  auto linear = [&](const std::string& in, const std::string& w) {
    auto y = b.node("MatMul", {in, b.random_normal(w, {kE, kE}, 0.05f)});
    return b.node("Add", {y, b.random_normal(w + "_b", {kE}, 0.2f)});
  };
  auto heads = [&](const std::string& v, std::vector<int64_t> perm) {
    auto r = b.node("Reshape", {v, ints({kB, kS, kH, kD})});
    return b.node("Transpose", {r}, {Attribute::of_ints("perm", std::move(perm))});
  };
  auto s = b.node("MatMul", {heads(linear(x, "wq"), {0, 2, 1, 3}), heads(linear(x, "wk"), {0, 2, 3, 1})});
  s = b.node("Div", {s, b.constant_floats("sqrt_d", {}, 8.0f)});
  s = b.node("Add", {s, b.input("mask", f32({kB, 1, 1, kS}))});
  auto p = b.node("Softmax", {s}, {Attribute::of_int("axis", -1)});
  auto o = b.node("Transpose", {b.node("MatMul", {p, heads(linear(x, "wv"), {0, 2, 1, 3})})},
                  {Attribute::of_ints("perm", {0, 2, 1, 3})});
  b.output(linear(b.node("Reshape", {o, ints({kB, kS, kE})}), "wo"), f32({kB, kS, kE}));

  rt::Tensor mask = rt::Tensor::zeros(DataType::kFloat, {kB, 1, 1, kS});
  for (int64_t bi = 0; bi < kB; ++bi)
    for (int64_t j = kS - 9 * bi; j < kS; ++j) mask.data<float>()[bi * kS + j] = -10000.0f;
  const std::vector<std::pair<std::string, rt::Value>> feeds = {
      {"x", rt::Value(random_tensor(DataType::kFloat, {kB, kS, kE}, -2, 2, 21))}, {"mask", rt::Value(mask)}};
  rt::Session gpu(m, {.backend = "cuda", .precision = tessera::passes::Precision::kFp16});
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
  EXPECT_EQ(on_gpu(gpu, "FusedAttention"), 1u);
  EXPECT_EQ(on_gpu(gpu, "MatMulBias"), 2u) << "Q, K and V as one product, and the out-projection";
  EXPECT_EQ(anywhere(gpu, "Split"), 0u) << "FusedAttention reads the packed output";
  const auto want = ref.run(feeds);
  const auto got = gpu.run(feeds);
  ASSERT_EQ(got.size(), 1u);
  expect_near(got[0].tensor(), want[0].tensor(), 2e-2, 2e-2, "merged q/k/v attention block");
}

// Three linear layers of odd widths (40, 24, 72) on one [M, K] activation, each read by a Relu: one
// product and a Split, all on the GPU.
TEST_F(CudaOps, MergedSiblingProductsSplitOnTheGpu) {
  constexpr int64_t kB = 3, kM = 257, kK = 96;
  const int64_t widths[] = {40, 24, 72};
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", f32({kB, kM, kK}));
  for (int k = 0; k < 3; ++k) {
    const std::string w = fmt::format("w{}", k);
    auto y = b.node("Add", {b.node("MatMul", {x, b.random_normal(w, {kK, widths[k]}, 0.1f)}),
                            b.random_normal(w + "_b", {widths[k]}, 0.2f)});
    b.output(b.node("Relu", {y}), f32({kB, kM, widths[k]}));
  }
  const std::vector<std::pair<std::string, rt::Value>> feeds = {
      {"x", rt::Value(random_tensor(DataType::kFloat, {kB, kM, kK}, -2, 2, 22))}};
  rt::Session gpu(m, {.backend = "cuda", .precision = tessera::passes::Precision::kFp16});
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
  EXPECT_EQ(on_gpu(gpu, "MatMulBias"), 1u);
  EXPECT_EQ(on_gpu(gpu, "Split"), 1u);
  const auto want = ref.run(feeds);
  const auto got = gpu.run(feeds);
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    expect_near(got[i].tensor(), want[i].tensor(), 1e-2, 1e-2, fmt::format("sibling output {}", i));
}

}  // namespace
}  // namespace tessera::cuda_test
