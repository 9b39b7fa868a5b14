// The CUDA ONNX Attention and com.tessera FusedAttention against the CPU's reference kernels (double
// arithmetic): 3-D and 4-D inputs, grouped key/value heads, float and boolean masks with broadcasting,
// causal and window limits, softcap, past/present caches, every qk_matmul_output mode, nonpad lengths,
// fully masked rows, head sizes the flash kernel takes (multiples of 16 up to 128) and others (the row
// kernel).
//
// Tolerances. float32 runs the row kernel: float32 dot products and sums over at most a few hundred
// terms of magnitude <= a few units: 2e-5 absolute, 1e-4 relative. float16/bfloat16 round once when
// storing, and the flash kernel also rounds each probability to the element type before P V: with
// |V| <= 1 that adds at most one unit of the type's rounding (2^-11 / 2^-8) of max|V| to Y, so 2 ulp of
// the type relative plus 2 ulp absolute. The qk_matmul output (scores up to ~10) gets 4 ulp relative.
#include "reduce_test_util.h"

namespace tessera::cuda_test {
namespace {

using ir::Attribute;

double rtol_of(DataType t) {
  return t == DataType::kFloat ? 1e-4 : 2 * type_eps(t);
}
double atol_of(DataType t) {
  return t == DataType::kFloat ? 2e-5 : 2 * type_eps(t);
}

rt::Tensor bool_tensor(rt::Shape shape, uint32_t seed, double p_true) {
  std::mt19937 rng(seed);
  std::bernoulli_distribution d(p_true);
  rt::Tensor out = rt::Tensor::zeros(DataType::kBool, std::move(shape));
  for (int64_t i = 0; i < out.numel(); ++i) out.data<bool>()[i] = d(rng);
  return out;
}

struct AttnCase {
  std::string what;
  int opset = 23;
  rt::Shape q, k, v;
  std::vector<Attribute> attrs;
  std::optional<rt::Shape> mask;
  DataType mask_type = DataType::kFloat;
  std::optional<rt::Shape> past_k, past_v;
  size_t outputs = 1;
  std::vector<int64_t> nonpad;
};

AttnCase make_case(std::string what, int opset, rt::Shape q, rt::Shape k, rt::Shape v,
                   std::vector<Attribute> attrs = {}, std::optional<rt::Shape> mask = std::nullopt,
                   DataType mask_type = DataType::kFloat) {
  AttnCase c;
  c.what = std::move(what);
  c.opset = opset;
  c.q = std::move(q), c.k = std::move(k), c.v = std::move(v);
  c.attrs = std::move(attrs);
  c.mask = std::move(mask);
  c.mask_type = mask_type;
  return c;
}

void check_attention(const AttnCase& c, DataType t, uint32_t& seed) {
  OneNode n = node("Attention", c.opset, c.attrs);
  n.inputs = {random_tensor(t, c.q, -1, 1, seed++), random_tensor(t, c.k, -1, 1, seed++),
              random_tensor(t, c.v, -1, 1, seed++)};
  n.absent = {false, false, false};
  auto optional = [&](bool present, rt::Tensor tensor) {
    n.inputs.push_back(present ? std::move(tensor) : rt::Tensor::zeros(t, {1}));
    n.absent.push_back(!present);
  };
  if (c.mask) {
    optional(true, c.mask_type == DataType::kBool ? bool_tensor(*c.mask, seed++, 0.7)
                                                  : random_tensor(c.mask_type, *c.mask, -2, 2, seed++));
  } else if (c.past_k || !c.nonpad.empty()) {
    optional(false, {});
  }
  if (c.past_k) {
    optional(true, random_tensor(t, *c.past_k, -1, 1, seed++));
    optional(true, random_tensor(t, *c.past_v, -1, 1, seed++));
  } else if (!c.nonpad.empty()) {
    optional(false, {});
    optional(false, {});
  }
  if (!c.nonpad.empty()) optional(true, ints({static_cast<int64_t>(c.nonpad.size())}, c.nonpad));
  n.outputs = c.outputs;
  const double scale = c.outputs == 4 ? 2.0 : 1.0;
  expect_matches(n, scale * rtol_of(t), atol_of(t), label(c.what, type_name(t)));
}

TEST_F(CudaOps, AttentionMatchesTheReference) {
  const std::vector<Attribute> causal = {Attribute::of_int("is_causal", 1)};
  const std::vector<Attribute> heads_8_2 = {Attribute::of_int("q_num_heads", 8),
                                            Attribute::of_int("kv_num_heads", 2)};
  std::vector<AttnCase> cases = {
      make_case("4d plain d64", 23, {2, 4, 67, 64}, {2, 4, 67, 64}, {2, 4, 67, 64}),
      make_case("4d causal d64 long", 23, {2, 4, 300, 64}, {2, 4, 300, 64}, {2, 4, 300, 64}, causal),
      make_case("4d gqa d128 cross", 23, {1, 8, 130, 128}, {1, 2, 77, 128}, {1, 2, 77, 128}),
      make_case("4d d32 float mask 2d", 23, {2, 3, 40, 32}, {2, 3, 90, 32}, {2, 3, 90, 32}, {},
                rt::Shape{40, 90}),
      make_case("4d bool mask 4d", 23, {2, 3, 70, 64}, {2, 3, 70, 64}, {2, 3, 70, 64}, {},
                rt::Shape{2, 1, 70, 70}, DataType::kBool),
      make_case("4d short mask", 23, {1, 2, 20, 64}, {1, 2, 50, 64}, {1, 2, 50, 64}, {},
                rt::Shape{1, 20, 30}),
      make_case("4d d40 row kernel", 23, {2, 3, 33, 40}, {2, 3, 45, 40}, {2, 3, 45, 24}),
      make_case("3d gqa d32", 23, {2, 50, 256}, {2, 70, 64}, {2, 70, 64}, heads_8_2),
      make_case("3d gqa mask", 23, {2, 50, 256}, {2, 50, 64}, {2, 50, 64}, heads_8_2,
                rt::Shape{2, 1, 50, 50}),
      make_case("softcap", 23, {2, 2, 30, 64}, {2, 2, 30, 64}, {2, 2, 30, 64},
                {Attribute::of_float("softcap", 2.0f), Attribute::of_float("scale", 0.5f)}),
  };
  AttnCase past = make_case("past and present causal", 23, {2, 4, 10, 64}, {2, 2, 10, 64}, {2, 2, 10, 64},
                            causal, rt::Shape{2, 4, 10, 31});
  past.past_k = rt::Shape{2, 2, 21, 64};
  past.past_v = rt::Shape{2, 2, 21, 64};
  past.outputs = 3;
  cases.push_back(past);
  AttnCase past3d = make_case("3d past and present", 23, {2, 7, 256}, {2, 7, 64}, {2, 7, 32}, heads_8_2);
  past3d.past_k = rt::Shape{2, 2, 5, 32};
  past3d.past_v = rt::Shape{2, 2, 5, 16};
  past3d.outputs = 3;
  cases.push_back(past3d);
  for (int mode = 0; mode < 4; ++mode) {
    AttnCase qk =
        make_case(fmt::format("qk output mode {}", mode), 23, {2, 2, 9, 16}, {2, 2, 12, 16}, {2, 2, 12, 16},
                  {Attribute::of_int("qk_matmul_output_mode", mode), Attribute::of_float("softcap", 3.0f)},
                  rt::Shape{2, 2, 9, 12});
    qk.past_k = rt::Shape{2, 2, 0, 16};
    qk.past_v = rt::Shape{2, 2, 0, 16};
    qk.outputs = 4;
    cases.push_back(qk);
  }
  AttnCase nonpad = make_case("nonpad causal gqa", 24, {3, 4, 5, 64}, {3, 2, 40, 64}, {3, 2, 40, 64}, causal);
  nonpad.nonpad = {40, 17, 5};
  cases.push_back(nonpad);
  AttnCase window =
      make_case("window", 25, {1, 2, 90, 64}, {1, 2, 90, 64}, {1, 2, 90, 64},
                {Attribute::of_int("left_window_size", 7), Attribute::of_int("right_window_size", 3)});
  cases.push_back(window);

  uint32_t seed = 1;
  for (const auto& c : cases)
    for (DataType t : {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16})
      check_attention(c, t, seed);
}

// Rows whose keys are all masked give zeros (not NaN), on both kernels.
TEST_F(CudaOps, AttentionFullyMaskedRowsAreZero) {
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    for (int64_t d : {int64_t{64}, int64_t{24}}) {
      OneNode n = node("Attention", 23);
      rt::Tensor mask = bool_tensor({1, 1, 6, 70}, 3, 0.5);
      for (int64_t j = 0; j < 70; ++j) mask.data<bool>()[2 * 70 + j] = false;  // row 2: nothing visible
      n.inputs = {random_tensor(t, {1, 2, 6, d}, -1, 1, 7), random_tensor(t, {1, 2, 70, d}, -1, 1, 8),
                  random_tensor(t, {1, 2, 70, d}, -1, 1, 9), mask};
      Outputs r = run_both(n);
      ASSERT_EQ(r.gpu_nodes, 1u);
      expect_near(r.gpu[0], r.ref[0], rtol_of(t), atol_of(t), label("fully masked", type_name(t), d));
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t e = 0; e < d; ++e) EXPECT_EQ(r.gpu[0].to_double((h * 6 + 2) * d + e), 0.0);
    }
  }
}

