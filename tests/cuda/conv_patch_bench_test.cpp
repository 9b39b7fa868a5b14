// ViT-B/16's patch embedding at batch 32 (16x16 stride 16 over [32, 3, 224, 224] into 768 channels,
// float16, 7.4 GFLOP) on the patch path (patch copy + cuBLASLt, conv_patch_kernels.cpp) and on cuDNN
// (TESSERA_CUDA_PATCH_GEMM=off), as NhwcConv (what the NHWC layout pass makes of it) and as Conv: best
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

TEST_F(CudaPatchConvBench, VitB16PatchEmbeddingBatch32) {
  report("NhwcConv f16 patch GEMM", true, true);
  report("NhwcConv f16 cuDNN", true, false);
  report("Conv NCHW f16 patch GEMM", false, true);
  report("Conv NCHW f16 cuDNN", false, false);
}

}  // namespace
}  // namespace tessera::cuda_test
