// convert amp as a library: the tolerance holds on inputs it was not tuned on, tight tolerances keep
// more nodes in float32, undo.
#include "transforms/amp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "check/checker.h"
#include "ir/builder.h"
#include "ir/commands/history.h"
#include "transforms/amp_estimate.h"
#include "transforms/float16.h"
#include "transforms/transform_test_util.h"

namespace tessera::transforms {
namespace {

ir::Type F(const std::vector<int64_t>& dims) {
  return test::float_type(dims);
}

double excess(const std::vector<std::vector<double>>& ref, const std::vector<std::vector<double>>& got,
              double rtol, double atol) {
  double worst = 0;
  for (size_t k = 0; k < ref.size(); ++k)
    for (size_t i = 0; i < ref[k].size(); ++i)
      worst = std::max(worst, (std::fabs(ref[k][i] - got[k][i]) - rtol * std::fabs(ref[k][i])) / atol);
  return worst;
}

// x [4,16] -> MatMul(w1) -> Add(b) -> Exp -> ReduceSum -> Div (a softmax by hand) -> MatMul(w2) -> Tanh:
// every node in the main graph, so each can be kept float32.
ir::Model dense_model() {
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  std::string x = b.input("x", F({4, 16}));
  std::string mm = b.node("MatMul", {x, b.random_normal("w1", {16, 16}, 0.7f)}, {}, "mm");
  std::string add = b.node("Add", {mm, b.random_normal("b1", {16}, 0.5f)}, {}, "add");
  std::string e = b.node("Exp", {add}, {}, "exp");
  std::string sum = b.node("ReduceSum", {e, b.constant_ints("axes", {-1})}, {}, "sum");
  std::string div = b.node("Div", {e, sum}, {}, "div");
  std::string mm2 = b.node("MatMul", {div, b.random_normal("w2", {16, 8}, 3.0f)}, {}, "mm2");
  b.output(b.node("Tanh", {mm2}, {}, "tanh"), F({4, 8}));
  return m;
}

// x [4,16] -> MatMul(w) -> If(cond) { then: Add(1000) -> Sub(1000) -> Relu; else: Neg } -> Tanh. In float16
// 1000 + v keeps a step of 0.5, so the then-branch's Add and Sub must stay float32; everything else can
// be float16. Only a search that looks inside the If's bodies can find that.
ir::Model model_with_sensitive_branch() {
  ir::Graph then_g;
  then_g.name = "then";
  {
    ir::GraphBuilder b(then_g);
    std::string k =
        b.initializer(ir::make_tensor("k1000", ir::DataType::kFloat, {}, std::vector<float>{1000.f}));
    std::string big = b.node("Add", {"mm", k}, {}, "add_big");
    std::string back = b.node("Sub", {big, k}, {}, "sub_big");
    b.output(b.node("Relu", {back}, {}, "relu_then"), F({4, 16}));
  }
  ir::Graph else_g;
  else_g.name = "else";
  {
    ir::GraphBuilder b(else_g);
    b.output(b.node("Neg", {"mm"}, {}, "neg_else"), F({4, 16}));
  }
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  std::string x = b.input("x", F({4, 16}));
  std::string cond = b.input("cond", ir::Type::tensor(ir::DataType::kBool, ir::Shape{}));
  std::string mm = b.node("MatMul", {x, b.random_normal("w", {16, 16}, 0.25f)}, {}, "mm");
  std::string y = b.node("If", {cond},
                         {ir::Attribute::of_graph("then_branch", std::move(then_g)),
                          ir::Attribute::of_graph("else_branch", std::move(else_g))},
                         "if");
  b.output(b.node("Tanh", {y}, {}, "tanh"), F({4, 16}));
  return m;
}

// x [4,16] -> MatMul(w) -> Loop(3 iterations, state h) { add_big = Add(h, 1000); sub_big = Sub(add_big,
// 1000); scale = Mul(sub_big, 0.75); soft = Tanh(scale) } -> Tanh. In float16, 1000 + h keeps a step of
// 0.5, so the body's Add and Sub break any tight tolerance; Mul and Tanh do not.
ir::Model model_with_sensitive_loop() {
  ir::Graph body;
  body.name = "body";
  {
    ir::GraphBuilder b(body);
    b.input("iter", ir::Type::tensor(ir::DataType::kInt64, ir::Shape{}));
    std::string cond = b.input("cond_in", ir::Type::tensor(ir::DataType::kBool, ir::Shape{}));
    std::string h = b.input("h_in", F({4, 16}));
    std::string k =
        b.initializer(ir::make_tensor("k1000_loop", ir::DataType::kFloat, {}, std::vector<float>{1000.f}));
    std::string q =
        b.initializer(ir::make_tensor("k075_loop", ir::DataType::kFloat, {}, std::vector<float>{0.75f}));
    std::string big = b.node("Add", {h, k}, {}, "add_big_loop");
    std::string back = b.node("Sub", {big, k}, {}, "sub_big_loop");
    std::string scaled = b.node("Mul", {back, q}, {}, "scale_loop");
    b.output(b.node("Identity", {cond}, {}, "cond_out"), ir::Type::tensor(ir::DataType::kBool, ir::Shape{}));
    b.output(b.node("Tanh", {scaled}, {}, "soft_loop"), F({4, 16}));
  }
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  std::string x = b.input("x", F({4, 16}));
  std::string mm = b.node("MatMul", {x, b.random_normal("w", {16, 16}, 0.25f)}, {}, "mm");
  std::string trips = b.initializer(ir::make_tensor<int64_t>("trips", ir::DataType::kInt64, {}, {3}));
  std::string yes = b.initializer(ir::make_tensor<uint8_t>("yes", ir::DataType::kBool, {}, {1}));
  std::string y =
      b.node("Loop", {trips, yes, mm}, {ir::Attribute::of_graph("body", std::move(body))}, "loop");
  b.output(b.node("Tanh", {y}, {}, "tanh"), F({4, 16}));
  return m;
}

// x [4,16] -> MatMul(w) -> custom.Big -> Tanh, where custom.Big's body is Add(1000) -> Sub(1000) -> Relu:
// the body's Add and Sub must stay float32, the rest (the body's Relu too) can be float16.
ir::Model model_with_sensitive_function(bool offset_parameter = false) {
  ir::Function f;
  f.name = "Big";
  f.domain = "custom";
  f.opset_imports = {{"", 17}};
  {
    ir::GraphBuilder b(f.body);
    f.body.inputs.push_back({"X", {}, {}, {}});
    // With offset_parameter the 1000 is the call's attribute "offset" (Constant value_float = $offset).
    ir::Attribute value = ir::Attribute::of_tensor(
        "value", ir::make_tensor("", ir::DataType::kFloat, {}, std::vector<float>{1000.f}));
    if (offset_parameter) {
      value = ir::Attribute::of_float("value_float", 0.f);
      value.ref_attr_name = "offset";
      f.attributes.push_back("offset");
    }
    std::string k = b.node("Constant", {}, {value}, "k1000");
    std::string big = b.node("Add", {"X", k}, {}, "add_big_f");
    std::string back = b.node("Sub", {big, k}, {}, "sub_big_f");
    f.body.outputs.push_back({b.node("Relu", {back}, {}, "relu_f"), {}, {}, {}});
  }
  ir::Model m = test::opset17_model();
  m.opset_imports.push_back({"custom", 1});
  ir::GraphBuilder b(m.graph);
  std::string x = b.input("x", F({4, 16}));
  std::string mm = b.node("MatMul", {x, b.random_normal("w", {16, 16}, 0.25f)}, {}, "mm");
  std::vector<ir::Attribute> call;
  if (offset_parameter) call.push_back(ir::Attribute::of_float("offset", 1000.f));
  std::string big = b.nodes("Big", {mm}, call, "big", 1, "custom")[0];
  b.output(b.node("Tanh", {big}, {}, "tanh"), F({4, 16}));
  m.functions.push_back(std::move(f));
  return m;
}

// x [4,16] -> MatMul(w) -> custom.Big ----------------------------------------> Add -> y
//          -> Cast(float16) -> custom.Big -> Cast(float) ----------------------^
// Big's body (CastLike(1000, X), Add, Sub, Relu) works in its input's type: one call is float32, the
// other float16 already in the float32 model. The float32 call's Add and Sub must stay float32.
ir::Model model_with_function_called_in_two_types() {
  ir::Model m = model_with_sensitive_function();
  ir::Function& f = m.functions[0];
  ir::Node& k = f.body.nodes[0];  // the Constant 1000, cast to the input's type inside the body
  std::string k_in = k.outputs[0];
  k.outputs[0] = "k_float";
  ir::Node like;
  like.op_type = "CastLike";
  like.name = "k_like";
  like.inputs = {"k_float", "X"};
  like.outputs = {k_in};
  f.body.nodes.insert(f.body.nodes.begin() + 1, std::move(like));
  // The main graph: drop the Tanh, add the float16 call and the sum.
  ir::Graph& g = m.graph;
  std::string big = g.nodes[1].outputs[0];
  g.nodes.pop_back();
  g.outputs.clear();
  ir::GraphBuilder b(g);
  std::string h = b.node(
      "Cast", {"x"}, {ir::Attribute::of_int("to", static_cast<int64_t>(ir::DataType::kFloat16))}, "to_half");
  std::string big16 = b.nodes("Big", {h}, {}, "big16", 1, "custom")[0];
  std::string back = b.node(
      "Cast", {big16}, {ir::Attribute::of_int("to", static_cast<int64_t>(ir::DataType::kFloat))}, "to_float");
  b.output(b.node("Add", {big, back}, {}, "sum"),
           ir::Type::tensor(ir::DataType::kFloat, ir::Shape{ir::Dim::of(4), ir::Dim::of(16)}));
  return m;
}

// x [4,16] -> 6 x (MatMul -> Tanh), with Add(1000) -> Sub(1000) after the third layer: a chain long
// enough for trials to start from a checkpoint past its beginning.
ir::Model chain_model() {
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  std::string v = b.input("x", F({4, 16}));
  std::string k =
      b.initializer(ir::make_tensor("k1000", ir::DataType::kFloat, {}, std::vector<float>{1000.f}));
  for (int i = 0; i < 6; ++i) {
    std::string l = std::to_string(i);
    v = b.node("MatMul", {v, b.random_normal("w" + l, {16, 16}, 0.3f)}, {}, "mm" + l);
    v = b.node("Tanh", {v}, {}, "tanh" + l);
    if (i == 2) v = b.node("Sub", {b.node("Add", {v, k}, {}, "add_big"), k}, {}, "sub_big");
  }
  b.output(v, F({4, 16}));
  return m;
}

// x -> Cast(to=T) -> Cast(to=float) -> Add(Constant 0) -> y: with T float the Casts are no-ops, with T
// float16 neither is. The models have the same nodes and wiring; only a Cast target differs. The Constant
// comes first, so the optimiser's first edit folds it before any rule asks for a type.
ir::Model two_casts(ir::DataType t) {
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  ir::Type f = ir::Type::tensor(ir::DataType::kFloat, ir::Shape{ir::Dim::of(4)});
  std::string x = b.input("x", f);
  std::string zero = b.node(
      "Constant", {},
      {ir::Attribute::of_tensor(
          "value", ir::make_tensor("zero", ir::DataType::kFloat, {4}, std::vector<float>{0, 0, 0, 0}))},
      "zero");
  std::string h = b.node("Cast", {x}, {ir::Attribute::of_int("to", static_cast<int64_t>(t))}, "narrow");
  std::string w =
      b.node("Cast", {h}, {ir::Attribute::of_int("to", static_cast<int64_t>(ir::DataType::kFloat))}, "widen");
  b.output(b.node("Add", {w, zero}, {}, "add"), f);
  return m;
}

TEST(Amp, SessionsOfModelsThatDifferOnlyInPrecisionAreOptimisedForTheirOwnTypes) {
  // amp's part-runs build one session after another at the same address from models that differ only in
  // precision. The optimiser's type cache knew a model by its address and a fingerprint blind to element
  // types, and a rule's first edit carried the previous model's types over to the next one, so a Cast
  // that mattered was removed as a no-op ("inputs have different element types: float16 and float" at
  // run time, and the part-run ran whole).
  rt::SessionOptions o;
  o.optimization = rt::OptLevel::kBasic;
  o.threads = 1;
  rt::Tensor x = rt::Tensor::from_vector<float>(ir::DataType::kFloat, {4}, {1.0f, 1.0f / 3, 1e-4f, 70000.f});
  for (ir::DataType t : {ir::DataType::kFloat, ir::DataType::kFloat16, ir::DataType::kFloat}) {
    rt::Session s(two_casts(t), o);
    std::vector<rt::Value> y = s.run({{"x", rt::Value(x)}});
    ASSERT_EQ(y.size(), 1u);
    ASSERT_EQ(y[0].tensor().dtype(), ir::DataType::kFloat) << static_cast<int>(t);
    bool narrowed = t == ir::DataType::kFloat16;
    EXPECT_EQ(y[0].tensor().to_double(1) != x.to_double(1), narrowed) << static_cast<int>(t);
    EXPECT_EQ(std::isinf(y[0].tensor().to_double(3)), narrowed) << static_cast<int>(t);  // beyond float16
  }
}

AmpOptions options(double rtol, double atol) {
  AmpOptions o;
  o.rtol = rtol;
  o.atol = atol;
  o.session.optimization = rt::OptLevel::kNone;
  o.session.threads = 1;
  return o;
}

TEST(Amp, LooseToleranceConvertsEverything) {
  ir::Model m = test::control_flow_model();
  ir::History h(m);
  Report r = convert_amp(h, options(1e-2, 1e-3), {test::feeds_for(m, 1)});
  EXPECT_EQ(r.get("nodes kept float32 for accuracy"), 0);
  EXPECT_EQ(r.get("model runs"), 1);  // the whole model in float16 passes at once
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
}

TEST(Amp, TightToleranceKeepsSomeFloat32AndHoldsOnOtherInputs) {
  ir::Model m = dense_model();
  ir::Model original = m;
  ir::History h(m);
  const double rtol = 2e-3, atol = 2e-4;  // tighter than float16 throughout can meet
  Report r = convert_amp(h, options(rtol, atol), {test::feeds_for(m, 1), test::feeds_for(m, 2)});
  EXPECT_GT(r.get("nodes kept float32 for accuracy"), 0);
  EXPECT_LT(r.get("nodes kept float32 for accuracy"), 7);  // some nodes do run in float16
  EXPECT_FALSE(r.details.empty());
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(m));
  for (unsigned seed : {1u, 2u}) {
    auto feeds = test::feeds_for(original, seed);
    EXPECT_LE(excess(test::run_model(original, feeds), test::run_model(m, feeds), rtol, atol), 1.0) << seed;
  }
  h.undo();
  EXPECT_TRUE(m == original);
}

TEST(Amp, MediumToleranceHoldsOnUnseenInputs) {
  ir::Model m = dense_model();
  ir::Model original = m;
  ir::History h(m);
  convert_amp(h, options(3e-3, 1e-4), {test::feeds_for(m, 11), test::feeds_for(m, 12)});
  // Inputs it never saw: allowed twice the tolerance, since the search only guarantees it on its inputs.
  for (unsigned seed : {21u, 22u, 23u}) {
    auto feeds = test::feeds_for(original, seed);
    EXPECT_LE(excess(test::run_model(original, feeds), test::run_model(m, feeds), 3e-3, 1e-4), 2.0) << seed;
  }
}

TEST(Amp, NodesInsideSubgraphsAreCandidates) {
  ir::Model m = model_with_sensitive_branch();
  ir::Model original = m;
  ir::History h(m);
  const double rtol = 1e-2, atol = 1e-3;
  Report r = convert_amp(h, options(rtol, atol), {test::feeds_for(m, 1)});
  EXPECT_EQ(r.get("candidates inside subgraphs"), 4);  // add_big, sub_big, relu_then, neg_else
  EXPECT_EQ(r.get("nodes kept float32 for accuracy"), 2);
  auto kept = [&](const std::string& name) {
    return std::any_of(r.details.begin(), r.details.end(), [&](const std::string& d) {
      return d.find("node '" + name + "' stays float32: in float16") != std::string::npos;
    });
  };
  EXPECT_TRUE(kept("add_big"));
  EXPECT_TRUE(kept("sub_big"));
  EXPECT_EQ(m.graph.find_initializer("w")->dtype, ir::DataType::kFloat16);  // the main graph is float16
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(m));
  for (unsigned seed : {2u, 3u}) {  // inputs the search did not see
    auto feeds = test::feeds_for(original, seed);
    EXPECT_LE(excess(test::run_model(original, feeds), test::run_model(m, feeds), rtol, atol), 1.0) << seed;
  }
  h.undo();
  EXPECT_TRUE(m == original);
}

