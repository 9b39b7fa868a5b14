// The flash attention kernel's edge cases against the CPU's reference kernels (double arithmetic), each
// one asserted to take the flash path: query lengths that are not multiples of 16 or 64 (warps with no
// real row, a last key tile cut inside a 16-key step), causal attention whose warps skip the key steps
// past their rows, q_seq != kv_seq both ways, head sizes 80 and 128, key-split blocks (small grids: 4
// warps on 16 rows, one or several stages of 256 keys) and 4-warp blocks of 64 rows, the row-bias path with
// pairs (even slices) and single keys (odd slices, a short mask), rows whose every key is masked (zeros), and
// a negative scale (the general path).
//
// Tolerances as in attention_test.cpp: the flash kernel rounds each probability to the element type
// before P V and the output once, so 2 ulp of the type relative plus 2 ulp absolute (|V| <= 1). The
// exponentials' ex2.approx adds ~2 ulp of float32, far below either.
#include <cstdlib>
#include <optional>

#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

using ir::Attribute;

double tol(DataType t) {
  return 2 * type_eps(t);
}

// Runs the case on both backends, asserts the flash path, compares.
void expect_flash_matches(const OneNode& n, DataType t, const std::string& what) {
  const Timed run = time_node(n, 1);
  EXPECT_TRUE(run.on_gpu) << what;
  EXPECT_EQ(run.path, "flash") << what;
  expect_matches(n, tol(t), tol(t), what);
}

struct FlashCase {
  std::string what;
  rt::Shape q, kv;  // [B, S, H, D]
  bool causal = false;
  // Padding bias [B,1,1,kv_seq]: batch b's last pad[b] keys at -10000 (or -inf when every key is
  // padded), the others in [-1, 0].
  std::vector<int64_t> pad;
};

OneNode fused_node(const FlashCase& c, DataType t, uint32_t& seed) {
  const std::vector<int64_t> bshd = {0, 2, 1, 3};
  OneNode n = node("FusedAttention", 17,
                   {Attribute::of_float("scale", 0.125f), Attribute::of_ints("q_axes", bshd),
                    Attribute::of_ints("k_axes", bshd), Attribute::of_ints("v_axes", bshd),
                    Attribute::of_ints("y_axes", bshd), Attribute::of_int("causal", c.causal ? 1 : 0)});
  n.domain = "com.tessera";
  // Q and K in [-2, 2]: scores of a few units, so the running max moves between key tiles.
  n.inputs = {random_tensor(t, c.q, -2, 2, seed++), random_tensor(t, c.kv, -2, 2, seed++),
              random_tensor(t, c.kv, -1, 1, seed++)};
  n.absent = {false, false, false};
  if (c.pad.empty()) return n;
  const int64_t batch = c.q[0], keys = c.kv[1];
  std::mt19937 rng(seed++);
  std::uniform_real_distribution<float> d(-1, 0);
  std::vector<float> bias(static_cast<size_t>(batch * keys));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t pad = c.pad[static_cast<size_t>(b)];
    const float fill = pad >= keys ? -INFINITY : -10000.0f;
    for (int64_t j = 0; j < keys; ++j)
      bias[static_cast<size_t>(b * keys + j)] = j >= keys - pad ? fill : d(rng);
  }
  n.inputs.push_back(floats(t, {batch, 1, 1, keys}, bias));
  n.absent.push_back(false);
  return n;
}