TEST_F(CudaOps, AttentionRejectsBadInputsWithAMessage) {
  OneNode n = node("Attention", 24, {Attribute::of_int("is_causal", 1)});
  n.inputs = {random_tensor(DataType::kFloat, {2, 2, 4, 8}, -1, 1, 1),
              random_tensor(DataType::kFloat, {2, 2, 6, 8}, -1, 1, 2),
              random_tensor(DataType::kFloat, {2, 2, 6, 8}, -1, 1, 3),
              rt::Tensor::zeros(DataType::kFloat, {1}),
              rt::Tensor::zeros(DataType::kFloat, {1}),
              rt::Tensor::zeros(DataType::kFloat, {1}),
              ints({2}, {6, 9})};
  n.absent = {false, false, false, true, true, true, false};
  try {
    run_both(n);
    ADD_FAILURE() << "nonpad_kv_seqlen 9 > 6 was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("nonpad_kv_seqlen[1] = 9"), std::string::npos) << e.what();
  }
}

struct FusedCase {
  std::string what;
  rt::Shape q, k, v;                       // as laid out
  std::vector<std::vector<int64_t>> axes;  // Q, K, V, Y: where batch, heads, seq and size are
  std::optional<rt::Shape> bias, keep;
  bool causal = false;
  bool packed = false;  // Q, K and V are one [B, S, 3, H, D] tensor, parts 0, 1, 2
};