TEST(AmpEstimate, LoopBodyNodesHaveTheirOwnEstimate) {
  ir::Model m = model_with_sensitive_loop();
  FloatConvertOptions fo;
  fo.keep_io_types = true;
  Report r;
  ir::Model low = convert_float_copy(m, fo, r);
  rt::SessionOptions so;
  so.optimization = rt::OptLevel::kNone;
  so.threads = 1;
  ErrorGrowth e = estimate_error_growth(m, low, so, test::feeds_for(m, 1));
  EXPECT_TRUE(e.bodies_measured);
  for (const char* n : {"add_big_loop", "sub_big_loop", "scale_loop", "soft_loop", "loop"})
    ASSERT_TRUE(e.by_node.count(n)) << n;
  // The cancellation is the body's Sub: it adds far more than the body's other nodes, and than the Loop
  // node as a whole would tell (before, every body node took the Loop's estimate).
  EXPECT_GT(e.by_node.at("sub_big_loop"), 10 * e.by_node.at("scale_loop"));
  EXPECT_GT(e.by_node.at("sub_big_loop"), 10 * e.by_node.at("soft_loop"));
  EXPECT_GT(e.relative.at("sub_big_loop"), e.relative.at("add_big_loop"));
}

// x [4,16], cond -> MatMul(w) -> Loop(3) { If(cond) { then: Sub(Add(h, 1000), 1000); else: Neg(h) } ->
// Mul(0.75) -> Tanh } -> Tanh: the cancelling Sub two levels down.
ir::Model model_with_nested_sensitive_branch() {
  ir::Graph then_g;
  then_g.name = "then";
  {
    ir::GraphBuilder b(then_g);
    std::string k =
        b.initializer(ir::make_tensor("k1000_n", ir::DataType::kFloat, {}, std::vector<float>{1000.f}));
    std::string big = b.node("Add", {"h_n", k}, {}, "add_big_n");
    b.output(b.node("Sub", {big, k}, {}, "sub_big_n"), F({4, 16}));
  }
  ir::Graph else_g;
  else_g.name = "else";
  {
    ir::GraphBuilder b(else_g);
    b.output(b.node("Neg", {"h_n"}, {}, "neg_n"), F({4, 16}));
  }
  ir::Graph body;
  body.name = "body";
  {
    ir::GraphBuilder b(body);
    b.input("iter_n", ir::Type::tensor(ir::DataType::kInt64, ir::Shape{}));
    std::string c = b.input("cond_n", ir::Type::tensor(ir::DataType::kBool, ir::Shape{}));
    b.input("h_n", F({4, 16}));
    std::string q =
        b.initializer(ir::make_tensor("k075_n", ir::DataType::kFloat, {}, std::vector<float>{0.75f}));
    std::string branch = b.node("If", {"cond"},
                                {ir::Attribute::of_graph("then_branch", std::move(then_g)),
                                 ir::Attribute::of_graph("else_branch", std::move(else_g))},
                                "if_n");
    std::string scaled = b.node("Mul", {branch, q}, {}, "scale_n");
    b.output(b.node("Identity", {c}, {}, "cond_out_n"), ir::Type::tensor(ir::DataType::kBool, ir::Shape{}));
    b.output(b.node("Tanh", {scaled}, {}, "soft_n"), F({4, 16}));
  }
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  std::string x = b.input("x", F({4, 16}));
  b.input("cond", ir::Type::tensor(ir::DataType::kBool, ir::Shape{}));
  std::string mm = b.node("MatMul", {x, b.random_normal("w", {16, 16}, 0.25f)}, {}, "mm");
  std::string trips = b.initializer(ir::make_tensor<int64_t>("trips", ir::DataType::kInt64, {}, {3}));
  std::string yes = b.initializer(ir::make_tensor<uint8_t>("yes", ir::DataType::kBool, {}, {1}));
  std::string y =
      b.node("Loop", {trips, yes, mm}, {ir::Attribute::of_graph("body", std::move(body))}, "loop");
  b.output(b.node("Tanh", {y}, {}, "tanh"), F({4, 16}));
  return m;
}

