// The fuse_attention rule (layout level, CUDA targets) on attention blocks written the way PyTorch's
// exporters write them: BERT (Div scale, additive padding mask), GPT-2 (a constant causal mask, which
// becomes causal = 1; or Where(keep, s, fill) with a Mul-scaled query), ViT-style (no mask, K through
// two Transposes), a Llama-style block (rotary embedding on [B, H, S, D], repeated KV heads) and the
// float16-converted BERT block with Casts around a float32 Softmax. Each is optimised for a CUDA target
// whose kernels are the CPU's (so the fused node's CPU reference runs it), and the optimised model must
// compute what the original does on the CPU. Also: --disable-rule, and what must not fuse.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "dynamo_mha.h"
#include "ir/builder.h"
#include "onnx/onnx_io.h"
#include "passes/fuse_attention_view.h"
#include "passes/pipeline.h"
#include "runtime/pass_target.h"
#include "runtime/session.h"
#include "runtime/value_io.h"
#include "transforms/float16.h"

namespace tessera::passes {
namespace {

using ir::Attribute;
using ir::DataType;
using ir::Dim;
using ir::GraphBuilder;

constexpr int64_t kB = 2, kS = 10, kH = 4, kD = 8, kE = kH * kD;

ir::Type F(std::vector<int64_t> dims, DataType t = DataType::kFloat) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(Dim::of(d));
  return ir::Type::tensor(t, s);
}

struct Block {
  bool mask = false;            // additive [B, 1, 1, S] padding mask input
  bool causal_const = false;    // constant triangular -10000 bias
  bool where_keep = false;      // Where(keep, s, -inf) with a bool [1, 1, S, S] input, scale on Q
  bool keep_const = false;      // ... the keep mask a constant lower triangle (HF GPT-2's buffer)
  bool two_transposes = false;  // K: [B,S,H,D] -> [B,H,S,D] -> [B,H,D,S]
  bool rotary = false;          // Q and K rotated in [B, H, S, D]
  int64_t kv_heads = kH;        // < kH: K/V projected to fewer heads and repeated
  bool extra_reader = false;    // the scores are also a graph output: nothing may fuse
};

// x [B, S, E] -> attention -> [B, S, E], written op by op.
ir::Model block_model(const Block& c) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  int counter = 0;
  auto fresh = [&] { return "c" + std::to_string(counter++); };  // initializer names
  auto x = b.input("x", F({kB, kS, kE}));
  const int64_t kve = c.kv_heads * kD;
  auto proj = [&](const std::string& name, int64_t out) {
    return b.node("MatMul", {x, b.random_normal(name, {kE, out}, 0.3f)});
  };
  auto split = [&](const std::string& v, int64_t heads) {
    return b.node("Reshape", {v, b.constant_ints(fresh(), {kB, kS, heads, kD})});
  };
  auto tr = [&](const std::string& v, std::vector<int64_t> perm) {
    return b.node("Transpose", {v}, {Attribute::of_ints("perm", std::move(perm))});
  };
  auto rotate = [&](const std::string& v, int64_t heads) {  // v * cos + v[..., reversed halves] * sin
    auto cos = b.random_normal(fresh(), {1, 1, kS, kD}, 0.5f);
    auto sin = b.random_normal(fresh(), {1, 1, kS, kD}, 0.5f);
    auto halves = b.nodes("Split", {v, b.constant_ints(fresh(), {kD / 2, kD / 2})},
                          {Attribute::of_int("axis", 3)}, "", 2);
    auto swapped = b.node("Concat", {b.node("Neg", {halves[1]}), halves[0]}, {Attribute::of_int("axis", 3)});
    (void)heads;
    return b.node("Add", {b.node("Mul", {v, cos}), b.node("Mul", {swapped, sin})});
  };
  auto repeat = [&](const std::string& v) {  // [B, Hkv, S, D] -> [B, H, S, D]
    if (c.kv_heads == kH) return v;
    auto u = b.node("Unsqueeze", {v, b.constant_ints(fresh(), {2})});
    auto e = b.node("Expand", {u, b.constant_ints(fresh(), {kB, c.kv_heads, kH / c.kv_heads, kS, kD})});
    return b.node("Reshape", {e, b.constant_ints(fresh(), {kB, kH, kS, kD})});
  };
  auto q = tr(split(proj("wq", kE), kH), {0, 2, 1, 3});
  if (c.where_keep) q = b.node("Mul", {q, b.constant_floats(fresh(), {}, 1.0f / std::sqrt(float(kD)))});
  if (c.rotary) q = rotate(q, kH);
  std::string kt;
  if (c.rotary || c.two_transposes || c.kv_heads != kH) {
    auto k = tr(split(proj("wk", kve), c.kv_heads), {0, 2, 1, 3});
    if (c.rotary) k = rotate(k, c.kv_heads);
    kt = tr(repeat(k), {0, 1, 3, 2});
  } else {
    kt = tr(split(proj("wk", kve), kH), {0, 2, 3, 1});
  }
  auto v = repeat(tr(split(proj("wv", kve), c.kv_heads), {0, 2, 1, 3}));
  auto s = b.node("MatMul", {q, kt});
  if (!c.where_keep) s = b.node("Div", {s, b.constant_floats(fresh(), {}, std::sqrt(float(kD)))});
  if (c.extra_reader) b.output(s, F({kB, kH, kS, kS}));
  if (c.where_keep) {
    std::vector<uint8_t> tri(kS * kS);
    for (int64_t k = 0; k < kS * kS; ++k) tri[static_cast<size_t>(k)] = k % kS <= k / kS;
    auto keep = c.keep_const ? b.initializer(ir::make_tensor("keep", DataType::kBool, {1, 1, kS, kS}, tri))
                             : b.input("keep", F({1, 1, kS, kS}, DataType::kBool));
    s = b.node("Where", {keep, s, b.constant_floats(fresh(), {}, -INFINITY)});
  }
  if (c.mask) s = b.node("Add", {s, b.input("mask", F({kB, 1, 1, kS}))});
  if (c.causal_const) {
    std::vector<float> tri(kS * kS, 0.0f);
    for (int64_t i = 0; i < kS; ++i)
      for (int64_t j = i + 1; j < kS; ++j) tri[static_cast<size_t>(i * kS + j)] = -10000.0f;
    s = b.node("Add", {b.initializer(ir::make_tensor("causal", DataType::kFloat, {1, 1, kS, kS}, tri)), s});
  }
  auto p = b.node("Softmax", {s}, {Attribute::of_int("axis", -1)});
  auto o = tr(b.node("MatMul", {p, v}), {0, 2, 1, 3});
  auto y = b.node("Reshape", {o, b.constant_ints(fresh(), {kB, kS, kE})});
  b.output(y, F({kB, kS, kE}));
  return m;
}