FusedCase fused_case(std::string what, rt::Shape q, rt::Shape k, rt::Shape v,
                     std::vector<std::vector<int64_t>> axes, std::optional<rt::Shape> bias = std::nullopt,
                     std::optional<rt::Shape> keep = std::nullopt, bool causal = false, bool packed = false) {
  FusedCase c;
  c.what = std::move(what);
  c.q = std::move(q), c.k = std::move(k), c.v = std::move(v);
  c.axes = std::move(axes);
  c.bias = std::move(bias), c.keep = std::move(keep);
  c.causal = causal, c.packed = packed;
  return c;
}

TEST_F(CudaOps, FusedAttentionMatchesTheReference) {
  const std::vector<int64_t> bshd = {0, 2, 1, 3}, bhsd = {0, 1, 2, 3}, sbhd = {1, 2, 0, 3};
  const std::vector<FusedCase> cases = {
      fused_case("bshd d64 padding bias", {4, 197, 12, 64}, {4, 197, 12, 64}, {4, 197, 12, 64},
                 {bshd, bshd, bshd, bshd}, rt::Shape{4, 1, 1, 197}),
      fused_case("bshd causal keep", {2, 128, 12, 64}, {2, 128, 12, 64}, {2, 128, 12, 64},
                 {bshd, bshd, bshd, bshd}, std::nullopt, rt::Shape{1, 1, 128, 128}, true),
      fused_case("bhsd q k, gqa d128, bhsd out", {2, 8, 100, 128}, {2, 2, 100, 128}, {2, 100, 2, 128},
                 {bhsd, bhsd, bshd, bhsd}, rt::Shape{2, 8, 100, 100}),
      fused_case("sbhd d32", {70, 2, 6, 32}, {70, 2, 6, 32}, {70, 2, 6, 32}, {sbhd, sbhd, sbhd, sbhd}),
      fused_case("packed qkv d64", {3, 50, 3, 4, 64}, {3, 50, 3, 4, 64}, {3, 50, 3, 4, 64},
                 {{0, 3, 1, 4}, {0, 3, 1, 4}, {0, 3, 1, 4}, bshd}, std::nullopt, std::nullopt, false, true),
      fused_case("3-D [S, B*H, D] (torch MHA)", {197, 24, 64}, {197, 24, 64}, {197, 24, 64},
                 {{1, 0, 2}, {1, 0, 2}, {1, 0, 2}, {1, 0, 2}}),
      fused_case("d48 flash", {2, 33, 4, 48}, {2, 50, 4, 48}, {2, 50, 4, 48}, {bshd, bshd, bshd, bshd},
                 rt::Shape{50}),
      fused_case("d40 row kernel", {2, 33, 4, 40}, {2, 50, 4, 40}, {2, 50, 4, 40}, {bshd, bshd, bshd, bshd},
                 rt::Shape{50}),
      fused_case("d96 causal", {1, 130, 2, 96}, {1, 130, 2, 96}, {1, 130, 2, 96}, {bshd, bshd, bshd, bshd},
                 std::nullopt, std::nullopt, true),
  };
  uint32_t seed = 100;
  for (const auto& c : cases) {
    for (DataType t : {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16}) {
      OneNode n =
          node("FusedAttention", 17,
               {Attribute::of_float("scale", 0.125f), Attribute::of_ints("q_axes", c.axes[0]),
                Attribute::of_ints("k_axes", c.axes[1]), Attribute::of_ints("v_axes", c.axes[2]),
                Attribute::of_ints("y_axes", c.axes[3]), Attribute::of_int("causal", c.causal ? 1 : 0),
                Attribute::of_float("mask_fill", -1e4f)});
      if (c.packed) {
        n.attrs.push_back(Attribute::of_int("k_part", 1));
        n.attrs.push_back(Attribute::of_int("v_part", 2));
      }
      n.domain = "com.tessera";
      n.inputs = {random_tensor(t, c.q, -1, 1, seed++), random_tensor(t, c.k, -1, 1, seed++),
                  random_tensor(t, c.v, -1, 1, seed++)};
      if (c.packed) n.inputs[1] = n.inputs[2] = n.inputs[0];
      n.absent = {false, false, false};
      n.inputs.push_back(c.bias ? random_tensor(t, *c.bias, -3, 0, seed++) : rt::Tensor::zeros(t, {1}));
      n.absent.push_back(!c.bias);
      if (c.keep) {
        n.inputs.push_back(bool_tensor(*c.keep, seed++, 0.8));
        n.absent.push_back(false);
      }
      expect_matches(n, rtol_of(t), atol_of(t), label(c.what, type_name(t)));
    }
  }
}