TEST(AmpEstimate, NodesOfABranchInsideALoopHaveTheirOwnEstimate) {
  ir::Model m = model_with_nested_sensitive_branch();
  FloatConvertOptions fo;
  fo.keep_io_types = true;
  Report r;
  ir::Model low = convert_float_copy(m, fo, r);
  rt::SessionOptions so;
  so.optimization = rt::OptLevel::kNone;
  so.threads = 1;
  for (bool cond : {true, false}) {
    auto feeds = test::feeds_for(m, 1);
    for (auto& [name, v] : feeds)
      if (name == "cond") v = rt::Tensor::from_vector<bool>(ir::DataType::kBool, {}, std::vector<bool>{cond});
    ErrorGrowth e = estimate_error_growth(m, low, so, feeds);
    EXPECT_TRUE(e.bodies_measured);
    for (const char* n : {"add_big_n", "sub_big_n", "neg_n", "scale_n", "soft_n", "if_n", "loop"})
      ASSERT_TRUE(e.by_node.count(n)) << n;
    if (cond) {  // the then branch ran: its Sub cancels
      EXPECT_GT(e.by_node.at("sub_big_n"), 10 * e.by_node.at("scale_n"));
      EXPECT_GT(e.by_node.at("sub_big_n"), 10 * e.by_node.at("soft_n"));
    } else {  // it did not: nothing measured for it (empty tensors), the else branch's Neg adds nothing
      EXPECT_EQ(e.by_node.at("sub_big_n"), 0);
      EXPECT_LT(e.by_node.at("neg_n"), 1e-3);
    }
  }
}