// torch.nn.MultiheadAttention's export (ViT): x [B, S, E] -> [S, B, E] -> q/k/v [S, B*H, D] -> [B*H, S, D]
// products with Q divided by sqrt(D) first, the output back to [S, B*H, D] and [S*B, E].
ir::Model mha_model() {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  int counter = 0;
  auto fresh = [&] { return "c" + std::to_string(counter++); };
  auto x = b.node("Transpose", {b.input("x", F({kB, kS, kE}))}, {Attribute::of_ints("perm", {1, 0, 2})});
  auto heads = [&](const std::string& name) {
    auto p = b.node("MatMul", {x, b.random_normal(name, {kE, kE}, 0.3f)});
    return b.node("Reshape", {p, b.constant_ints(fresh(), {kS, kB * kH, kD})});
  };
  auto tr = [&](const std::string& v, std::vector<int64_t> perm) {
    return b.node("Transpose", {v}, {Attribute::of_ints("perm", std::move(perm))});
  };
  auto q = b.node("Div", {tr(heads("wq"), {1, 0, 2}), b.constant_floats(fresh(), {}, std::sqrt(float(kD)))});
  auto kt = tr(heads("wk"), {1, 2, 0});
  auto v = tr(heads("wv"), {1, 0, 2});
  auto p = b.node("Softmax", {b.node("MatMul", {q, kt})}, {Attribute::of_int("axis", -1)});
  auto o = tr(b.node("MatMul", {p, v}), {1, 0, 2});
  auto y = b.node("Reshape", {o, b.constant_ints(fresh(), {kS * kB, kE})});
  b.output(y, F({kS * kB, kE}));
  return m;
}