// The flash kernel at the transformer benchmarks' shapes (12 heads of 64): BERT's padding bias
// [B,1,1,S] (the row-bias path), GPT-2's causal limit, ViT's 197 tokens (not a multiple of the 64-key
// tile) read from the packed [S, B, 3, H, D] projection; batch 1 (blocks of 16 rows whose 4 warps split
// the keys: the grid would otherwise be too small) and batch 3 at S=256 (4-warp blocks of 64 rows).
// Float16/bfloat16 only: float32 takes the row kernel, which the other tests cover.
TEST_F(CudaOps, FusedAttentionFlashAtModelShapes) {
  const std::vector<int64_t> bshd = {0, 2, 1, 3}, vit = {1, 3, 0, 4}, sbhd = {1, 2, 0, 3};
  const std::vector<FusedCase> cases = {
      fused_case("bert b1 s128 padding bias", {1, 128, 12, 64}, {1, 128, 12, 64}, {1, 128, 12, 64},
                 {bshd, bshd, bshd, bshd}, rt::Shape{1, 1, 1, 128}),
      fused_case("bert b3 s256 padding bias", {3, 256, 12, 64}, {3, 256, 12, 64}, {3, 256, 12, 64},
                 {bshd, bshd, bshd, bshd}, rt::Shape{3, 1, 1, 256}),
      fused_case("gpt2 b1 s128 causal", {1, 128, 12, 64}, {1, 128, 12, 64}, {1, 128, 12, 64},
                 {bshd, bshd, bshd, bshd}, std::nullopt, std::nullopt, true),
      fused_case("gpt2 b3 s256 causal", {3, 256, 12, 64}, {3, 256, 12, 64}, {3, 256, 12, 64},
                 {bshd, bshd, bshd, bshd}, std::nullopt, std::nullopt, true),
      fused_case("vit b1 s197 packed", {197, 1, 3, 12, 64}, {197, 1, 3, 12, 64}, {197, 1, 3, 12, 64},
                 {vit, vit, vit, sbhd}, std::nullopt, std::nullopt, false, true),
      fused_case("vit b3 s197 packed", {197, 3, 3, 12, 64}, {197, 3, 3, 12, 64}, {197, 3, 3, 12, 64},
                 {vit, vit, vit, sbhd}, std::nullopt, std::nullopt, false, true),
      fused_case("d128 b3 s200 causal bias", {3, 200, 4, 128}, {3, 200, 4, 128}, {3, 200, 4, 128},
                 {bshd, bshd, bshd, bshd}, rt::Shape{3, 1, 1, 200}, std::nullopt, true),
      // The general score path in 4-warp blocks: a per-row bias and a keep mask.
      fused_case("b3 s256 row bias + keep", {3, 256, 12, 64}, {3, 256, 12, 64}, {3, 256, 12, 64},
                 {bshd, bshd, bshd, bshd}, rt::Shape{1, 12, 256, 256}, rt::Shape{3, 1, 256, 256}),
  };
  uint32_t seed = 500;
  for (const auto& c : cases) {
    for (DataType t : {DataType::kFloat16, DataType::kBFloat16}) {
      OneNode n =
          node("FusedAttention", 17,
               {Attribute::of_float("scale", 0.125f), Attribute::of_ints("q_axes", c.axes[0]),
                Attribute::of_ints("k_axes", c.axes[1]), Attribute::of_ints("v_axes", c.axes[2]),
                Attribute::of_ints("y_axes", c.axes[3]), Attribute::of_int("causal", c.causal ? 1 : 0)});
      if (c.packed) {
        n.attrs.push_back(Attribute::of_int("k_part", 1));
        n.attrs.push_back(Attribute::of_int("v_part", 2));
      }
      n.domain = "com.tessera";
      // Q and K in [-2, 2]: scores of a few units, so the running max moves between key tiles.
      n.inputs = {random_tensor(t, c.q, -2, 2, seed++), random_tensor(t, c.k, -2, 2, seed++),
                  random_tensor(t, c.v, -1, 1, seed++)};
      if (c.packed) n.inputs[1] = n.inputs[2] = n.inputs[0];
      n.absent = {false, false, false};
      if (c.bias && c.bias->at(2) != 1) {
        n.inputs.push_back(random_tensor(t, *c.bias, -3, 0, seed++));
        n.absent.push_back(false);
      } else if (c.bias) {
        // Padding: the last 13 * (b + 1) keys of batch b masked with -10000, the rest small values.
        const int64_t batch = c.bias->front(), keys = c.bias->back();
        std::mt19937 rng(seed++);
        std::uniform_real_distribution<float> d(-1, 0);
        std::vector<float> bias(static_cast<size_t>(batch * keys));
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t j = 0; j < keys; ++j)
            bias[static_cast<size_t>(b * keys + j)] = j >= keys - 13 * (b + 1) ? -10000.0f : d(rng);
        n.inputs.push_back(floats(t, *c.bias, bias));
        n.absent.push_back(false);
      }
      if (c.keep) {
        n.attrs.push_back(Attribute::of_float("mask_fill", -1e4f));
        n.inputs.push_back(bool_tensor(*c.keep, seed++, 0.8));
        n.absent.push_back(false);
      }
      expect_matches(n, rtol_of(t), atol_of(t), label(c.what, type_name(t)));
    }
  }
}