// 4-warp blocks of 64 rows need (q_seq / 64) * heads * batch >= the SM count (132 on an H100); the small
// cases run key-split blocks of 16 rows.
TEST_F(CudaOps, FlashAttentionEdgeShapes) {
  const std::vector<FlashCase> cases = {
      {"b1 s100 causal (key split, tail of 4 rows)", {1, 100, 12, 64}, {1, 100, 12, 64}, true, {}},
      {"b6 s69 causal (4-warp, 3 warps without rows)", {6, 69, 12, 64}, {6, 69, 12, 64}, true, {}},
      {"b6 s69 plain", {6, 69, 12, 64}, {6, 69, 12, 64}, false, {}},
      {"b9 q70 kv200 d80 causal bias",
       {9, 70, 8, 80},
       {9, 200, 8, 80},
       true,
       {0, 3, 64, 65, 100, 130, 7, 9, 1}},
      {"b2 q70 kv200 d80 bias (key split)", {2, 70, 8, 80}, {2, 200, 8, 80}, false, {5, 77}},
      {"b12 q200 kv70 d128 causal", {12, 200, 4, 128}, {12, 70, 4, 128}, true, {}},
      {"b2 q33 kv70 d128 (key split)", {2, 33, 4, 128}, {2, 70, 4, 128}, false, {}},
      {"b4 s197 bias, batch 1 all masked", {4, 197, 12, 64}, {4, 197, 12, 64}, false, {13, 197, 0, 60}},
      {"b4 s128 bias, batch 2 all masked", {4, 128, 12, 64}, {4, 128, 12, 64}, false, {13, 1, 128, 64}},
      {"b1 s128 bias, all masked (key split)", {1, 128, 12, 64}, {1, 128, 12, 64}, false, {128}},
      {"b1 s17 kv 9 causal", {1, 17, 2, 64}, {1, 9, 2, 64}, true, {}},
      {"b1 q33 kv600 d80 bias (3 key-split stages)", {1, 33, 2, 80}, {1, 600, 2, 80}, false, {77}},
      {"b1 s300 causal d32 (2 key-split stages)", {1, 300, 3, 32}, {1, 300, 3, 32}, true, {}},
  };
  uint32_t seed = 900;
  for (const auto& c : cases) {
    for (DataType t : {DataType::kFloat16, DataType::kBFloat16}) {
      const OneNode n = fused_node(c, t, seed);
      const std::string what = label(c.what, type_name(t));
      expect_flash_matches(n, t, what);
      // Rows of a batch whose every key is padded with -inf are zeros.
      const int64_t batch = c.q[0], heads = c.q[2], seq = c.q[1], d = c.q[3];
      if (c.pad.empty()) continue;
      Outputs r = run_both(n);
      for (int64_t b = 0; b < batch; ++b) {
        if (c.pad[static_cast<size_t>(b)] < c.kv[1]) continue;
        double worst = 0;
        for (int64_t x = 0; x < seq * heads * d; ++x)
          worst = std::max(worst, std::fabs(r.gpu[0].to_double(b * seq * heads * d + x)));
        EXPECT_EQ(worst, 0.0) << what << ": batch " << b << " has every key masked";
      }
    }
  }
}

// TESSERA_FLASH_BLOCK set for the scope (the launcher's block shape, see attention_flash.cu), then
// restored.
class ForcedBlock {
 public:
  explicit ForcedBlock(const char* shape) {
    if (const char* v = std::getenv("TESSERA_FLASH_BLOCK")) old_ = v;
    setenv("TESSERA_FLASH_BLOCK", shape, 1);
  }
  ~ForcedBlock() {
    if (old_)
      setenv("TESSERA_FLASH_BLOCK", old_->c_str(), 1);
    else
      unsetenv("TESSERA_FLASH_BLOCK");
  }

 private:
  std::optional<std::string> old_;
};

