// Effective memory bandwidth of the memory-bound kernels at the sizes the transformer benchmarks run
// (ViT-B/16, BERT, GPT-2 at batch 32, float16): each one-node model runs a few times on the GPU with
// per-node CUDA-event timing, and the test prints the bytes each node reads and writes over its best
// time. It checks only that the node ran on the GPU; the figures are for reading (H100 HBM3: ~3 TB/s).
//   tessera_cuda_tests --gtest_filter='CudaBandwidth.*'
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

void report(const std::string& what, const OneNode& c, double bytes) {
  const Timed t = time_node(c, 5);
  EXPECT_TRUE(t.on_gpu) << what << " did not run on the GPU";
  fmt::print("[bandwidth] {:<48} {:8.1f} us {:7.0f} GB/s\n", what, t.best_us, bytes / (t.best_us * 1e3));
}

class CudaBandwidth : public CudaOps {};

TEST_F(CudaBandwidth, MemoryBoundKernels) {
  const DataType h = DataType::kFloat16;
  const double e = 2;  // bytes per element
  rt::Tensor act = random_tensor(h, {32, 197, 768}, -2, 2, 1);
  const double act_bytes = e * static_cast<double>(act.numel());
  {
    OneNode n = node("Transpose", 17, {ir::Attribute::of_ints("perm", {1, 0, 2})});
    n.inputs = {act};
    report("Transpose [32,197,768] perm 1,0,2", n, 2 * act_bytes);
  }
  rt::Tensor heads = random_tensor(h, {32, 197, 12, 64}, -2, 2, 2);
  {
    OneNode n = node("Transpose", 17, {ir::Attribute::of_ints("perm", {0, 2, 1, 3})});
    n.inputs = {heads};
    report("Transpose [32,197,12,64] perm 0,2,1,3", n, 2 * act_bytes);
    OneNode k = node("Transpose", 17, {ir::Attribute::of_ints("perm", {0, 2, 3, 1})});
    k.inputs = {heads};
    report("Transpose [32,197,12,64] perm 0,2,3,1 (K^T)", k, 2 * act_bytes);
  }
  {
    OneNode n = node("SkipLayerNormalization", 17, {ir::Attribute::of_float("epsilon", 1e-5f)});
    n.domain = "com.microsoft";
    n.outputs = 4;
    n.inputs = {act, random_tensor(h, {32, 197, 768}, -1, 1, 3), random_tensor(h, {768}, -1, 1, 4),
                random_tensor(h, {768}, -1, 1, 5)};
    report("SkipLayerNormalization [32,197,768]", n, 4 * act_bytes);  // x, skip in; y, sum out
    OneNode l = node("LayerNormalization", 17, {ir::Attribute::of_int("axis", -1)});
    l.inputs = {act, random_tensor(h, {768}, -1, 1, 6), random_tensor(h, {768}, -1, 1, 7)};
    report("LayerNormalization [32,197,768]", l, 2 * act_bytes);
  }
  {
    rt::Tensor scores = random_tensor(h, {32, 12, 197, 197}, -8, 8, 8);
    OneNode n = node("Softmax", 13, {ir::Attribute::of_int("axis", -1)});
    n.inputs = {scores};
    report("Softmax [32,12,197,197]", n, 2 * e * static_cast<double>(scores.numel()));
  }
  {
    rt::Tensor qkv = random_tensor(h, {3, 32, 197, 768}, -2, 2, 9);
    OneNode n = node("Gather", 13, {ir::Attribute::of_int("axis", 0)});
    n.inputs = {qkv, rt::Tensor::scalar<int64_t>(DataType::kInt64, 1)};
    report("Gather [3,32,197,768] axis 0 one index", n, 2 * act_bytes);
  }
  {
    rt::Tensor mask = random_tensor(DataType::kBool, {1, 1, 128, 128}, 0, 1, 10);
    rt::Tensor scores = random_tensor(h, {32, 12, 128, 128}, -8, 8, 11);
    OneNode n = node("Where", 16);
    n.inputs = {mask, scores, random_tensor(h, {1}, -1, 0, 12)};
    report("Where [32,12,128,128] causal mask", n, 2 * e * static_cast<double>(scores.numel()));
  }
}

}  // namespace
}  // namespace tessera::cuda_test