// ViT-B/16's dynamo export (torch.nn.MultiheadAttention, batch_first, decomposed by torch.onnx's
// dynamo exporter), node for node as the H100 profile of the bench's model lists them (7 Transposes and
// 3 Gathers a layer, S=197 in the real model; kVitS = 13 here, not a multiple of anything): x [B,S,E]
// -Transpose-> [S,B,E], the attention of dynamo_mha.h, -MatMul-> (out projection).
constexpr int64_t kVitS = 13;
ir::Model vit_dynamo_model(int64_t batch = kB) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  int counter = 0;
  auto fresh = [&] { return "c" + std::to_string(counter++); };
  const int64_t S = kVitS, B = batch;
  auto x = b.node("Transpose", {b.input("x", F({B, S, kE}))}, {Attribute::of_ints("perm", {1, 0, 2})});
  auto w_in = b.random_normal("w_in", {kE, 3 * kE}, 0.3f);
  auto b_in = b.random_normal("b_in", {3 * kE}, 0.3f);
  auto o = dynamo_mha::attention(b, x, {S, B, kH, kD}, w_in, b_in, fresh);
  auto y = b.node("MatMul", {o, b.random_normal("w_out", {kE, kE}, 0.3f)});
  b.output(y, F({S * B, kE}));
  return m;
}

// GPT-2's export: one packed projection [B, S, 3E] cut into q, k and v by a Split on the last axis (or
// by three Slices), each -> Reshape [B, S, H, D] -> Transpose; a constant causal mask.
ir::Model packed_split_model(bool slices) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  int counter = 0;
  auto fresh = [&] { return "c" + std::to_string(counter++); };
  auto ints = [&](std::vector<int64_t> v) { return b.constant_ints(fresh(), std::move(v)); };
  auto tr = [&](const std::string& v, std::vector<int64_t> perm) {
    return b.node("Transpose", {v}, {Attribute::of_ints("perm", std::move(perm))});
  };
  auto x = b.input("x", F({kB, kS, kE}));
  auto proj = b.node("Add", {b.node("MatMul", {x, b.random_normal("w_in", {kE, 3 * kE}, 0.3f)}),
                             b.random_normal("b_in", {3 * kE}, 0.3f)});
  std::vector<std::string> parts;
  if (slices) {
    for (int64_t k = 0; k < 3; ++k)
      parts.push_back(b.node("Slice", {proj, ints({k * kE}), ints({(k + 1) * kE}), ints({-1})}));
  } else {
    parts = b.nodes("Split", {proj, ints({kE, kE, kE})}, {Attribute::of_int("axis", 2)}, "", 3);
  }
  auto heads = [&](const std::string& v, std::vector<int64_t> perm) {
    return tr(b.node("Reshape", {v, ints({kB, kS, kH, kD})}), std::move(perm));
  };
  auto s = b.node("MatMul", {heads(parts[0], {0, 2, 1, 3}), heads(parts[1], {0, 2, 3, 1})});
  s = b.node("Div", {s, b.constant_floats(fresh(), {}, std::sqrt(float(kD)))});
  std::vector<float> tri(kS * kS, 0.0f);
  for (int64_t i = 0; i < kS; ++i)
    for (int64_t j = i + 1; j < kS; ++j) tri[static_cast<size_t>(i * kS + j)] = -10000.0f;
  s = b.node("Add", {s, b.initializer(ir::make_tensor("causal", DataType::kFloat, {1, 1, kS, kS}, tri))});
  auto p = b.node("Softmax", {s}, {Attribute::of_int("axis", -1)});
  auto o = tr(b.node("MatMul", {p, heads(parts[2], {0, 2, 1, 3})}), {0, 2, 1, 3});
  b.output(b.node("Reshape", {o, ints({kB, kS, kE})}), F({kB, kS, kE}));
  return m;
}

std::vector<std::pair<std::string, rt::Value>> feeds(const ir::Model& m) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<std::pair<std::string, rt::Value>> out;
  for (const auto& in : m.graph.inputs) {
    std::vector<int64_t> dims;
    for (const auto& d : *in.type.shape) dims.push_back(d.value);
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    if (in.type.elem == DataType::kBool) {
      std::vector<bool> keep(static_cast<size_t>(n));
      for (int64_t k = 0; k < n; ++k) keep[static_cast<size_t>(k)] = (k % kS) <= (k / kS) % kS;  // causal
      out.emplace_back(in.name, rt::Tensor::from_vector<bool>(DataType::kBool, dims, keep));
      continue;
    }
    std::vector<float> v(static_cast<size_t>(n));
    for (float& f : v) f = in.name == "mask" ? (dist(rng) > 0.8f ? -10000.0f : 0.0f) : dist(rng);
    out.emplace_back(in.name, rt::Tensor::from_vector<float>(DataType::kFloat, dims, v));
  }
  return out;
}