TEST(AmpEstimate, FunctionBodyNodesHaveTheirOwnEstimate) {
  ir::Model m = model_with_sensitive_function();
  FloatConvertOptions fo;
  fo.keep_io_types = true;
  Report r;
  ir::Model low = convert_float_copy(m, fo, r);
  rt::SessionOptions so;
  so.optimization = rt::OptLevel::kNone;
  so.threads = 1;
  ErrorGrowth e = estimate_error_growth(m, low, so, test::feeds_for(m, 1));
  for (const char* n : {"add_big_f", "sub_big_f", "relu_f", "mm", "tanh"})
    ASSERT_TRUE(e.by_node.count(n)) << n;
  // The body's Sub cancels; the Relu after it and the main graph's nodes add little.
  EXPECT_GT(e.by_node.at("sub_big_f"), 10 * e.by_node.at("relu_f"));
  EXPECT_GT(e.by_node.at("sub_big_f"), 10 * e.by_node.at("mm"));
}

TEST(Amp, LoopBodyNodesAreSearchedWithTheirOwnEstimates) {
  ir::Model m = model_with_sensitive_loop();
  ir::Model original = m;
  ir::History h(m);
  const double rtol = 1e-2, atol = 1e-3;
  AmpOptions o = options(rtol, atol);
  o.headroom = 0;
  Report r = convert_amp(h, o, {test::feeds_for(m, 1)});
  std::string log;
  for (const auto& d : r.details) log += d + "\n";
  EXPECT_EQ(r.get("candidates inside subgraphs"), 4) << log;  // add, sub, scale, soft (not the Identity)
  auto kept = [&](const std::string& name) {
    return std::any_of(r.details.begin(), r.details.end(), [&](const std::string& d) {
      return d.find("node '" + name + "' stays float32") != std::string::npos;
    });
  };
  // The Sub that cancels stays float32 (the Add's output stays float32 with it or not: either passes at
  // this tolerance once the Sub is float32); the tame nodes of the body go float16.
  EXPECT_TRUE(kept("sub_big_loop")) << log;
  EXPECT_FALSE(kept("scale_loop")) << log;
  EXPECT_FALSE(kept("soft_loop")) << log;
  EXPECT_LE(r.get("nodes kept float32 for accuracy"), 2) << log;
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(m));
  for (unsigned seed : {2u, 3u}) {  // inputs the search did not see
    auto feeds = test::feeds_for(original, seed);
    EXPECT_LE(excess(test::run_model(original, feeds), test::run_model(m, feeds), rtol, atol), 1.0) << seed;
  }
}

