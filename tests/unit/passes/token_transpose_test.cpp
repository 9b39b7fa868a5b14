// cancel_token_transposes: the [S, B, E] <-> [B, S, E] Transposes around each attention of the dynamo
// export's nn.MultiheadAttention (batch_first=False; ViT-B/16) are moved through the per-token operations
// between them (linear layers, bias adds, LayerNormalization, the Reshapes that split or merge the last
// axes or the token axes, FusedAttention's axes) until they meet and cancel. Synthetic ViT encoders of
// that export's shape (two layers, the nodes of /work/feedback/s10/vit_b1_nodes.txt) are optimised for a
// CUDA-like target whose kernels are the CPU's, with the rule on and off: outputs agree with the
// unoptimised model, and the Transposes are gone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "dynamo_mha.h"
#include "ir/builder.h"
#include "passes/pipeline.h"
#include "runtime/pass_target.h"
#include "runtime/session.h"
#include "runtime/value_io.h"

namespace tessera::passes {
namespace {

using ir::Attribute;
using ir::DataType;
using ir::Dim;
using ir::GraphBuilder;

constexpr const char* kRule = "cancel_token_transposes";
constexpr int64_t kH = 4, kD = 8, kE = kH * kD, kS = 13;

ir::Type F(std::vector<int64_t> dims) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(Dim::of(d));
  return ir::Type::tensor(DataType::kFloat, s);
}

// One encoder layer of the dynamo ViT export on x [B, S, E] (torchvision's EncoderBlock): LayerNorm,
// Transpose to [S, B, E], the packed in-projection, Reshape/Unsqueeze/Transpose/Squeeze/Gather into q, k,
// v, scaled-dot-product attention, the output Transpose(2, 0, 1, 3) and Reshape [S*B, E], Gemm (the
// out-projection), Reshape [S, B, E], Transpose back to [B, S, E], the residual Add, LayerNorm, the MLP
// (MatMul + bias, Gelu, MatMul + bias) and its residual Add.
std::string encoder_layer(GraphBuilder& b, const std::string& x, int64_t B, int layer) {
  int counter = 0;
  const std::string pre = "l" + std::to_string(layer) + "_";
  auto fresh = [&] { return pre + "c" + std::to_string(counter++); };
  auto ints = [&](std::vector<int64_t> v) { return b.constant_ints(fresh(), std::move(v)); };
  auto tr = [&](const std::string& v, std::vector<int64_t> perm) {
    return b.node("Transpose", {v}, {Attribute::of_ints("perm", std::move(perm))});
  };
  auto ln = [&](const std::string& v) {
    return b.node("LayerNormalization",
                  {v, b.random_normal(fresh(), {kE}, 1.0f), b.random_normal(fresh(), {kE}, 0.1f)},
                  {Attribute::of_int("axis", -1), Attribute::of_float("epsilon", 1e-6f)});
  };
  const int64_t S = kS;
  auto xt = tr(ln(x), {1, 0, 2});
  auto w_in = b.random_normal(fresh(), {kE, 3 * kE}, 0.3f);
  auto b_in = b.random_normal(fresh(), {3 * kE}, 0.3f);
  auto o = dynamo_mha::attention(b, xt, {S, B, kH, kD}, w_in, b_in, fresh);
  o = b.node("Gemm", {o, b.random_normal(fresh(), {kE, kE}, 0.3f), b.random_normal(fresh(), {kE}, 0.1f)},
             {Attribute::of_int("transB", 1)});
  o = tr(b.node("Reshape", {o, ints({S, B, kE})}), {1, 0, 2});
  auto res = b.node("Add", {x, o});
  auto h = b.node("Add", {b.node("MatMul", {ln(res), b.random_normal(fresh(), {kE, 2 * kE}, 0.3f)}),
                          b.random_normal(fresh(), {2 * kE}, 0.1f)});
  h = b.node("Gelu", {h});
  h = b.node("Add", {b.node("MatMul", {h, b.random_normal(fresh(), {2 * kE, kE}, 0.3f)}),
                     b.random_normal(fresh(), {kE}, 0.1f)});
  return b.node("Add", {res, h});
}

ir::Model vit_encoder(int64_t batch, int layers = 2) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 20}};
  GraphBuilder b(m.graph);
  std::string x = b.input("x", F({batch, kS, kE}));
  for (int l = 0; l < layers; ++l) x = encoder_layer(b, x, batch, l);
  b.output(x, F({batch, kS, kE}));
  return m;
}