Target cuda_like_target(std::vector<std::string> disabled = {}) {
  Target t = rt::cpu_target(OptLevel::kLayout);
  t.backend = "cuda";  // the CPU's kernels stand in for the GPU's: the fused node runs on its reference
  t.layout = Layout::kNchw;
  t.precision = Precision::kFp16;  // the session lowers to float16 after the passes (the default)
  t.disabled_rules = std::move(disabled);
  return t;
}

int count(const ir::Graph& g, std::string_view op) {
  return static_cast<int>(
      std::count_if(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) { return n.op_type == op; }));
}

const ir::Node* fused(const ir::Graph& g) {
  for (const auto& n : g.nodes)
    if (n.op_type == "FusedAttention") return &n;
  return nullptr;
}

// Optimises `m` for the CUDA-like target and compares its outputs with the original's on the CPU.
ir::Model optimise_and_compare(const ir::Model& m, double rtol = 1e-4, double atol = 1e-5) {
  ir::Model opt = m;
  optimize(opt, cuda_like_target());
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1});
  rt::Session got(opt, {.optimization = rt::OptLevel::kNone, .threads = 1});
  auto want = ref.run(feeds(m));
  auto have = got.run(feeds(m));
  EXPECT_EQ(want.size(), have.size());
  for (size_t i = 0; i < std::min(want.size(), have.size()); ++i)
    EXPECT_EQ(rt::compare_values(want[i], have[i], {rtol, atol}), "") << "output " << i;
  return opt;
}

TEST(PassesFuseAttention, BertBlockWithPaddingMask) {
  ir::Model opt = optimise_and_compare(block_model({.mask = true}));
  const ir::Node* n = fused(opt.graph);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(count(opt.graph, "Transpose"), 0);
  EXPECT_EQ(count(opt.graph, "Softmax"), 0);
  EXPECT_EQ(n->inputs.size(), 4u);  // Q, K, V and the mask
  // merge_sibling_matmuls made Q, K and V one product: they are read from its [B, S, 3, H, D] view.
  EXPECT_EQ(n->attr("q_axes")->ints, (std::vector<int64_t>{0, 3, 1, 4}));
  EXPECT_EQ(n->attr("k_axes")->ints, (std::vector<int64_t>{0, 3, 1, 4}));
  EXPECT_EQ(n->attr("y_axes")->ints, (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_NEAR(n->attr("scale")->f, 1.0 / std::sqrt(double(kD)), 1e-6);
  bool recorded = false;
  for (const auto& [k, v] : n->metadata_props)
    recorded |= k == kFusedFromKey && v.find("Softmax") != std::string::npos;
  EXPECT_TRUE(recorded) << "tessera.fused_from names the replaced nodes";
}

TEST(PassesFuseAttention, Gpt2ConstantCausalMaskBecomesCausal) {
  ir::Model opt = optimise_and_compare(block_model({.causal_const = true}));
  const ir::Node* n = fused(opt.graph);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->inputs.size(), 3u);
  ASSERT_NE(n->attr("causal"), nullptr);
  EXPECT_EQ(n->attr("causal")->i, 1);
  EXPECT_EQ(opt.graph.find_initializer("causal"), nullptr);  // the mask went with the nodes
}

TEST(PassesFuseAttention, WhereKeepMaskAndScaledQuery) {
  ir::Model opt = optimise_and_compare(block_model({.where_keep = true}));
  const ir::Node* n = fused(opt.graph);
  ASSERT_NE(n, nullptr);
  ASSERT_EQ(n->inputs.size(), 5u);
  EXPECT_EQ(n->inputs[3], "");
  EXPECT_EQ(n->inputs[4], "keep");
  EXPECT_TRUE(std::isinf(n->attr("mask_fill")->f));
}

TEST(PassesFuseAttention, ConstantCausalKeepMaskBecomesCausal) {
  ir::Model opt = optimise_and_compare(block_model({.where_keep = true, .keep_const = true}));
  const ir::Node* n = fused(opt.graph);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->inputs.size(), 3u);
  ASSERT_NE(n->attr("causal"), nullptr);
  EXPECT_EQ(opt.graph.find_initializer("keep"), nullptr);
}