// Every block shape and grid plan the launcher has, forced, on shapes where it is not the automatic
// choice: 64-row blocks on small grids, 128-row blocks (8 warps, head size 64; other heads fall back to 64
// rows), key-split 16-row blocks on any grid and 32-row blocks of 2 key-split groups (head size 64; others
// fall back to 16 rows); a last block of at most 16 rows whose 4 warps split its keys ("+tail": tails of
// 3, 5, 6 and 16 rows, causal, with a padding bias, a batch with every key masked, head size 128, the
// general path through a negative scale), query blocks on the grid's z axis ("+order": ascending, causal
// descending). Padding bias, causal, q_seq != kv_seq.
TEST_F(CudaOps, FlashAttentionEveryBlockShape) {
  const std::vector<FlashCase> cases = {
      {"b2 s128 bias", {2, 128, 12, 64}, {2, 128, 12, 64}, false, {0, 40}},
      {"b2 s197 causal", {2, 197, 6, 64}, {2, 197, 6, 64}, true, {}},
      {"b1 q70 kv300 bias", {1, 70, 4, 64}, {1, 300, 4, 64}, false, {100}},
      {"b2 s100 d80 causal bias", {2, 100, 4, 80}, {2, 100, 4, 80}, true, {3, 50}},
      {"b3 s197 bias, batch 2 all masked", {3, 197, 2, 64}, {3, 197, 2, 64}, false, {0, 150, 197}},
      {"b2 s80 d128 bias (tail of 16 rows)", {2, 80, 4, 128}, {2, 80, 4, 128}, false, {0, 17}},
  };
  uint32_t seed = 1700;
  // "+tail" and "+order" are independent switches: one variant has both.
  for (const char* shape : {"rows64+plain", "rows128+plain", "split16+plain", "rows64+tail+order",
                            "rows128+order", "split16+order", "split32+order"}) {
    ForcedBlock forced(shape);
    for (const auto& c : cases)
      for (DataType t : {DataType::kFloat16, DataType::kBFloat16})
        expect_flash_matches(fused_node(c, t, seed), t, label(c.what, shape, type_name(t)));
    // The general path (a negative scale) with a tail of 3 rows.
    OneNode n = node("Attention", 23, {Attribute::of_float("scale", -0.25f)});
    n.inputs = {random_tensor(DataType::kFloat16, {2, 4, 67, 64}, -2, 2, seed++),
                random_tensor(DataType::kFloat16, {2, 4, 67, 64}, -2, 2, seed++),
                random_tensor(DataType::kFloat16, {2, 4, 67, 64}, -1, 1, seed++)};
    expect_flash_matches(n, DataType::kFloat16, label("negative scale q67", shape));
  }
}

// ONNX Attention cases that reach the flash kernel's other paths: a float32 additive mask [B,1,1,S] on
// float16/bfloat16 Q/K/V (row bias, float2 pairs), a short rank-1 mask (30 of 50 keys: the row-bias path
// with the key bound cut inside a tile), a causal decode step after a past cache (positions offset by the
// past length) and a negative scale (the general path: the plain one takes the maximum before scaling).
TEST_F(CudaOps, FlashAttentionOnnxPaths) {
  uint32_t seed = 1300;
  for (DataType t : {DataType::kFloat16, DataType::kBFloat16}) {
    {
      OneNode n = node("Attention", 23);
      n.inputs = {random_tensor(t, {2, 4, 64, 64}, -2, 2, seed++),
                  random_tensor(t, {2, 4, 192, 64}, -2, 2, seed++),
                  random_tensor(t, {2, 4, 192, 64}, -1, 1, seed++),
                  random_tensor(DataType::kFloat, {2, 1, 1, 192}, -3, 0, seed++)};
      expect_flash_matches(n, t, label("float mask [B,1,1,S]", type_name(t)));
    }
    {
      OneNode n = node("Attention", 23);
      n.inputs = {random_tensor(t, {1, 2, 20, 64}, -2, 2, seed++),
                  random_tensor(t, {1, 2, 50, 64}, -2, 2, seed++),
                  random_tensor(t, {1, 2, 50, 64}, -1, 1, seed++), random_tensor(t, {30}, -3, 0, seed++)};
      expect_flash_matches(n, t, label("short rank-1 mask", type_name(t)));
    }
    {
      OneNode n = node("Attention", 23, {Attribute::of_int("is_causal", 1)});
      n.inputs = {
          random_tensor(t, {1, 4, 5, 64}, -2, 2, seed++),  random_tensor(t, {1, 4, 5, 64}, -2, 2, seed++),
          random_tensor(t, {1, 4, 5, 64}, -1, 1, seed++),  rt::Tensor::zeros(t, {1}),
          random_tensor(t, {1, 4, 35, 64}, -2, 2, seed++), random_tensor(t, {1, 4, 35, 64}, -1, 1, seed++)};
      n.absent = {false, false, false, true, false, false};
      n.outputs = 3;
      expect_flash_matches(n, t, label("causal after a past cache", type_name(t)));
    }
    {
      OneNode n = node("Attention", 23, {Attribute::of_float("scale", -0.25f)});
      n.inputs = {random_tensor(t, {2, 4, 67, 64}, -2, 2, seed++),
                  random_tensor(t, {2, 4, 67, 64}, -2, 2, seed++),
                  random_tensor(t, {2, 4, 67, 64}, -1, 1, seed++)};
      expect_flash_matches(n, t, label("negative scale", type_name(t)));
    }
  }
}

}  // namespace
}  // namespace tessera::cuda_test
