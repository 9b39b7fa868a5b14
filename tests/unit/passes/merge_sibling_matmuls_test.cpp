// The merge_sibling_matmuls rule (layout level, CUDA targets): sibling linear layers on one activation
// become one product and a Split. On a BERT attention block (biased Q, K, V projections, padding mask,
// out-projection) the Q/K/V products become one MatMulBias whose packed output FusedAttention reads
// through q_part/k_part/v_part, with no Split left; plain siblings keep the Split; Gemm siblings (transB)
// merge too; what must not merge stays. Each optimised model (CPU kernels standing in for the GPU's) must
// compute what the original does on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "ir/builder.h"
#include "passes/graph_util.h"
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

constexpr int64_t kB = 2, kS = 12, kH = 4, kD = 8, kE = kH * kD;

ir::Type F(std::vector<int64_t> dims) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(Dim::of(d));
  return ir::Type::tensor(DataType::kFloat, s);
}

// x [B, S, E] -> BERT self-attention (Q, K, V with biases, Div scale, additive mask) -> out-projection.
ir::Model bert_block(int64_t opset = 17) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", opset}};
  GraphBuilder b(m.graph);
  int counter = 0;
  auto fresh = [&] { return "c" + std::to_string(counter++); };
  auto x = b.input("x", F({kB, kS, kE}));
  auto linear = [&](const std::string& in, const std::string& name) {
    auto y = b.node("MatMul", {in, b.random_normal(name + "_w", {kE, kE}, 0.3f)});
    return b.node("Add", {b.random_normal(name + "_b", {kE}, 0.5f), y});
  };
  auto heads = [&](const std::string& v, std::vector<int64_t> perm) {
    auto r = b.node("Reshape", {v, b.constant_ints(fresh(), {kB, kS, kH, kD})});
    return b.node("Transpose", {r}, {Attribute::of_ints("perm", std::move(perm))});
  };
  auto q = heads(linear(x, "q"), {0, 2, 1, 3});
  auto kt = heads(linear(x, "k"), {0, 2, 3, 1});
  auto v = heads(linear(x, "v"), {0, 2, 1, 3});
  auto s = b.node("Div", {b.node("MatMul", {q, kt}), b.constant_floats(fresh(), {}, std::sqrt(float(kD)))});
  s = b.node("Add", {s, b.input("mask", F({kB, 1, 1, kS}))});
  auto p = b.node("Softmax", {s}, {Attribute::of_int("axis", -1)});
  auto o = b.node("Transpose", {b.node("MatMul", {p, v})}, {Attribute::of_ints("perm", {0, 2, 1, 3})});
  auto y = linear(b.node("Reshape", {o, b.constant_ints(fresh(), {kB, kS, kE})}), "o");
  b.output(y, F({kB, kS, kE}));
  return m;
}

// How the free batch gets into the head splits' Reshape targets.
enum class Targets {
  kShapeGather,  // Concat(Gather(Shape(v), [0]), [S, H, D]): TorchScript's x.size(0)
  kShapeSlice,   // Concat(Shape(v, start 0, end 1), [S, H, D]) (opset 15+)
  kZero,         // [0, S, H, D]: copied from the input
  kMinusOne,     // [-1, S, H, D]: inferred
};

// bert_block with a free batch ("batch", a dim_param) as BERT is exported with dynamic axes: each head
// split reshapes to [batch, S, H, D] with the batch given as `targets` says, and the heads merge back to
// [batch, S, E] likewise.
ir::Model bert_block_free_batch(Targets targets = Targets::kShapeGather) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  int counter = 0;
  auto fresh = [&] { return "c" + std::to_string(counter++); };
  auto free_batch = [](std::vector<int64_t> rest) {
    ir::Shape s{Dim::symbol("batch")};
    for (int64_t d : rest) s.push_back(Dim::of(d));
    return ir::Type::tensor(DataType::kFloat, s);
  };
  auto x = b.input("x", free_batch({kS, kE}));
  auto linear = [&](const std::string& in, const std::string& name) {
    auto y = b.node("MatMul", {in, b.random_normal(name + "_w", {kE, kE}, 0.3f)});
    return b.node("Add", {y, b.random_normal(name + "_b", {kE}, 0.5f)});
  };
  // [Shape(v)[0], rest...]: the batch read from v at run time.
  auto target = [&](const std::string& v, std::vector<int64_t> rest) {
    if (targets == Targets::kZero || targets == Targets::kMinusOne) {
      rest.insert(rest.begin(), targets == Targets::kZero ? 0 : -1);
      return b.constant_ints(fresh(), rest);
    }
    auto batch = targets == Targets::kShapeSlice
                     ? b.node("Shape", {v}, {Attribute::of_int("start", 0), Attribute::of_int("end", 1)})
                     : b.node("Gather", {b.node("Shape", {v}), b.constant_ints(fresh(), {0})});
    return b.node("Concat", {batch, b.constant_ints(fresh(), rest)}, {Attribute::of_int("axis", 0)});
  };
  auto heads = [&](const std::string& v, std::vector<int64_t> perm) {
    auto r = b.node("Reshape", {v, target(v, {kS, kH, kD})});
    return b.node("Transpose", {r}, {Attribute::of_ints("perm", std::move(perm))});
  };
  auto q = heads(linear(x, "q"), {0, 2, 1, 3});
  auto kt = heads(linear(x, "k"), {0, 2, 3, 1});
  auto v = heads(linear(x, "v"), {0, 2, 1, 3});
  auto s = b.node("Div", {b.node("MatMul", {q, kt}), b.constant_floats(fresh(), {}, std::sqrt(float(kD)))});
  s = b.node("Add", {s, b.input("mask", free_batch({1, 1, kS}))});
  auto p = b.node("Softmax", {s}, {Attribute::of_int("axis", -1)});
  auto o = b.node("Transpose", {b.node("MatMul", {p, v})}, {Attribute::of_ints("perm", {0, 2, 1, 3})});
  auto y = linear(b.node("Reshape", {o, target(x, {kS, kE})}), "o");
  b.output(y, free_batch({kS, kE}));
  return m;
}