TEST(PassesFuseAttention, VitStyleTwoTransposesNoMask) {
  ir::Model opt = optimise_and_compare(block_model({.two_transposes = true}));
  ASSERT_NE(fused(opt.graph), nullptr);
  EXPECT_EQ(count(opt.graph, "Transpose"), 0);
}

TEST(PassesFuseAttention, MultiheadAttention3dProducts) {
  ir::Model opt = optimise_and_compare(mha_model());
  const ir::Node* n = fused(opt.graph);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(count(opt.graph, "Transpose"), 1);  // only the [B, S, E] -> [S, B, E] of the input
  EXPECT_EQ(n->attr("q_axes")->ints, (std::vector<int64_t>{1, 0, 2}));  // [S, B*H, D] read in place
  EXPECT_EQ(n->attr("k_axes")->ints, (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(n->attr("y_axes")->ints, (std::vector<int64_t>{1, 0, 2}));
  EXPECT_NEAR(n->attr("scale")->f, 1.0 / std::sqrt(double(kD)), 1e-6);
}

// The dynamo ViT block: Q, K and V read from one Reshape of the packed projection to [S, B, 3, H, D]
// (parts 0, 1, 2); every Gather and every Transpose of the attention goes, the input's [B,S,E] ->
// [S,B,E] aside. Batch 1 too (the batch axis of size 1 is free).
TEST(PassesFuseAttention, VitDynamoPackedProjection) {
  for (int64_t batch : {kB, int64_t{1}}) {
    ir::Model opt = optimise_and_compare(vit_dynamo_model(batch));
    const ir::Node* n = fused(opt.graph);
    ASSERT_NE(n, nullptr) << "batch " << batch;
    EXPECT_EQ(count(opt.graph, "Gather"), 0);
    // At batch 1 the input's transpose only moves an axis of size 1: fold_transpose_reshape_chain makes
    // it a Reshape.
    EXPECT_EQ(count(opt.graph, "Transpose"), batch == 1 ? 0 : 1);
    EXPECT_EQ(count(opt.graph, "Squeeze"), 0);
    EXPECT_EQ(count(opt.graph, "Unsqueeze"), 0);
    EXPECT_EQ(n->inputs[0], n->inputs[1]);
    EXPECT_EQ(n->inputs[0], n->inputs[2]);
    // The operands: one Reshape (a view) of the projection to [S, B, 3, H, D].
    auto view = std::find_if(opt.graph.nodes.begin(), opt.graph.nodes.end(),
                             [&](const ir::Node& x) { return x.outputs[0] == n->inputs[0]; });
    ASSERT_NE(view, opt.graph.nodes.end());
    EXPECT_EQ(view->op_type, "Reshape");
    const ir::Tensor* shape = opt.graph.find_initializer(view->inputs[1]);
    ASSERT_NE(shape, nullptr);
    const std::vector<int64_t> want = batch == 1 ? std::vector<int64_t>{1, kVitS, 3, kH, kD}
                                                 : std::vector<int64_t>{kVitS, batch, 3, kH, kD};
    auto got = shape->as<int64_t>();
    EXPECT_EQ(std::vector<int64_t>(got.begin(), got.end()), want);
    const std::vector<int64_t> axes =
        batch == 1 ? std::vector<int64_t>{0, 3, 1, 4} : std::vector<int64_t>{1, 3, 0, 4};
    EXPECT_EQ(n->attr("q_axes")->ints, axes);
    EXPECT_EQ(n->attr("k_axes")->ints, axes);
    EXPECT_EQ(n->attr("v_axes")->ints, axes);
    EXPECT_EQ(n->attr("q_part"), nullptr);
    ASSERT_NE(n->attr("k_part"), nullptr);
    EXPECT_EQ(n->attr("k_part")->i, 1);
    ASSERT_NE(n->attr("v_part"), nullptr);
    EXPECT_EQ(n->attr("v_part")->i, 2);
    EXPECT_NEAR(n->attr("scale")->f, 1.0 / std::sqrt(double(kD)), 1e-6);
  }
}

// Only one Gather's chain is the attention's (the projection's q part is also a graph output): the
// shared Reshape/Unsqueeze/Transpose/Squeeze stay for it, and the result is still the original's.
TEST(PassesFuseAttention, VitDynamoSharedChainStays) {
  ir::Model m = vit_dynamo_model();
  std::string q_sel;
  for (const auto& n : m.graph.nodes)
    if (n.op_type == "Gather" && q_sel.empty() && n.outputs[0] != "") q_sel = n.outputs[0];
  ir::ValueInfo out;
  out.name = q_sel;
  out.type = F({kVitS, kB, kE});
  m.graph.outputs.push_back(out);
  ir::Model opt = optimise_and_compare(m);
  ASSERT_NE(fused(opt.graph), nullptr);
  EXPECT_EQ(count(opt.graph, "Gather"), 1);
  EXPECT_EQ(count(opt.graph, "Squeeze"), 1);
}

// The Split (or the Slices) goes too: Q, K and V are parts 0, 1, 2 of a view [B, S, 3, H, D].
TEST(PassesFuseAttention, PackedProjectionSplitOrSliced) {
  for (bool slices : {false, true}) {
    ir::Model opt = optimise_and_compare(packed_split_model(slices));
    const ir::Node* n = fused(opt.graph);
    ASSERT_NE(n, nullptr) << (slices ? "slices" : "split");
    EXPECT_EQ(count(opt.graph, "Split"), 0);
    EXPECT_EQ(count(opt.graph, "Slice"), 0);
    EXPECT_EQ(count(opt.graph, "Transpose"), 0);
    EXPECT_EQ(n->attr("q_axes")->ints, (std::vector<int64_t>{0, 3, 1, 4}));
    EXPECT_EQ(n->attr("k_axes")->ints, (std::vector<int64_t>{0, 3, 1, 4}));
    ASSERT_NE(n->attr("v_part"), nullptr);
    EXPECT_EQ(n->attr("v_part")->i, 2);
    ASSERT_NE(n->attr("causal"), nullptr);
  }
}

TEST(PassesFuseAttention, LlamaStyleRotaryAndRepeatedKvHeads) {
  ir::Model opt = optimise_and_compare(block_model({.rotary = true, .kv_heads = 2}));
  const ir::Node* n = fused(opt.graph);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->attr("q_axes")->ints, (std::vector<int64_t>{0, 1, 2, 3}));  // read after the rotation
  EXPECT_EQ(n->attr("k_axes")->ints, (std::vector<int64_t>{0, 1, 2, 3}));
  // K and V are read with their 2 heads: the repetition went.
  EXPECT_EQ(count(opt.graph, "Expand"), 0);
  EXPECT_EQ(n->attr("v_axes")->ints, (std::vector<int64_t>{0, 2, 1, 3}));
}

TEST(PassesFuseAttention, DisabledOrNotForThisBackend) {
  ir::Model m = block_model({.mask = true});
  ir::Model off = m;
  optimize(off, cuda_like_target({"fuse_attention"}));
  EXPECT_EQ(fused(off.graph), nullptr);
  ir::Model cpu = m;
  optimize(cpu, rt::cpu_target(OptLevel::kLayout));
  EXPECT_EQ(fused(cpu.graph), nullptr);
  // A float32 graph kept in float32 on the GPU would not reach the flash kernel: left to cuBLAS.
  ir::Model fp32 = m;
  Target t = cuda_like_target();
  t.precision = Precision::kFp32;
  optimize(fp32, t);
  EXPECT_EQ(fused(fp32.graph), nullptr);
}

TEST(PassesFuseAttention, ScoresReadElsewhereStayUnfused) {
  ir::Model opt = optimise_and_compare(block_model({.mask = true, .extra_reader = true}));
  EXPECT_EQ(fused(opt.graph), nullptr);
  EXPECT_EQ(count(opt.graph, "Softmax"), 1);
}

// The float16-converted block, Softmax kept in float32 (Casts on both sides), fuses the same way.
TEST(PassesFuseAttention, Float16GraphWithCasts) {
  ir::Model m = block_model({.mask = true});
  for (auto& n : m.graph.nodes)
    if (n.op_type == "Softmax") n.name = "softmax";
  transforms::FloatConvertOptions o;
  o.keep_io_types = true;
  o.node_block_list = {"softmax"};
  transforms::Report report;
  ir::Model half = transforms::convert_float_copy(m, o, report);
  ASSERT_GT(count(half.graph, "Cast"), 2);
  // float16 products over 8-term dot products of O(1) values: a few float16 ulps.
  ir::Model opt = optimise_and_compare(half, 1e-2, 1e-2);
  ASSERT_NE(fused(opt.graph), nullptr);
  EXPECT_EQ(count(opt.graph, "Softmax"), 0);
}

// The session lowers the precision after the passes: the fused node must convert to float16 like the
// nodes it replaced (no Casts around it) and still compute the same.
TEST(PassesFuseAttention, FusedNodeLowersToFloat16) {
  ir::Model m = block_model({.mask = true});
  ir::Model fused32 = m;
  optimize(fused32, cuda_like_target());
  ASSERT_NE(fused(fused32.graph), nullptr);
  transforms::FloatConvertOptions o;
  o.keep_io_types = true;
  transforms::Report report;
  ir::Model half = transforms::convert_float_copy(fused32, o, report);
  const ir::Node* n = fused(half.graph);
  ASSERT_NE(n, nullptr);
  for (const auto& in : n->inputs) {
    auto p = std::find_if(half.graph.nodes.begin(), half.graph.nodes.end(),
                          [&](const ir::Node& x) { return !x.outputs.empty() && x.outputs[0] == in; });
    if (p != half.graph.nodes.end() && p->op_type == "Cast") {
      EXPECT_EQ(p->attr("to")->i, static_cast<int64_t>(DataType::kFloat16)) << in;
    }
  }
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1});
  rt::Session got(half, {.optimization = rt::OptLevel::kNone, .threads = 1});
  auto want = ref.run(feeds(m));
  auto have = got.run(feeds(m));
  ASSERT_EQ(want.size(), have.size());
  EXPECT_EQ(rt::compare_values(want[0], have[0], {1e-2, 1e-2}), "");
}

