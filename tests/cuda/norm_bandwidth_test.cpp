// Achieved memory bandwidth of the row normalisations, BiasGelu and the image-input transpose at the
// sizes of the transformer and CNN benchmarks (BERT/GPT-2 [32,128,768] and batch 1, ViT [32,197,768],
// the MLP's [32,128,3072], an image batch [32,3,224,224], ViT's K^T [384,197,64]): each one-node model runs
// 20 times on the GPU with per-node CUDA-event timing; the test prints the best time and the bytes read and
// written over it (H100 HBM3: ~3 TB/s; batch-1 sizes fit in L2 and show the launch floor instead). It checks
// only that each node ran on the GPU.
//   tessera_cuda_tests --gtest_filter='CudaNormBandwidth.*'
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

void report(const std::string& what, const OneNode& c, double bytes) {
  const Timed t = time_node(c, 20);
  EXPECT_TRUE(t.on_gpu) << what << " did not run on the GPU";
  const double us = t.best_us;
  fmt::print("[norm-bandwidth] {:<52} {:8.2f} us {:7.0f} GB/s\n", what, us, bytes / (us * 1e3));
}

class CudaNormBandwidth : public CudaOps {};

OneNode skip_layer_norm(const rt::Shape& shape, size_t outputs, uint32_t seed, bool sum_bias = true) {
  const DataType h = DataType::kFloat16;
  const int64_t n = shape.back();
  OneNode c = node("SkipLayerNormalization", 17, {ir::Attribute::of_float("epsilon", 1e-5f)});
  c.domain = "com.microsoft";
  c.outputs = outputs;
  c.inputs = {random_tensor(h, shape, -2, 2, seed), random_tensor(h, shape, -1, 1, seed + 1),
              random_tensor(h, {n}, -1, 1, seed + 2), random_tensor(h, {n}, -1, 1, seed + 3),
              random_tensor(h, {n}, -1, 1, seed + 4)};
  if (!sum_bias) c.inputs.pop_back();
  return c;
}

double elems(const rt::Shape& s) {
  double n = 1;
  for (int64_t d : s) n *= static_cast<double>(d);
  return n;
}

TEST_F(CudaNormBandwidth, RowNormalizations) {
  for (const rt::Shape& s : {rt::Shape{32, 128, 768}, rt::Shape{1, 128, 768}, rt::Shape{32, 197, 768}}) {
    // x and skip in, y out (BERT's form); with the sum output too (ViT's): one more tensor written.
    report(fmt::format("SkipLayerNormalization f16 {}", rt::shape_str(s)), skip_layer_norm(s, 1, 10),
           3 * 2 * elems(s));
    report(fmt::format("SkipLayerNormalization f16 {} +sum", rt::shape_str(s)), skip_layer_norm(s, 4, 20),
           4 * 2 * elems(s));
    // What fuse_skip_layer_norm makes of BERT's post-LN residual (x, skip, gamma, beta; the output
    // alone): the kernel's lean instantiation.
    report(fmt::format("SkipLayerNormalization f16 {} no bias", rt::shape_str(s)),
           skip_layer_norm(s, 1, 30, false), 3 * 2 * elems(s));
  }
  for (DataType t : {DataType::kFloat16, DataType::kFloat}) {
    const rt::Shape s{32, 197, 768};
    OneNode l = node("LayerNormalization", 17, {ir::Attribute::of_int("axis", -1)});
    l.inputs = {random_tensor(t, s, -2, 2, 30), random_tensor(t, {768}, -1, 1, 31),
                random_tensor(t, {768}, -1, 1, 32)};
    const double e = t == DataType::kFloat ? 4 : 2;
    report(fmt::format("LayerNormalization {} {}", type_name(t), rt::shape_str(s)), l, 2 * e * elems(s));
  }
}

TEST_F(CudaNormBandwidth, BiasGelu) {
  const DataType h = DataType::kFloat16;
  for (const rt::Shape& s : {rt::Shape{32, 128, 3072}, rt::Shape{32, 197, 3072}, rt::Shape{1, 128, 3072}}) {
    OneNode c = node("BiasGelu", 17);
    c.domain = "com.microsoft";
    c.inputs = {random_tensor(h, s, -4, 4, 40), random_tensor(h, {3072}, -1, 1, 41)};
    report(fmt::format("BiasGelu f16 {}", rt::shape_str(s)), c, 2 * 2 * elems(s));
  }
}

TEST_F(CudaNormBandwidth, ShortSideTransposes) {
  for (DataType t : {DataType::kFloat16, DataType::kFloat}) {
    const rt::Shape s{32, 3, 224, 224};
    OneNode c = node("Transpose", 17, {ir::Attribute::of_ints("perm", {0, 2, 3, 1})});
    c.inputs = {random_tensor(t, s, -2, 2, 50)};
    const double e = t == DataType::kFloat ? 4 : 2;
    report(fmt::format("Transpose NCHW->NHWC {} {}", type_name(t), rt::shape_str(s)), c, 2 * e * elems(s));
  }
  // ViT-B/16's K^T at batch 32: [B*H, S, D] -> [B*H, D, S].
  const rt::Shape k{384, 197, 64};
  OneNode c = node("Transpose", 17, {ir::Attribute::of_ints("perm", {0, 2, 1})});
  c.inputs = {random_tensor(DataType::kFloat16, k, -2, 2, 51)};
  report(fmt::format("Transpose K^T f16 {}", rt::shape_str(k)), c, 2 * 2 * elems(k));
}

}  // namespace
}  // namespace tessera::cuda_test