Target cuda_like_target(std::vector<std::string> disabled = {}) {
  Target t = rt::cpu_target(OptLevel::kLayout);
  t.backend = "cuda";  // the CPU's kernels stand in for the GPU's
  t.layout = Layout::kNhwc;
  t.precision = Precision::kFp16;  // the session lowers to float16 after the passes (the default)
  t.disabled_rules = std::move(disabled);
  return t;
}

int count(const ir::Graph& g, std::string_view op) {
  return static_cast<int>(
      std::count_if(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) { return n.op_type == op; }));
}

std::vector<std::pair<std::string, rt::Value>> feeds(const ir::Model& m) {
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<std::pair<std::string, rt::Value>> out;
  for (const auto& in : m.graph.inputs) {
    std::vector<int64_t> dims;
    for (const auto& d : *in.type.shape) dims.push_back(d.value);
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (float& f : v) f = dist(rng);
    out.emplace_back(in.name, rt::Tensor::from_vector<float>(DataType::kFloat, dims, v));
  }
  return out;
}

// `m` optimised for the target, compared with the unoptimised model on the CPU.
ir::Model optimise_and_compare(const ir::Model& m, const Target& t) {
  ir::Model opt = m;
  optimize(opt, t);
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1});
  rt::Session got(opt, {.optimization = rt::OptLevel::kNone, .threads = 1});
  auto want = ref.run(feeds(m));
  auto have = got.run(feeds(m));
  EXPECT_EQ(want.size(), have.size());
  for (size_t i = 0; i < std::min(want.size(), have.size()); ++i)
    EXPECT_EQ(rt::compare_values(want[i], have[i], {1e-4, 1e-5}), "") << "output " << i;
  return opt;
}

const ir::Node* first_of(const ir::Graph& g, std::string_view op) {
  for (const auto& n : g.nodes)
    if (n.op_type == op) return &n;
  return nullptr;
}

// Both layers' attentions at batch 3: the four [S, B, E] <-> [B, S, E] Transposes go, FusedAttention
// reads the packed projection [B, S, 3, H, D] and writes [B, S, H, D]; off by name, they stay.
TEST(PassesTokenTransposes, VitEncoderTransposesCancel) {
  const ir::Model m = vit_encoder(3);
  ir::Model off = optimise_and_compare(m, cuda_like_target({kRule}));
  EXPECT_EQ(count(off.graph, "FusedAttention"), 2);
  EXPECT_EQ(count(off.graph, "Transpose"), 4);
  ir::Model on = optimise_and_compare(m, cuda_like_target());
  EXPECT_EQ(count(on.graph, "FusedAttention"), 2);
  EXPECT_EQ(count(on.graph, "Transpose"), 0);
  const ir::Node* fa = first_of(on.graph, "FusedAttention");
  ASSERT_NE(fa, nullptr);
  EXPECT_EQ(fa->attr("q_axes")->ints, (std::vector<int64_t>{0, 3, 1, 4}));
  EXPECT_EQ(fa->attr("k_axes")->ints, (std::vector<int64_t>{0, 3, 1, 4}));
  EXPECT_EQ(fa->attr("v_axes")->ints, (std::vector<int64_t>{0, 3, 1, 4}));
  EXPECT_EQ(fa->attr("y_axes")->ints, (std::vector<int64_t>{0, 2, 1, 3}));
}