// The fused node's own checks: bad axes, ranks and parts are refused with a message naming them.
TEST(PassesFuseAttention, FusedNodeRejectsBadLayouts) {
  struct Bad {
    std::vector<int64_t> q_axes;
    std::vector<int64_t> q_dims;
    int64_t q_part;
    std::string want;
  };
  const std::vector<Bad> cases = {
      {{0, 2, 2, 3}, {2, 5, 3, 8}, 0, "q_axes [0,2,2,3] is not 4 distinct axes"},
      {{0, 2, 1, 3}, {2, 5, 24}, 0, "q must have rank 4 or 5"},
      {{0, 2, 1, 3}, {2, 5, 3, 8}, 1, "q_part is 1 but q is not packed"},
      {{0, 3, 1, 4}, {2, 5, 3, 3, 8}, 3, "q_part 3 is outside [0, 3)"},
  };
  for (const auto& c : cases) {
    ir::Model m;
    m.ir_version = 9;
    m.opset_imports = {{"", 17}, {"com.tessera", 1}};
    GraphBuilder b(m.graph);
    auto q = b.input("q", F(c.q_dims));
    auto k = b.input("k", F({2, 5, 3, 8}));
    auto y = b.nodes("FusedAttention", {q, k, k},
                     {Attribute::of_float("scale", 0.5f), Attribute::of_ints("q_axes", c.q_axes),
                      Attribute::of_int("q_part", c.q_part)},
                     "attn", 1, "com.tessera")[0];
    b.output(y);
    std::string error;
    try {
      rt::Session s(m, {.optimization = rt::OptLevel::kNone, .threads = 1});
      std::vector<std::pair<std::string, rt::Value>> feeds;
      for (const auto& in : m.graph.inputs) {
        std::vector<int64_t> dims;
        for (const auto& d : *in.type.shape) dims.push_back(d.value);
        feeds.emplace_back(in.name, rt::Tensor::zeros(DataType::kFloat, dims));
      }
      s.run(feeds);
    } catch (const std::exception& e) {
      error = e.what();
    }
    EXPECT_NE(error.find(c.want), std::string::npos) << "got: " << error;
  }
}

