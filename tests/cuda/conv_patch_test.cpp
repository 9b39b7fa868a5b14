// Patch convolutions (kernel == stride, no pads, one group: ViT's patch embedding) on the patch-copy +
// cuBLASLt path (conv_patch_kernels.cpp) against the CPU's reference kernels: Conv (NCHW) and com.tessera
// NhwcConv, 3 and 64 channels, batch 1 and 5, ViT's 16x16 window, odd sizes whose last partial window is
// dropped, non-square windows, with and without a bias, in float32 and float16; and the
// convolutions the path must leave to cuDNN (pads, kernel != stride, an activation, 1x1 windows).
//
// Error bound per element (conv_test_util.h): 2 * K * 2^-23 * sum |x||w| (+|b|), K = C*kH*kW products
// accumulated in float32 on either side, plus 2 ulps of the result for the roundings to the element type,
// plus, for 16-bit types, half an ulp of sum |x||w| (+|b|) in case cuBLASLt's bias epilogue adds the bias
// after a rounding (the reference rounds once).
#include <string>

#include "conv_test_util.h"
#include "runtime/value_io.h"

using namespace cuda_test;

namespace {

// NhwcConv's schema and Conv's before opset 22 take float and float16 (bfloat16 runs the same copy and
// cuBLASLt's bfloat16 product).
constexpr DataType kTypes[] = {DataType::kFloat, DataType::kFloat16};

// One convolution of x with w (+ bias [M]) of `op` (Conv, or NhwcConv in com.tessera) with strides equal
// to W's window; `path` is what the GPU's kernel must say it ran.
void check_patch(const std::string& op, const rt::Shape& x, const rt::Shape& w, DataType t, bool bias,
                 std::vector<ir::Attribute> attrs = {}, const std::string& path = "patch GEMM") {
  const bool nhwc = op == "NhwcConv";
  const int64_t kh = w[nhwc ? 1 : 2], kw = w[nhwc ? 2 : 3];
  if (attrs.empty()) attrs = {ints("strides", {kh, kw})};
  std::vector<rt::Shape> shapes = {x, w};
  std::vector<rt::Tensor> ins = {random_tensor(t, x, 31), random_tensor(t, w, 32)};
  if (bias) {
    shapes.push_back({w[0]});
    ins.push_back(random_tensor(t, {w[0]}, 33));
  }
  Node n = make_node(op, t, shapes, std::move(attrs), nhwc ? "com.tessera" : "");
  Result r = run_both(n, ins);
  const std::string what =
      op + " x" + rt::shape_str(x) + " w" + rt::shape_str(w) + " " + type_name(t) + (bias ? " +bias" : "");
  const double k = static_cast<double>(w[1] * w[2] * w[3]);
  expect_within(r, k + 1, 2, what, t == DataType::kFloat ? 0 : 0.5);
  EXPECT_NE(r.path.find(path), std::string::npos) << what << " ran on " << r.path;
}

}  // namespace

TEST_F(CudaBlas, PatchConvNhwcViTAndOddSizes) {
  for (DataType t : kTypes) {
    // ViT's patch embedding over 3 channels (a 64x96 image: 24 patches), batch 5 and 1.
    check_patch("NhwcConv", {5, 64, 96, 3}, {48, 16, 16, 3}, t, true);
    check_patch("NhwcConv", {1, 224, 224, 3}, {32, 16, 16, 3}, t, false);
    // 64 channels, 4x4 patches; odd sizes whose last rows and columns fit no window.
    check_patch("NhwcConv", {1, 30, 29, 64}, {40, 4, 4, 64}, t, true);
    check_patch("NhwcConv", {5, 35, 37, 3}, {17, 16, 16, 3}, t, true);
    // Non-square window and odd channel counts (copy units down to one element).
    check_patch("NhwcConv", {2, 13, 17, 5}, {7, 2, 3, 5}, t, true);
  }
}

