// ViT-B/16's patch embedding at batch 32 (16x16 stride 16 over [32, 3, 224, 224] into 768 channels,
// float16, 7.4 GFLOP) on the patch path (patch copy + cuBLASLt, conv_patch_kernels.cpp) and on cuDNN
// (TESSERA_CUDA_PATCH_GEMM=off), as NhwcConv (what the NHWC layout pass makes of it) and as Conv, and
// the Transpose + Gemm that decompose_patch_conv makes of it (the default for optimised sessions): best
// per-node device time of 10 runs and TFLOP/s. It checks only that the node ran on the GPU and which path
// it took.
//   tessera_cuda_tests --gtest_filter='CudaPatchConvBench.*'
#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

class CudaPatchConvBench : public CudaOps {};

void report(const std::string& what, bool nhwc, bool patch) {
  const DataType h = DataType::kFloat16;
  const rt::Shape x = nhwc ? rt::Shape{32, 224, 224, 3} : rt::Shape{32, 3, 224, 224};
  const rt::Shape w = nhwc ? rt::Shape{768, 16, 16, 3} : rt::Shape{768, 3, 16, 16};
  OneNode c = node(nhwc ? "NhwcConv" : "Conv", 17, {ir::Attribute::of_ints("strides", {16, 16})});
  if (nhwc) c.domain = "com.tessera";
  c.inputs = {random_tensor(h, x, -1, 1, 1), random_tensor(h, w, -0.1, 0.1, 2),
              random_tensor(h, {768}, -1, 1, 3)};
  if (!patch) setenv("TESSERA_CUDA_PATCH_GEMM", "off", 1);
  const Timed t = time_node(c, 10);
  unsetenv("TESSERA_CUDA_PATCH_GEMM");
  EXPECT_TRUE(t.on_gpu) << what << " did not run on the GPU";
  EXPECT_EQ(t.path.find("patch GEMM") != std::string::npos, patch) << what << ": " << t.path;
  const double flop = 2.0 * 32 * 196 * 768 * 768;
  fmt::print("[patch-conv] {:<34} {:8.2f} us {:6.1f} TFLOP/s  {}\n", what, t.best_us,
             flop / (t.best_us * 1e6), t.path);
}

// The two nodes decompose_patch_conv makes of it: the patches' Transpose (a strided copy) and the Gemm.
void report_decomposed() {
  const DataType h = DataType::kFloat16;
  OneNode t = node("Transpose", 17, {ir::Attribute::of_ints("perm", {0, 2, 4, 1, 3, 5})});
  t.inputs = {random_tensor(h, {32, 3, 14, 16, 14, 16}, -1, 1, 4)};
  const Timed tt = time_node(t, 10);
  EXPECT_TRUE(tt.on_gpu);
  const double bytes = 2.0 * 2 * 32 * 3 * 224 * 224;
  fmt::print("[patch-conv] {:<34} {:8.2f} us {:6.0f} GB/s\n", "patches Transpose f16", tt.best_us,
             bytes / (tt.best_us * 1e3));
  OneNode g = node("Gemm", 17, {ir::Attribute::of_int("transB", 1)});
  g.inputs = {random_tensor(h, {32 * 196, 768}, -1, 1, 5), random_tensor(h, {768, 768}, -0.1, 0.1, 6),
              random_tensor(h, {768}, -1, 1, 7)};
  const Timed tg = time_node(g, 10);
  EXPECT_TRUE(tg.on_gpu);
  const double flop = 2.0 * 32 * 196 * 768 * 768;
  fmt::print("[patch-conv] {:<34} {:8.2f} us {:6.1f} TFLOP/s  {}\n", "Gemm f16 [6272,768]x[768,768]^T+b",
             tg.best_us, flop / (tg.best_us * 1e6), tg.path);
}

TEST_F(CudaPatchConvBench, VitB16PatchEmbeddingBatch32) {
  report_decomposed();
  report("NhwcConv f16 patch GEMM", true, true);
  report("NhwcConv f16 cuDNN", true, false);
  report("Conv NCHW f16 patch GEMM", false, true);
  report("Conv NCHW f16 cuDNN", false, false);
}

}  // namespace
}  // namespace tessera::cuda_test