TEST(Amp, NodesInsideLocalFunctionsAreCandidates) {
  for (bool parameter : {false, true}) {
    SCOPED_TRACE(parameter ? "the offset an attribute parameter" : "the offset a constant");
    ir::Model m = model_with_sensitive_function(parameter);
    ASSERT_FALSE(check::check_model(m).diagnostics.has_errors());
    ir::Model original = m;
    ir::History h(m);
    const double rtol = 1e-2, atol = 1e-3;
    Report r = convert_amp(h, options(rtol, atol), {test::feeds_for(m, 1)});
    EXPECT_EQ(r.get("candidates inside local functions"), 3);  // add_big_f, sub_big_f, relu_f
    EXPECT_EQ(r.get("nodes kept float32 for accuracy"), 2);
    auto kept = [&](const std::string& name) {
      return std::any_of(r.details.begin(), r.details.end(), [&](const std::string& d) {
        return d.starts_with("node '" + name + "' stays float32");
      });
    };
    EXPECT_TRUE(kept("add_big_f"));
    EXPECT_TRUE(kept("sub_big_f"));
    EXPECT_EQ(m.graph.find_initializer("w")->dtype, ir::DataType::kFloat16);  // the main graph is float16
    EXPECT_EQ(test::count_op(m, "Cast"), 4);  // graph input and output; into and out of the float32 pair
    EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
    EXPECT_TRUE(test::onnx_checker_accepts(m));
    for (unsigned seed : {2u, 3u}) {  // inputs the search did not see
      auto feeds = test::feeds_for(original, seed);
      EXPECT_LE(excess(test::run_model(original, feeds), test::run_model(m, feeds), rtol, atol), 1.0) << seed;
    }
    h.undo();
    EXPECT_TRUE(m == original);
  }
}