// x [M, K] read by `count` linear layers of different widths, each output through a Relu.
ir::Model plain_siblings(bool gemm, bool trans_b, int64_t count = 3) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  constexpr int64_t kM = 33, kK = 40;
  auto x = b.input("x", F({kM, kK}));
  for (int64_t k = 0; k < count; ++k) {
    const int64_t n = 8 + 5 * k;
    const std::string w = b.random_normal(
        "w" + std::to_string(k), trans_b ? std::vector<int64_t>{n, kK} : std::vector<int64_t>{kK, n}, 0.3f);
    std::string y;
    if (gemm) {
      std::vector<std::string> in{x, w};
      if (k != 1) in.push_back(b.random_normal("b" + std::to_string(k), {n}, 0.5f));  // one without C
      y = b.node("Gemm", in,
                 trans_b ? std::vector<Attribute>{Attribute::of_int("transB", 1)} : std::vector<Attribute>{});
    } else {
      y = b.node("MatMul", {x, w});
    }
    b.output(b.node("Relu", {y}), F({kM, n}));
  }
  return m;
}

// Random inputs of the graph's input shapes, a free dimension taking `free` (the batch).
std::vector<std::pair<std::string, rt::Value>> feeds(const ir::Model& m, int64_t free = 3) {
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<std::pair<std::string, rt::Value>> out;
  for (const auto& in : m.graph.inputs) {
    std::vector<int64_t> dims;
    for (const auto& d : *in.type.shape) dims.push_back(d.is_static() ? d.value : free);
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (float& f : v) f = in.name == "mask" ? (dist(rng) > 0.8f ? -10000.0f : 0.0f) : dist(rng);
    out.emplace_back(in.name, rt::Tensor::from_vector<float>(DataType::kFloat, dims, v));
  }
  return out;
}

Target cuda_like_target(std::vector<std::string> disabled = {}) {
  Target t = rt::cpu_target(OptLevel::kLayout);
  t.backend = "cuda";  // the CPU's kernels stand in for the GPU's
  t.layout = Layout::kNchw;
  t.precision = Precision::kFp16;
  t.disabled_rules = std::move(disabled);
  return t;
}

int count(const ir::Graph& g, std::string_view op) {
  return static_cast<int>(
      std::count_if(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) { return n.op_type == op; }));
}

const ir::Node* find(const ir::Graph& g, std::string_view op) {
  for (const auto& n : g.nodes)
    if (n.op_type == op) return &n;
  return nullptr;
}

// Optimised for the CUDA-like target, then run against the original on the CPU (free dimensions at each
// size of `free_sizes`).
ir::Model optimise_and_compare(const ir::Model& m, std::vector<std::string> disabled = {},
                               std::vector<int64_t> free_sizes = {3}) {
  ir::Model opt = m;
  optimize(opt, cuda_like_target(std::move(disabled)));
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1});
  rt::Session got(opt, {.optimization = rt::OptLevel::kNone, .threads = 1});
  for (int64_t free : free_sizes) {
    auto want = ref.run(feeds(m, free));
    auto have = got.run(feeds(m, free));
    EXPECT_EQ(want.size(), have.size());
    for (size_t i = 0; i < std::min(want.size(), have.size()); ++i)
      EXPECT_EQ(rt::compare_values(want[i], have[i], {1e-4, 1e-5}), "")
          << "output " << i << ", batch " << free;
  }
  return opt;
}