// A BERT-style attention block (float32 model, additive padding mask) run by a CUDA session at the
// layout level in float16: fuse_attention makes one FusedAttention, which must run on the GPU and match
// the CPU's float32 reference within float16's accuracy (every product of the block in float16: the
// projections over 256 terms dominate, ~1e-2 of values of order 1).
TEST_F(CudaOps, FusedAttentionBlockEndToEnd) {
  constexpr int64_t kB = 3, kS = 77, kH = 4, kD = 64, kE = kH * kD;
  auto f32 = [](std::vector<int64_t> dims) {
    ir::Shape s;
    for (int64_t d : dims) s.push_back(ir::Dim::of(d));
    return ir::Type::tensor(DataType::kFloat, s);
  };
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", f32({kB, kS, kE}));
  auto heads = [&](const char* w, std::vector<int64_t> perm) {
    auto p = b.node("MatMul", {x, b.random_normal(w, {kE, kE}, 0.05f)});
    auto r = b.node("Reshape", {p, b.constant_ints(std::string(w) + "_shape", {kB, kS, kH, kD})});
    return b.node("Transpose", {r}, {Attribute::of_ints("perm", std::move(perm))});
  };
  auto s = b.node("MatMul", {heads("wq", {0, 2, 1, 3}), heads("wk", {0, 2, 3, 1})});
  s = b.node("Div", {s, b.constant_floats("sqrt_d", {}, 8.0f)});
  s = b.node("Add", {s, b.input("mask", f32({kB, 1, 1, kS}))});
  auto p = b.node("Softmax", {s}, {Attribute::of_int("axis", -1)});
  auto o = b.node("Transpose", {b.node("MatMul", {p, heads("wv", {0, 2, 1, 3})})},
                  {Attribute::of_ints("perm", {0, 2, 1, 3})});
  b.output(b.node("Reshape", {o, b.constant_ints("out_shape", {kB, kS, kE})}), f32({kB, kS, kE}));

  rt::Tensor mask = rt::Tensor::zeros(DataType::kFloat, {kB, 1, 1, kS});
  for (int64_t bi = 0; bi < kB; ++bi)
    for (int64_t j = kS - 10 * bi; j < kS; ++j) mask.data<float>()[bi * kS + j] = -10000.0f;  // padding
  const std::vector<std::pair<std::string, rt::Value>> feeds = {
      {"x", rt::Value(random_tensor(DataType::kFloat, {kB, kS, kE}, -2, 2, 5))}, {"mask", rt::Value(mask)}};
  rt::Session gpu(m, {.backend = "cuda", .precision = tessera::passes::Precision::kFp16});
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
  size_t fused_on_gpu = 0;
  for (const auto& bi : gpu.backends())
    if (bi.name == "cuda" && bi.ops.count("FusedAttention")) fused_on_gpu += bi.ops.at("FusedAttention");
  EXPECT_EQ(fused_on_gpu, 1u);
  const auto want = ref.run(feeds);
  const auto got = gpu.run(feeds);
  ASSERT_EQ(got.size(), 1u);
  expect_near(got[0].tensor(), want[0].tensor(), 2e-2, 2e-2, "fused attention block");
}

