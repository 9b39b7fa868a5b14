// function create as a library: groups by prefix become one function with attribute parameters and a
// call each; outputs bit-identical; undo; refusals.
#include "transforms/function_create.h"

#include <gtest/gtest.h>

#include "check/checker.h"
#include "ir/builder.h"
#include "ir/commands/history.h"
#include "transforms/transform_test_util.h"

namespace tessera::transforms {
namespace {

ir::Type F(std::vector<int64_t> dims) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(ir::Dim::of(d));
  return ir::Type::tensor(ir::DataType::kFloat, s);
}

// x [2,8] -> layer0/{mm, add, act: LeakyRelu alpha 0.1} -> layer1/{mm, add, act: alpha 0.2} -> y
ir::Model layered_model() {
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  std::string v = b.input("x", F({2, 8}));
  for (int l = 0; l < 2; ++l) {
    std::string p = "layer" + std::to_string(l) + "/";
    v = b.node("MatMul", {v, b.random_normal(p + "w", {8, 8}, 0.4f)}, {}, p + "mm");
    v = b.node("Add", {v, b.random_normal(p + "b", {8}, 0.4f)}, {}, p + "add");
    v = b.node("LeakyRelu", {v}, {ir::Attribute::of_float("alpha", l == 0 ? 0.1f : 0.2f)}, p + "act");
  }
  b.output(v, F({2, 8}));
  return m;
}

TEST(FunctionCreate, PrefixGroupsBecomeCallsWithParameters) {
  ir::Model m = layered_model();
  ir::Model original = m;
  ir::History h(m);
  FunctionCreateOptions o;
  o.name = "Layer";
  o.prefixes = {"layer0/", "layer1/"};
  Report r = create_function(h, o);
  EXPECT_EQ(r.get("groups replaced by calls"), 2);
  EXPECT_EQ(r.get("attribute parameters"), 1);
  ASSERT_EQ(m.graph.nodes.size(), 2u);
  EXPECT_EQ(m.graph.nodes[0].op_type, "Layer");
  EXPECT_EQ(m.graph.nodes[0].inputs.size(), 3u);  // x, w, b
  ASSERT_EQ(m.functions.size(), 1u);
  EXPECT_EQ(m.functions[0].attributes, std::vector<std::string>{"layer0_act_alpha"});
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(m));
  auto feeds = test::feeds_for(original);
  EXPECT_EQ(test::run_model(original, feeds), test::run_model(m, feeds));
  h.undo();
  EXPECT_TRUE(m == original);
}

TEST(FunctionCreate, OneGroupByNames) {
  ir::Model m = layered_model();
  ir::Model original = m;
  ir::History h(m);
  FunctionCreateOptions o;
  o.name = "Affine";
  o.nodes = {"layer1/mm", "layer1/add"};
  create_function(h, o);
  EXPECT_EQ(m.graph.nodes.size(), 5u);
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
  auto feeds = test::feeds_for(original, 4);
  EXPECT_EQ(test::run_model(original, feeds), test::run_model(m, feeds));
}

// A BERT-like stack: x [2,6,16] -> 3 x encoder layer -> pooler Tanh. Each layer, named as torch's
// exporter names BERT's (/encoder/layer.L/attention/..., /intermediate/..., /output/...):
//   q, k, v = MatMul + Add; scores = Softmax(MatMul(q, Transpose(k)) * 0.25); ctx = MatMul(scores, v)
//   a = LayerNormalization(MatMul(ctx, wo) + bo + x); h = erf GELU(MatMul(a, w1) + b1)
//   x' = LayerNormalization(MatMul(h, w2) + b2 + a)
// The second LayerNormalization's epsilon differs in layer 2 (an attribute parameter).
ir::Model bert_like_stack(int layers = 3) {
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  std::string x = b.input("x", F({2, 6, 16}));
  std::string embed = b.node("LayerNormalization",
                             {x, b.random_normal("emb_g", {16}, 0.2f), b.random_normal("emb_b", {16}, 0.2f)},
                             {ir::Attribute::of_int("axis", -1)}, "/embeddings/LayerNorm");
  std::string v = embed;
  for (int l = 0; l < layers; ++l) {
    std::string p = "/encoder/layer." + std::to_string(l) + "/";
    auto w = [&](const std::string& n, std::vector<int64_t> d) { return b.random_normal(p + n, d, 0.25f); };
    auto linear = [&](const std::string& scope, const std::string& in, int64_t k, int64_t n) {
      std::string mm = b.node("MatMul", {in, w(scope + ".weight", {k, n})}, {}, p + scope + "/MatMul");
      return b.node("Add", {mm, w(scope + ".bias", {n})}, {}, p + scope + "/Add");
    };
    std::string q = linear("attention/self/query", v, 16, 16);
    std::string k = linear("attention/self/key", v, 16, 16);
    std::string val = linear("attention/self/value", v, 16, 16);
    std::string kt =
        b.node("Transpose", {k}, {ir::Attribute::of_ints("perm", {0, 2, 1})}, p + "attention/self/Transpose");
    std::string sc = b.node("MatMul", {q, kt}, {}, p + "attention/self/MatMul");
    std::string scaled =
        b.node("Mul", {sc, b.constant_floats(p + "scale", {}, 0.25f)}, {}, p + "attention/self/Mul");
    std::string prob =
        b.node("Softmax", {scaled}, {ir::Attribute::of_int("axis", -1)}, p + "attention/self/Softmax");
    std::string ctx = b.node("MatMul", {prob, val}, {}, p + "attention/self/MatMul_1");
    std::string o = linear("attention/output/dense", ctx, 16, 16);
    std::string res = b.node("Add", {o, v}, {}, p + "attention/output/Add_1");
    std::string a = b.node(
        "LayerNormalization",
        {res, w("attention/output/LayerNorm.weight", {16}), w("attention/output/LayerNorm.bias", {16})},
        {ir::Attribute::of_int("axis", -1)}, p + "attention/output/LayerNorm");
    std::string h1 = linear("intermediate/dense", a, 16, 32);
    std::string d =
        b.node("Div", {h1, b.constant_floats(p + "sqrt2", {}, 1.4142135f)}, {}, p + "intermediate/Div");
    std::string e = b.node("Erf", {d}, {}, p + "intermediate/Erf");
    std::string e1 = b.node("Add", {e, b.constant_floats(p + "one", {}, 1.f)}, {}, p + "intermediate/Add_1");
    std::string g1 = b.node("Mul", {h1, e1}, {}, p + "intermediate/Mul");
    std::string g =
        b.node("Mul", {g1, b.constant_floats(p + "half", {}, 0.5f)}, {}, p + "intermediate/Mul_1");
    std::string h2 = linear("output/dense", g, 32, 16);
    std::string res2 = b.node("Add", {h2, a}, {}, p + "output/Add_1");
    v = b.node(
        "LayerNormalization", {res2, w("output/LayerNorm.weight", {16}), w("output/LayerNorm.bias", {16})},
        {ir::Attribute::of_int("axis", -1), ir::Attribute::of_float("epsilon", l == 2 ? 1e-3f : 1e-5f)},
        p + "output/LayerNorm");
  }
  b.output(b.node("Tanh", {v}, {}, "/pooler/Tanh"), F({2, 6, 16}));
  return m;
}