TEST(PassesMergeSiblingMatMuls, BertQkvBecomesOnePackedProductReadByAttention) {
  ir::Model opt = optimise_and_compare(bert_block());
  // Q, K and V as one [E, 3E] product, the out-projection separate: 2 MatMulBias instead of 4.
  EXPECT_EQ(count(opt.graph, "MatMulBias"), 2);
  EXPECT_EQ(count(opt.graph, "Split"), 0) << "FusedAttention reads the packed output";
  const ir::Node* a = find(opt.graph, "FusedAttention");
  ASSERT_NE(a, nullptr);
  const ir::Node* packed = find(opt.graph, "MatMulBias");
  ASSERT_NE(packed, nullptr);
  const ir::Tensor* w = opt.graph.find_initializer(packed->inputs[1]);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dims, (std::vector<int64_t>{kE, 3 * kE}));
  // q, k and v: one view of the packed output ([B, S, 3, H, D], a free Reshape).
  EXPECT_EQ(a->inputs[1], a->inputs[0]);
  EXPECT_EQ(a->inputs[2], a->inputs[0]);
  auto view = producer(opt.graph, a->inputs[0]);
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(opt.graph.nodes[*view].op_type, "Reshape");
  EXPECT_EQ(opt.graph.nodes[*view].inputs[0], packed->outputs[0]);
  ASSERT_NE(a->attr("k_part"), nullptr);
  ASSERT_NE(a->attr("v_part"), nullptr);
  EXPECT_EQ(a->attr("k_part")->i, 1);
  EXPECT_EQ(a->attr("v_part")->i, 2);
}

TEST(PassesMergeSiblingMatMuls, OpsetBeforeThirteenSplitsByAttribute) {
  ir::Model m = bert_block(12);
  ir::Model opt = m;
  optimize(opt, cuda_like_target({"fuse_attention"}));
  const ir::Node* s = find(opt.graph, "Split");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->inputs.size(), 1u);
  ASSERT_NE(s->attr("split"), nullptr);
  EXPECT_EQ(s->attr("split")->ints, (std::vector<int64_t>{kE, kE, kE}));
  optimise_and_compare(m, {"fuse_attention"});
}

TEST(PassesMergeSiblingMatMuls, WithoutAttentionTheSplitStays) {
  ir::Model opt = optimise_and_compare(bert_block(), {"fuse_attention"});
  EXPECT_EQ(count(opt.graph, "MatMulBias"), 2);
  EXPECT_EQ(count(opt.graph, "Split"), 1);
}

TEST(PassesMergeSiblingMatMuls, PlainMatMulsOfDifferentWidths) {
  ir::Model opt = optimise_and_compare(plain_siblings(false, false));
  EXPECT_EQ(count(opt.graph, "MatMul"), 1);
  ASSERT_EQ(count(opt.graph, "Split"), 1);
  EXPECT_EQ(find(opt.graph, "Split")->outputs.size(), 3u);
}

// Two biased linear layers and one without a bias on a [B, S, E] activation: one MatMulBias whose bias
// holds zeros for the third.
TEST(PassesMergeSiblingMatMuls, MatMulBiasAndPlainMatMulMergeWithZeroBias) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", F({kB, kS, kE}));
  const char* names[] = {"w0", "w1", "w2"};
  for (int k = 0; k < 3; ++k) {
    std::string y = b.node("MatMul", {x, b.random_normal(names[k], {kE, 8 + 4 * k}, 0.3f)});
    if (k != 2) y = b.node("Add", {y, b.random_normal(std::string(names[k]) + "_b", {8 + 4 * k}, 0.5f)});
    b.output(b.node("Relu", {y}), F({kB, kS, 8 + 4 * k}));
  }
  ir::Model opt = optimise_and_compare(m);
  ASSERT_EQ(count(opt.graph, "MatMulBias"), 1);
  EXPECT_EQ(count(opt.graph, "MatMul"), 0);
  const ir::Tensor* bias = opt.graph.find_initializer(find(opt.graph, "MatMulBias")->inputs[2]);
  ASSERT_NE(bias, nullptr);
  ASSERT_EQ(bias->dims, (std::vector<int64_t>{8 + 12 + 16}));
  for (float v : bias->as<float>().subspan(20)) EXPECT_EQ(v, 0.0f);
}

TEST(PassesMergeSiblingMatMuls, GemmSiblingsWithAndWithoutBias) {
  for (bool trans_b : {false, true}) {
    ir::Model opt = optimise_and_compare(plain_siblings(true, trans_b));
    EXPECT_EQ(count(opt.graph, "Gemm"), 1) << "transB " << trans_b;
    const ir::Node* g = find(opt.graph, "Gemm");
    ASSERT_NE(g, nullptr);
    ASSERT_EQ(g->inputs.size(), 3u);
    EXPECT_EQ(opt.graph.find_initializer(g->inputs[2])->dims, (std::vector<int64_t>{8 + 13 + 18}));
  }
}