TEST(Amp, AFunctionCalledWithTwoTypesIsCopiedPerSignature) {
  ir::Model m = model_with_function_called_in_two_types();
  ASSERT_FALSE(check::check_model(m).diagnostics.has_errors());
  ir::Model original = m;
  ir::History h(m);
  const double rtol = 1e-2, atol = 1e-3;
  Report r = convert_amp(h, options(rtol, atol), {test::feeds_for(m, 1)});
  EXPECT_EQ(r.get("functions copied per call signature"), 1);
  // Each copy is typed from its own calls, so both bodies' nodes are candidates: the float32 call's four,
  // and of the float16 call's only its CastLike (it reads the float32 Constant; the rest is float16).
  EXPECT_EQ(r.get("candidates inside local functions"), 5);
  auto kept = [&](const std::string& name) {
    return std::any_of(r.details.begin(), r.details.end(), [&](const std::string& d) {
      return d.starts_with("node '" + name + "' stays float32");
    });
  };
  EXPECT_TRUE(kept("add_big_f"));
  EXPECT_TRUE(kept("sub_big_f"));
  ASSERT_EQ(m.functions.size(), 2u);
  EXPECT_NE(m.find_function("custom", "Big_2"), nullptr);
  EXPECT_EQ(m.graph.find_initializer("w")->dtype, ir::DataType::kFloat16);
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(m));
  for (unsigned seed : {2u, 3u}) {  // inputs the search did not see
    auto feeds = test::feeds_for(original, seed);
    EXPECT_LE(excess(test::run_model(original, feeds), test::run_model(m, feeds), rtol, atol), 1.0) << seed;
  }
  h.undo();
  EXPECT_TRUE(m == original);
}