TEST(FunctionCreate, FindRepeatsMakesOneFunctionOfEachLayerOfAStack) {
  ir::Model m = bert_like_stack();
  ir::Model original = m;
  ir::History h(m);
  FunctionCreateOptions o;
  o.name = "EncoderLayer";
  o.find_repeats = true;
  Report r = create_function(h, o);
  const size_t per_layer = (original.graph.nodes.size() - 2) / 3;  // less the embedding norm and pooler
  EXPECT_EQ(r.get("groups replaced by calls"), 3);
  EXPECT_EQ(r.get("function nodes"), static_cast<int64_t>(per_layer));
  EXPECT_EQ(r.get("attribute parameters"), 1);  // the epsilon of layer 2
  ASSERT_EQ(m.graph.nodes.size(), 5u);          // LayerNorm, 3 calls, Tanh
  for (size_t k = 1; k <= 3; ++k) EXPECT_EQ(m.graph.nodes[k].op_type, "EncoderLayer");
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(m));
  for (unsigned seed : {1u, 2u}) {
    auto feeds = test::feeds_for(original, seed);
    EXPECT_EQ(test::run_model(original, feeds), test::run_model(m, feeds));
  }
  h.undo();
  EXPECT_TRUE(m == original);
}

TEST(FunctionCreate, ScopeExpressionMakesOneGroupPerMatch) {
  ir::Model m = bert_like_stack();
  ir::Model original = m;
  ir::History h(m);
  FunctionCreateOptions o;
  o.name = "SelfAttention";
  o.scope = R"(/encoder/layer\.[0-9]+/attention/self/)";
  Report r = create_function(h, o);
  EXPECT_EQ(r.get("groups replaced by calls"), 3);
  EXPECT_EQ(r.get("function nodes"), 11);  // 3 x (MatMul, Add), Transpose, MatMul, Mul, Softmax, MatMul
  EXPECT_EQ(r.get("attribute parameters"), 0);
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(m));
  auto feeds = test::feeds_for(original, 3);
  EXPECT_EQ(test::run_model(original, feeds), test::run_model(m, feeds));
}

TEST(FunctionCreate, FindRepeatsAndScopeRefusals) {
  ir::Model m = bert_like_stack(1);  // one layer: nothing repeats as a whole
  ir::Model original = m;
  ir::History h(m);
  auto refuse = [&](FunctionCreateOptions o, const std::string& msg) {
    o.name = "G";
    try {
      create_function(h, o);
      ADD_FAILURE() << msg;
    } catch (const TransformError& e) {
      EXPECT_NE(std::string(e.what()).find(msg), std::string::npos) << e.what();
    }
    EXPECT_TRUE(m == original);
  };
  FunctionCreateOptions a;
  a.scope = "/decoder/";
  refuse(a, "--scope '/decoder/' matches no node name's start");
  FunctionCreateOptions b;
  b.scope = "/encoder/layer[";
  refuse(b, "is not a valid expression");
  FunctionCreateOptions c;
  c.find_repeats = true;
  c.prefixes = {"/encoder/"};
  refuse(c, "--find-repeats finds the groups itself");
}

TEST(FunctionCreate, Refusals) {
  ir::Model m = layered_model();
  ir::Model original = m;
  ir::History h(m);
  auto refuse = [&](FunctionCreateOptions o, const std::string& msg) {
    o.name = "G";
    try {
      create_function(h, o);
      ADD_FAILURE() << msg;
    } catch (const TransformError& e) {
      EXPECT_NE(std::string(e.what()).find(msg), std::string::npos) << e.what();
    }
    EXPECT_TRUE(m == original);
  };
  FunctionCreateOptions a;
  a.nodes = {"layer0/mm", "ghost"};
  refuse(a, "--nodes names 'ghost', which is not a node of the main graph");
  FunctionCreateOptions b;
  b.nodes = {"layer0/mm", "layer1/mm"};  // layer0/add..layer1/add lie between: not one block
  refuse(b, "is not one block");
  FunctionCreateOptions c;
  c.prefixes = {"layer0/", "layer1/a"};
  refuse(c, "differ");
}

}  // namespace
}  // namespace tessera::transforms