// factor_view: an operand's (batch, heads, seq, size) strides as axes of a reshaped base.
TEST(PassesFuseAttention, FactorViewFindsThePackedShape) {
  // ViT: [S=197, B=32, 3E] projection, q/k/v parts at offsets 0, 768, 1536.
  const int64_t dims[4] = {32, 12, 197, 64}, strides[4] = {2304, 64, 32 * 2304, 1};
  const int64_t numel = 197 * 32 * 2304;
  auto k = attn::factor_view(dims, strides, 768, numel);
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->shape, (std::vector<int64_t>{197, 32, 3, 12, 64}));
  EXPECT_EQ(k->axes, (std::vector<int64_t>{1, 3, 0, 4}));
  EXPECT_EQ(k->part, 1);
  // Batch 1: its stride is free, the axis goes in front.
  const int64_t dims1[4] = {1, 12, 197, 64}, strides1[4] = {0, 64, 2304, 1};
  auto q1 = attn::factor_view(dims1, strides1, 0, 197 * 2304);
  ASSERT_TRUE(q1.has_value());
  EXPECT_EQ(q1->shape, (std::vector<int64_t>{1, 197, 3, 12, 64}));
  EXPECT_EQ(q1->axes, (std::vector<int64_t>{0, 3, 1, 4}));
  // A contiguous [B, S, H, D] tensor: rank 4, no part.
  const int64_t dims2[4] = {2, 4, 10, 8}, strides2[4] = {320, 8, 32, 1};
  auto plain = attn::factor_view(dims2, strides2, 0, 640);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->shape, (std::vector<int64_t>{2, 10, 4, 8}));
  EXPECT_EQ(plain->axes, (std::vector<int64_t>{0, 2, 1, 3}));
  // Two gaps (two packed axes), an offset that is no part, a head size that is not contiguous: none.
  const int64_t gaps[4] = {2, 4, 10, 8}, gap_strides[4] = {2 * 3 * 10 * 3 * 32, 8, 3 * 3 * 32, 1};
  EXPECT_FALSE(attn::factor_view(gaps, gap_strides, 0, 2 * 3 * 10 * 3 * 32).has_value());
  EXPECT_FALSE(attn::factor_view(dims, strides, 100, numel).has_value());
  const int64_t strided_d_s[4] = {640, 16, 64, 2};
  EXPECT_FALSE(attn::factor_view(dims2, strided_d_s, 0, 1280).has_value());
}