TEST_F(CudaBlas, PatchConvNchwViTAndOddSizes) {
  for (DataType t : kTypes) {
    check_patch("Conv", {5, 3, 64, 96}, {48, 3, 16, 16}, t, true);
    check_patch("Conv", {1, 3, 224, 224}, {32, 3, 16, 16}, t, false);
    check_patch("Conv", {1, 64, 30, 29}, {40, 64, 4, 4}, t, true);
    check_patch("Conv", {5, 3, 35, 37}, {17, 3, 16, 16}, t, true);
    check_patch("Conv", {2, 5, 13, 17}, {7, 5, 2, 3}, t, true);
    // Explicit kernel_shape, zero pads and VALID are patch convolutions too.
    check_patch("Conv", {2, 3, 32, 32}, {8, 3, 8, 8}, t, true,
                {ints("strides", {8, 8}), ints("kernel_shape", {8, 8}), ints("pads", {0, 0, 0, 0}),
                 ir::Attribute::of_string("auto_pad", "VALID")});
  }
}

// What the path declines runs on cuDNN, still right.
TEST_F(CudaBlas, PatchConvLeavesOtherConvolutionsToCudnn) {
  const DataType t = DataType::kFloat16;
  check_patch("Conv", {1, 3, 32, 32}, {8, 3, 4, 4}, t, true,
              {ints("strides", {4, 4}), ints("pads", {1, 1, 1, 1})}, "cuDNN");
  check_patch("Conv", {1, 3, 32, 32}, {8, 3, 4, 4}, t, true, {ints("strides", {2, 2})}, "cuDNN");
  check_patch("Conv", {1, 8, 16, 16}, {8, 8, 1, 1}, t, true, {ints("strides", {1, 1})}, "cuDNN");
  check_patch("NhwcConv", {1, 32, 32, 3}, {8, 4, 4, 3}, t, true,
              {ints("strides", {4, 4}), ir::Attribute::of_string("activation", "Relu")}, "cuDNN");
  check_patch("Conv", {1, 4, 32, 32}, {8, 2, 4, 4}, t, true,
              {ints("strides", {4, 4}), ir::Attribute::of_int("group", 2)}, "cuDNN");
}

// ViT's patch embedding as the optimiser leaves it for the GPU (decompose_patch_conv: Transpose of the
// patches + Gemm, the chain to [N, P, D] folded into a Reshape; or, with that rule off, NhwcConv on the
// patch path), in float32 on the GPU against the CPU's unoptimised run: every node on the GPU, within
// float32 accumulation error (1e-4 relative + 1e-5 absolute over 768 products of values in [-1, 1)).
TEST_F(CudaBlas, PatchEmbeddingAsOptimisedRunsOnTheGpu) {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", ir::Type::tensor(DataType::kFloat, ir::Shape{ir::Dim::of(5), ir::Dim::of(3),
                                                                     ir::Dim::of(64), ir::Dim::of(48)}));
  auto w = b.initializer(random_tensor(DataType::kFloat, {24, 3, 16, 16}, 41).to_ir("w"));
  auto bias = b.initializer(random_tensor(DataType::kFloat, {24}, 42).to_ir("bias"));
  auto c = b.node("Conv", {x, w, bias}, {ints("strides", {16, 16})});
  auto r = b.node("Reshape", {c, b.constant_ints("s", {5, 24, 12})});
  b.output(b.node("Transpose", {r}, {ints("perm", {0, 2, 1})}), ir::Type::tensor(DataType::kFloat));
  const Feeds feed = {{"x", rt::Value(random_tensor(DataType::kFloat, {5, 3, 64, 48}, 43))}};
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .reference_kernels = true});
  const rt::Tensor want = ref.run(feed)[0].tensor();
  for (bool decompose : {true, false}) {
    rt::SessionOptions o{.optimization = rt::OptLevel::kLayout,
                         .backend = "cuda",
                         .precision = tessera::passes::Precision::kFp32};
    if (!decompose) o.disabled_rules = {"decompose_patch_conv"};
    rt::Session gpu(m, o);
    const rt::Tensor got = gpu.run(feed)[0].tensor();
    EXPECT_EQ(rt::compare_values(rt::Value(want), rt::Value(got), {1e-4, 1e-5}), "") << decompose;
    size_t on_gpu = 0;
    for (const auto& bi : gpu.backends())
      if (bi.name == "cuda") on_gpu += bi.nodes;
    EXPECT_EQ(on_gpu, gpu.model().graph.nodes.size()) << "decompose " << decompose;
    size_t convs = 0;
    for (const auto& n : gpu.model().graph.nodes) convs += n.op_type == "NhwcConv" || n.op_type == "Conv";
    EXPECT_EQ(convs, decompose ? 0u : 1u);
  }
}