TEST(Float16, ABlockedNodeInAFunctionCalledWithTwoTypesIsBlockedInACopyPerSignature) {
  ir::Model m = model_with_function_called_in_two_types();
  ir::Model original = m;
  ir::History h(m);
  FloatConvertOptions o;
  o.keep_io_types = true;
  o.node_block_list = {"add_big_f", "sub_big_f"};
  convert_float(h, o);  // threw "its body cannot stay partly float32" before functions were copied
  EXPECT_EQ(m.functions.size(), 2u);
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(m));
  auto feeds = test::feeds_for(original, 2);
  EXPECT_LE(excess(test::run_model(original, feeds), test::run_model(m, feeds), 1e-2, 1e-3), 1.0);
  h.undo();
  EXPECT_TRUE(m == original);
}

TEST(Amp, ShuffledFeedsKeepMasksAndMoveTheOtherValues) {
  Feeds f;
  f.emplace_back("ids", rt::Tensor::from_vector<int64_t>(ir::DataType::kInt64, {1, 6}, {5, 9, 2, 7, 3, 8}));
  f.emplace_back("mask", rt::Tensor::from_vector<int64_t>(ir::DataType::kInt64, {1, 6}, {1, 1, 1, 1, 0, 0}));
  f.emplace_back("x", rt::Tensor::from_vector<float>(ir::DataType::kFloat, {3}, {0.5f, -1.f, 2.f}));
  auto sets = shuffled_feeds(f, 2, 7);
  ASSERT_EQ(sets.size(), 2u);
  auto values = [](const rt::Value& v) {
    std::vector<double> out;
    for (int64_t i = 0; i < v.tensor().numel(); ++i) out.push_back(v.tensor().to_double(i));
    return out;
  };
  bool moved = false;
  for (const auto& s : sets) {
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(values(s[1].second), values(f[1].second));  // the mask keeps its layout
    for (size_t k : {size_t{0}, size_t{2}}) {
      auto a = values(s[k].second), b = values(f[k].second);
      EXPECT_EQ(s[k].second.tensor().shape(), f[k].second.tensor().shape());
      moved |= a != b;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      EXPECT_EQ(a, b);  // the same values
    }
  }
  EXPECT_TRUE(moved);
  EXPECT_EQ(values(shuffled_feeds(f, 1, 7)[0][0].second), values(sets[0][0].second));  // reproducible
}