TEST(PassesMergeSiblingMatMuls, DifferentKOrNonConstantWeightsStaySeparate) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", F({6, 10}));
  auto w = b.input("w", F({10, 7}));
  b.output(b.node("MatMul", {x, b.random_normal("w0", {10, 5}, 0.3f)}), F({6, 5}));
  b.output(b.node("MatMul", {x, w}), F({6, 7}));  // weights an input: not constant
  auto t = b.node("Transpose", {x});              // [10, 6]: another activation
  b.output(b.node("MatMul", {t, b.random_normal("w1", {6, 4}, 0.3f)}), F({10, 4}));
  ir::Model opt = optimise_and_compare(m);
  EXPECT_EQ(count(opt.graph, "MatMul"), 3);
  EXPECT_EQ(count(opt.graph, "Split"), 0);
}

// A batch of free size (a dim_param): the merge needs only the shared activation, K and the N's static.
TEST(PassesMergeSiblingMatMuls, ActivationOfFreeBatchMerges) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  ir::Shape s{Dim::symbol("batch"), Dim::of(kE)};
  auto x = b.input("x", ir::Type::tensor(DataType::kFloat, s));
  for (int k = 0; k < 2; ++k)
    b.output(
        b.node("Relu", {b.node("MatMul", {x, b.random_normal(k == 0 ? "w0" : "w1", {kE, 8 + k}, 0.3f)})}));
  ir::Model opt = optimise_and_compare(m, {}, {1, 5});
  EXPECT_EQ(count(opt.graph, "MatMul"), 1);
  EXPECT_EQ(count(opt.graph, "Split"), 1);
}

// BERT exported with a free batch: Q, K and V merge, and FusedAttention reads them as parts of the packed
// output through a Reshape that copies the free leading sizes ([0, 0, 3, H, D]): no Split is left, and no
// Shape node reads what the Split wrote. Each form of the head splits' targets; equivalent at batch 1, 2
// and 5.
TEST(PassesMergeSiblingMatMuls, BertQkvWithAFreeBatchIsReadPackedByAttention) {
  for (Targets targets : {Targets::kShapeGather, Targets::kShapeSlice, Targets::kZero, Targets::kMinusOne}) {
    SCOPED_TRACE(static_cast<int>(targets));
    const bool from_shape = targets == Targets::kShapeGather || targets == Targets::kShapeSlice;
    ir::Model opt = optimise_and_compare(bert_block_free_batch(targets), {}, {1, 2, 5});
    EXPECT_EQ(count(opt.graph, "MatMulBias"), 2);
    EXPECT_EQ(count(opt.graph, "Split"), 0) << "FusedAttention reads the packed output";
    EXPECT_EQ(count(opt.graph, "Shape"), from_shape ? 1 : 0) << "only the out-projection's target is left";
    const ir::Node* a = find(opt.graph, "FusedAttention");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->inputs[1], a->inputs[0]);
    EXPECT_EQ(a->inputs[2], a->inputs[0]);
    auto view = producer(opt.graph, a->inputs[0]);
    ASSERT_TRUE(view.has_value());
    const ir::Node& r = opt.graph.nodes[*view];
    EXPECT_EQ(r.op_type, "Reshape");
    const ir::Tensor* target = opt.graph.find_initializer(r.inputs[1]);
    ASSERT_NE(target, nullptr);
    EXPECT_EQ(target->as<int64_t>()[0], 0) << "the free batch is copied from the packed output";
    ASSERT_NE(a->attr("k_part"), nullptr);
    ASSERT_NE(a->attr("v_part"), nullptr);
    EXPECT_EQ(a->attr("k_part")->i, 1);
    EXPECT_EQ(a->attr("v_part")->i, 2);
  }
}

// The same model with the attention fusion off: the merge still happens and the Split stays (a copy).
TEST(PassesMergeSiblingMatMuls, FreeBatchWithoutAttentionKeepsTheSplit) {
  ir::Model opt = optimise_and_compare(bert_block_free_batch(), {"fuse_attention"}, {1, 4});
  EXPECT_EQ(count(opt.graph, "MatMulBias"), 2);
  EXPECT_EQ(count(opt.graph, "Split"), 1);
}

TEST(PassesMergeSiblingMatMuls, RuleCanBeDisabled) {
  ir::Model opt = optimise_and_compare(bert_block(), {"merge_sibling_matmuls"});
  EXPECT_EQ(count(opt.graph, "MatMulBias"), 4);
  ASSERT_NE(find(opt.graph, "FusedAttention"), nullptr);
}

}  // namespace
}  // namespace tessera::passes