// ViT-B/16's dynamo export of one attention (S = 197, not a multiple of the key tile; the node pattern
// of tests/unit/passes/fuse_attention_test.cpp's vit_dynamo_model): the packed in-projection split by
// Reshape/Unsqueeze/Transpose/Squeeze/Gather, heads by Reshape/Transpose, torchlib's K^T and sqrt-scale
// Muls. A float16 CUDA session must fuse it into one FusedAttention on the GPU reading a view of the
// projection (no Gather left, one Transpose: the input's) and match the CPU's float32 reference.
TEST_F(CudaOps, FusedAttentionVitDynamoEndToEnd) {
  constexpr int64_t kB = 2, kS = 197, kH = 4, kD = 64, kE = kH * kD;
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
  auto ints = [&](std::vector<int64_t> v) { return b.constant_ints("c" + std::to_string(counter++), v); };
  auto tr = [&](const std::string& v, std::vector<int64_t> perm) {
    return b.node("Transpose", {v}, {Attribute::of_ints("perm", std::move(perm))});
  };
  auto x = tr(b.input("x", f32({kB, kS, kE})), {1, 0, 2});
  auto proj = b.node("Add", {b.node("MatMul", {x, b.random_normal("w_in", {kE, 3 * kE}, 0.05f)}),
                             b.random_normal("b_in", {3 * kE}, 0.1f)});
  auto packed = b.node("Reshape", {proj, ints({kS, kB, 3, kE})});
  packed = tr(b.node("Unsqueeze", {packed, ints({0})}), {3, 1, 2, 0, 4});
  packed = b.node("Squeeze", {packed, ints({3})});
  auto head = [&](int64_t which) {
    auto idx = b.initializer(
        ir::make_tensor("i" + std::to_string(which), DataType::kInt64, {}, std::vector<int64_t>{which}));
    auto sel = b.node("Gather", {packed, idx}, {Attribute::of_int("axis", 0)});
    auto t = tr(b.node("Reshape", {sel, ints({kS, kB * kH, kD})}), {1, 0, 2});
    return b.node("Reshape", {t, ints({kB, kH, kS, kD})});
  };
  auto q = head(0), k = head(1), v = head(2);
  auto kt = tr(b.node("Reshape", {k, ints({-1, kS, kD})}), {0, 2, 1});
  kt = b.node("Reshape", {kt, ints({kB, kH, kD, kS})});
  const float root = std::sqrt(1.0f / std::sqrt(float(kD)));
  q = b.node("Mul", {q, b.constant_floats("root_q", {}, root)});
  kt = b.node("Mul", {kt, b.constant_floats("root_k", {}, root)});
  auto p = b.node("Softmax", {b.node("MatMul", {q, kt})}, {Attribute::of_int("axis", -1)});
  auto o = b.node("Reshape", {tr(b.node("MatMul", {p, v}), {2, 0, 1, 3}), ints({kS * kB, kE})});
  b.output(o, f32({kS * kB, kE}));

  const std::vector<std::pair<std::string, rt::Value>> feeds = {
      {"x", rt::Value(random_tensor(DataType::kFloat, {kB, kS, kE}, -2, 2, 11))}};
  rt::Session gpu(m, {.backend = "cuda", .precision = tessera::passes::Precision::kFp16});
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
  size_t fused_on_gpu = 0, gathers = 0;
  for (const auto& bi : gpu.backends()) {
    if (bi.name == "cuda" && bi.ops.count("FusedAttention")) fused_on_gpu += bi.ops.at("FusedAttention");
    if (bi.ops.count("Gather")) gathers += bi.ops.at("Gather");
  }
  EXPECT_EQ(fused_on_gpu, 1u);
  EXPECT_EQ(gathers, 0u);
  const auto want = ref.run(feeds);
  const auto got = gpu.run(feeds);
  ASSERT_EQ(got.size(), 1u);
  expect_near(got[0].tensor(), want[0].tensor(), 2e-2, 2e-2, "vit dynamo attention");
}

}  // namespace
}  // namespace tessera::cuda_test
