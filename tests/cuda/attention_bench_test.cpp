// Micro-benchmark of the flash attention kernel (com.tessera FusedAttention, float16) at the shapes the
// transformer benchmarks run: BERT-base (S=128, padding bias [B,1,1,S]), GPT-2 (S=128, causal) and
// ViT-B/16 (S=197, Q/K/V read from the packed [S, B, 3, H, D] projection), 12 heads of 64, batch 1 and
// 32. Each one-node model runs a few times with per-node CUDA-event timing; the test prints the best
// time and the TFLOP/s of the two products (4 B H S^2 D, half of it for causal attention). It checks
// only that the node ran on the GPU on the flash path; the figures are for reading. A second line per
// shape ([attention-target]) sets the time against issue 13's target for it (H100), and
// [attention-variant] lines time each block shape the launcher has, forced, at every shape.
//   tessera_cuda_tests --gtest_filter='CudaAttentionBench.*'
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

using ir::Attribute;

struct Shape {
  std::string model;
  int64_t batch, seq;
  double target_us;  // issue 13's goal on the H100 (cuDNN's SDPA: 6.9 / 14.4 / 6.5 / 11.1 / 7.6 / 25.8 us)
};

// One FusedAttention node as fuse_attention makes it for each model (12 heads of 64, scale 1/8).
OneNode attention_node(const std::string& model, int64_t batch, int64_t seq, uint32_t seed) {
  constexpr int64_t kH = 12, kD = 64;
  const DataType h = DataType::kFloat16;
  const std::vector<int64_t> bshd = {0, 2, 1, 3}, vit = {1, 3, 0, 4}, sbhd = {1, 2, 0, 3};
  const bool packed = model == "vit";
  const std::vector<int64_t>& in_axes = packed ? vit : bshd;
  OneNode n = node("FusedAttention", 17,
                   {Attribute::of_float("scale", 0.125f), Attribute::of_ints("q_axes", in_axes),
                    Attribute::of_ints("k_axes", in_axes), Attribute::of_ints("v_axes", in_axes),
                    Attribute::of_ints("y_axes", packed ? sbhd : bshd),
                    Attribute::of_int("causal", model == "gpt2" ? 1 : 0)});
  n.domain = "com.tessera";
  if (packed) {
    n.attrs.push_back(Attribute::of_int("k_part", 1));
    n.attrs.push_back(Attribute::of_int("v_part", 2));
    rt::Tensor qkv = random_tensor(h, {seq, batch, 3, kH, kD}, -2, 2, seed);
    n.inputs = {qkv, qkv, qkv};
    return n;
  }
  for (uint32_t k = 0; k < 3; ++k)
    n.inputs.push_back(random_tensor(h, {batch, seq, kH, kD}, -2, 2, seed + k));
  if (model == "bert") n.inputs.push_back(random_tensor(h, {batch, 1, 1, seq}, -1, 0, seed + 3));
  return n;
}

class CudaAttentionBench : public CudaOps {};

TEST_F(CudaAttentionBench, FlashAttentionAtModelShapes) {
  const std::vector<Shape> shapes = {{"bert", 1, 128, 7},   {"bert", 32, 128, 15}, {"gpt2", 1, 128, 7},
                                     {"gpt2", 32, 128, 12}, {"vit", 1, 197, 7},    {"vit", 32, 197, 28}};
  uint32_t seed = 1;
  for (const auto& s : shapes) {
    const OneNode n = attention_node(s.model, s.batch, s.seq, seed);
    seed += 4;
    const Timed t = time_node(n, 10);
    const std::string what = fmt::format("{} b{} s{}", s.model, s.batch, s.seq);
    EXPECT_TRUE(t.on_gpu) << what << " did not run on the GPU";
    EXPECT_EQ(t.path, "flash") << what;
    double flop = 4.0 * static_cast<double>(s.batch * 12 * s.seq * s.seq * 64);
    if (s.model == "gpt2") flop /= 2;
    fmt::print("[attention] {:<16} {:8.1f} us {:7.1f} TFLOP/s\n", what, t.best_us, flop / (t.best_us * 1e6));
    fmt::print("[attention-target] {:<16} {:8.1f} us target {:5.1f} us: {}\n", what, t.best_us, s.target_us,
               t.best_us <= s.target_us ? "met" : "not met");
  }
  // The same shapes with each block shape and grid plan forced (TESSERA_FLASH_BLOCK, attention_flash.cu):
  // which one the launcher should pick where (rows128 and split16 at b32 lost to rows64 at 07:02, and auto
  // takes split16 at b1). "+plain": the blocks and grid order of 2026-11-25 07:00;
  // "+tail": a last block of <= 16 rows (ViT: 5) splits its keys among its 4 warps; "+order": query blocks
  // on the grid's z axis (short last blocks dispatched last, causal heavy blocks first); "split32": 2 groups
  // of 16 rows, each split between 2 warps (twice the blocks of rows64: b32 BERT/GPT-2 fill 2.9 waves,
  // not 1.45).
  for (const char* shape : {"rows64+plain", "split32+plain", "rows64+tail", "rows64+order",
                            "rows64+tail+order", "split32+order", "auto+order", "auto+tail+order"}) {
    setenv("TESSERA_FLASH_BLOCK", shape, 1);
    for (const auto& s : shapes) {
      const Timed t = time_node(attention_node(s.model, s.batch, s.seq, 7), 10);
      fmt::print("[attention-variant] {:<16} {:<18} {:8.1f} us\n",
                 fmt::format("{} b{} s{}", s.model, s.batch, s.seq), shape, t.best_us);
    }
  }
  unsetenv("TESSERA_FLASH_BLOCK");
}

}  // namespace
}  // namespace tessera::cuda_test