TEST(Amp, RunningOnlyFromTheLastUnchangedCheckpointDecidesAlike) {
  // Trials that run only the nodes after the latest checkpoint where they equal the kept state, fed its
  // values there, must reach the same model as trials that run everything.
  // (With a local function, a trial that changes only the body must not start after its call.)
  for (auto make : {chain_model, dense_model, model_with_sensitive_branch,
                    +[] { return model_with_sensitive_function(); }}) {
    ir::Model whole = make(), suffix = make();
    ir::History hw(whole), hs(suffix);
    AmpOptions o = options(1e-2, 1e-3);
    o.checkpoints = 0;
    Report rw = convert_amp(hw, o, {test::feeds_for(whole, 1), test::feeds_for(whole, 2)});
    o.checkpoints = 8;
    Report rs = convert_amp(hs, o, {test::feeds_for(suffix, 1), test::feeds_for(suffix, 2)});
    EXPECT_TRUE(whole == suffix);
    EXPECT_EQ(rw.get("model runs"), rs.get("model runs"));
    EXPECT_EQ(rw.get("nodes kept float32 for accuracy"), rs.get("nodes kept float32 for accuracy"));
    // The same verdicts, run by run, down to the error reported.
    auto runs = [](const Report& r) {
      std::vector<std::string> v;
      for (const auto& d : r.details)
        if (d.starts_with("run ") || d.starts_with("node ")) v.push_back(d);
      return v;
    };
    EXPECT_EQ(runs(rw), runs(rs));
  }
  // On the chain some trials did skip nodes.
  ir::Model m = chain_model();
  ir::History h(m);
  AmpOptions o = options(1e-2, 1e-3);
  o.checkpoints = 8;
  o.headroom = 0;  // the whole tolerance: only the two that break it by 500x stay float32
  Report r = convert_amp(h, o, {test::feeds_for(m, 1)});
  EXPECT_EQ(r.get("nodes kept float32 for accuracy"), 2);  // add_big and sub_big
  bool skipped = std::any_of(r.details.begin(), r.details.end(), [](const std::string& d) {
    return d.starts_with("search time:") && d.find(" 0 % of their nodes skipped") == std::string::npos;
  });
  EXPECT_TRUE(skipped) << r.details.back();
}

TEST(Amp, SmallRunBudgetStillTriesEveryGroupOnce) {
  ir::Model m = dense_model();
  ir::Model original = m;
  ir::History h(m);
  const double rtol = 2e-3, atol = 2e-4;
  AmpOptions o = options(rtol, atol);
  o.max_runs = 3;  // all float16, all float32, one run for the rest
  Report r = convert_amp(h, o, {test::feeds_for(m, 1)});
  EXPECT_EQ(r.get("model runs"), 3);
  EXPECT_EQ(r.get("nodes not tried (run budget spent)"), 0);  // no group is left without its run
  EXPECT_GT(r.get("nodes kept float32 with a group proven to break the tolerance") +
                r.get("nodes kept float32, each proven alone"),
            0);
  auto feeds = test::feeds_for(original, 1);
  EXPECT_LE(excess(test::run_model(original, feeds), test::run_model(m, feeds), rtol, atol), 1.0);
}

TEST(AmpEstimate, ErrorGrowthPointsAtTheNodeThatCancels) {
  // chain_model: (v + 1000) - 1000 in float16 keeps a step of 0.5 of values below 1, so the error
  // relative to the values' magnitude jumps at sub_big.
  ir::Model m = chain_model();
  FloatConvertOptions fo;
  fo.keep_io_types = true;
  Report r;
  ir::Model low = convert_float_copy(m, fo, r);
  rt::SessionOptions so;
  so.optimization = rt::OptLevel::kNone;
  so.threads = 1;
  ErrorGrowth e = estimate_error_growth(m, low, so, test::feeds_for(m, 1));
  ASSERT_TRUE(e.by_node.count("sub_big"));
  double others = 0;
  for (const auto& [name, g] : e.by_node) {
    EXPECT_GE(g, 0) << name;
    if (name != "sub_big") others = std::max(others, g);
  }
  EXPECT_GT(e.by_node.at("sub_big"), 2 * others);
  EXPECT_LT(e.by_node.at("mm0"), 1e-3);  // the first layer: a few float16 roundings
  EXPECT_GT(e.relative.at("mm0"), 0);
  // (Downstream nodes show growth too: the error they receive is no longer small, and a MatMul mixes it
  // unevenly. The error each node makes alone on exact inputs, from a float16 copy of every node run
  // beside the float32 model, was tried instead and ranked worse on the 4-layer encoder: 40 and 72
  // nodes float32 against 15.)
}

TEST(Amp, TheRankingFindsTheNodesThatMustStayFloat32InFewRuns) {
  // 14 candidates, two of which break the tolerance: the ranking puts sub_big last, the prefix search
  // finds the boundary, the rest is settled in groups; fewer runs than one per node.
  ir::Model m = chain_model();
  ir::History h(m);
  AmpOptions o = options(1e-2, 1e-3);
  o.headroom = 0;  // the whole tolerance: only the two that break it by 500x stay float32
  Report r = convert_amp(h, o, {test::feeds_for(m, 1)});
  EXPECT_EQ(r.get("candidate nodes"), 14);
  std::string log;
  for (const auto& d : r.details) log += d + "\n";
  EXPECT_EQ(r.get("nodes kept float32 for accuracy"), 2) << log;  // add_big and sub_big
  EXPECT_EQ(r.get("nodes not tried (run budget spent)"), 0);
  EXPECT_LT(r.get("model runs"), 14);
}

}  // namespace
}  // namespace tessera::transforms