// Per-token ops between the two Transposes: LayerNormalization, elementwise ops with [E] and [1, 1, E]
// constants, a MatMul, an Add of two region values, a flat Reshape and Gemm; a value also read outside
// (a graph output) gets its Transpose back, and the rule still fires (two removed, one added).
TEST(PassesTokenTransposes, PerTokenOpsAndAnExit) {
  constexpr int64_t B = 3, S = 5, E = 6;
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", F({B, S, E}));
  auto t = b.node("Transpose", {x}, {Attribute::of_ints("perm", {1, 0, 2})});
  auto n = b.node("LayerNormalization", {t, b.random_normal("g", {E}, 1.f), b.random_normal("be", {E}, 0.1f)},
                  {Attribute::of_int("axis", 2)});
  auto a = b.node("Mul", {n, b.random_normal("scale", {1, 1, E}, 1.f)});
  auto r = b.node("Relu", {b.node("Add", {a, b.random_normal("bias", {E}, 1.f)})}, {}, "relu");
  auto mm = b.node("MatMul", {r, b.random_normal("w", {E, E}, 0.5f)});
  auto sum = b.node("Add", {mm, a});
  auto flat = b.node("Reshape", {sum, b.constant_ints("rows", {S * B, E})});
  auto gemm = b.node("Gemm", {flat, b.random_normal("w2", {E, E}, 0.5f), b.random_normal("c", {E}, 0.1f)});
  auto back = b.node("Reshape", {gemm, b.constant_ints("tok", {S, B, E})});
  b.output(b.node("Transpose", {back}, {Attribute::of_ints("perm", {1, 0, 2})}), F({B, S, E}));
  b.output(r, F({S, B, E}));
  ir::Model on = optimise_and_compare(m, cuda_like_target());
  EXPECT_EQ(count(on.graph, "Transpose"), 1) << "the graph output's";
  const ir::Node* t1 = first_of(on.graph, "Transpose");
  ASSERT_NE(t1, nullptr);
  EXPECT_EQ(t1->outputs[0], r);
}

// What the rule must leave: an op that mixes tokens (Softmax over the token axis), and a region whose
// only way out is through a flat value (its Transpose cannot be put back).
TEST(PassesTokenTransposes, LeavesOpsThatMixTokensAndFlatExits) {
  constexpr int64_t B = 3, S = 5, E = 6;
  for (int variant = 0; variant < 2; ++variant) {
    ir::Model m;
    m.ir_version = 9;
    m.opset_imports = {{"", 17}};
    GraphBuilder b(m.graph);
    auto x = b.input("x", F({B, S, E}));
    auto t = b.node("Transpose", {x}, {Attribute::of_ints("perm", {1, 0, 2})});
    auto mid = b.node("MatMul", {t, b.random_normal("w", {E, E}, 0.5f)});
    if (variant == 0) {
      mid = b.node("Softmax", {mid}, {Attribute::of_int("axis", 0)});
    } else {
      auto flat = b.node("Reshape", {mid, b.constant_ints("rows", {S * B, E})});
      b.output(flat, F({S * B, E}));
      mid = b.node("Reshape", {flat, b.constant_ints("tok", {S, B, E})});
    }
    b.output(b.node("Transpose", {mid}, {Attribute::of_ints("perm", {1, 0, 2})}), F({B, S, E}));
    ir::Model on = optimise_and_compare(m, cuda_like_target());
    EXPECT_EQ(count(on.graph, "Transpose"), 2) << "variant " << variant;
  }
}

// Three leading axes in another order, [A, B, C, E] -> [C, A, B, E], through a MatMul, token rows
// (Reshape [A*B*C, E], Gemm), the split back and a Reshape of the trailing axis, then the inverse
// Transpose: nothing left.
TEST(PassesTokenTransposes, ThreeLeadingAxes) {
  constexpr int64_t A = 2, B = 3, C = 4, E = 6;
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", F({A, B, C, E}));
  auto t = b.node("Transpose", {x}, {Attribute::of_ints("perm", {2, 0, 1, 3})});
  auto mm = b.node("Sigmoid", {b.node("MatMul", {t, b.random_normal("w", {E, E}, 0.5f)})});
  auto rows = b.node("Reshape", {mm, b.constant_ints("rows", {C * A * B, E})});
  auto g =
      b.node("Gemm", {rows, b.random_normal("w2", {E, 2 * E}, 0.5f), b.random_normal("c", {1, 2 * E}, 0.1f)});
  auto split = b.node("Reshape", {g, b.constant_ints("split", {C, A, B, 2, E})});
  auto back = b.node("Transpose", {split}, {Attribute::of_ints("perm", {1, 2, 0, 3, 4})});
  b.output(b.node("Tanh", {back}), F({A, B, C, 2, E}));
  ir::Model on = optimise_and_compare(m, cuda_like_target());
  EXPECT_EQ(count(on.graph, "Transpose"), 0);
  ir::Model off = optimise_and_compare(m, cuda_like_target({kRule}));
  EXPECT_EQ(count(off.graph, "Transpose"), 2);
}

TEST(PassesTokenTransposes, IsListed) {
  EXPECT_TRUE(rule_exists(kRule));
  bool layout = false;
  for (const auto& r : list_rules()) layout |= r.name == kRule && r.level == OptLevel::kLayout;
  EXPECT_TRUE(layout);
}

}  // namespace
}  // namespace tessera::passes