// A real export (TESSERA_ATTENTION_MODEL=model.onnx): what the rule makes of it for a CUDA target, as
// counts of the attention's nodes before and after; every Softmax of a transformer should be fused.
TEST(PassesFuseAttention, RealModelFromEnv) {
  const char* path = std::getenv("TESSERA_ATTENTION_MODEL");
  if (!path) GTEST_SKIP() << "set TESSERA_ATTENTION_MODEL to a model file";
  ir::Model m = onnx::load_model(path);
  ir::Model opt = m;
  optimize(opt, cuda_like_target());
  for (const char* op : {"Softmax", "FusedAttention", "Transpose", "Gather", "Split", "Slice", "Reshape"})
    std::printf("%-16s %4d -> %4d\n", op, count(m.graph, op), count(opt.graph, op));
  EXPECT_GT(count(opt.graph, "FusedAttention"), 0);
  EXPECT_EQ(count(opt.graph, "Softmax"), 0);
  // Same outputs on the CPU (random float inputs, integer inputs 0) where every input has a static shape.
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<std::pair<std::string, rt::Value>> in;
  for (const auto& x : m.graph.inputs) {
    if (m.graph.find_initializer(x.name)) continue;
    if (!x.type.shape || !ir::shape_is_static(*x.type.shape))
      GTEST_SKIP() << x.name << " has no static shape";
    std::vector<int64_t> dims;
    for (const auto& d : *x.type.shape) dims.push_back(d.value);
    rt::Tensor t = rt::Tensor::zeros(x.type.elem, dims);
    if (x.type.elem == DataType::kFloat)
      for (int64_t k = 0; k < t.numel(); ++k) t.data<float>()[k] = dist(rng);
    in.emplace_back(x.name, rt::Value(t));
  }
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 2});
  rt::Session got(opt, {.optimization = rt::OptLevel::kNone, .threads = 2});
  auto want = ref.run(in);
  auto have = got.run(in);
  ASSERT_EQ(want.size(), have.size());
  for (size_t k = 0; k < want.size(); ++k)
    EXPECT_EQ(rt::compare_values(want[k], have[k], {1e-3, 1e-4}), "") << "output " << k;
}

}  // namespace
}  // namespace tessera::passes
