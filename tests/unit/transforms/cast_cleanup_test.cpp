// Redundant Casts after the float16 conversion, across If / Loop bodies and their parents
// (src/transforms/cast_cleanup.h).
#include "transforms/cast_cleanup.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "check/checker.h"
#include "ir/builder.h"
#include "transforms/float16.h"
#include "transforms/transform_test_util.h"

namespace tessera::transforms {
namespace {

using ir::Attribute;
using ir::DataType;
using ir::Type;

Type F(std::vector<int64_t> dims, DataType t = DataType::kFloat) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(ir::Dim::of(d));
  return Type::tensor(t, s);
}

Attribute to(DataType t) {
  return Attribute::of_int("to", static_cast<int64_t>(t));
}

ir::Graph unary_body(const std::string& name, const std::string& op, const std::string& reads) {
  ir::Graph g;
  g.name = name;
  ir::GraphBuilder b(g);
  b.output(b.node(op, {reads}, {}, name + "_" + op), F({2, 4}));
  return g;
}

// main: x float [2,4], cond bool
//   sig = Sigmoid(x); c16 = Cast(x, to=float16); back = Cast(c16, to=float)   (the model's own Casts)
//   if(cond) then { Relu(back) } else { Abs(sig) }          -> y;  z = Tanh(y)           (output)
//   loop: Loop(2, true) body { scan output Neg(sig) }        -> ys; e = Exp(ys)           (output)
// With Relu, Abs, Tanh, Neg and Exp kept float32, each body computes in float32 and its parent reads the
// result in float32: a plain conversion casts to float16 at the body's end and back in the parent.
ir::Model boundary_model() {
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  std::string x = b.input("x", F({2, 4}));
  std::string cond = b.input("cond", Type::tensor(DataType::kBool, ir::Shape{}));
  std::string sig = b.node("Sigmoid", {x}, {}, "sig");
  std::string c16 = b.node("Cast", {x}, {to(DataType::kFloat16)}, "c16");
  std::string back = b.node("Cast", {c16}, {to(DataType::kFloat)}, "back");
  std::string y = b.node("If", {cond},
                         {Attribute::of_graph("then_branch", unary_body("then", "Relu", back)),
                          Attribute::of_graph("else_branch", unary_body("else", "Abs", sig))},
                         "if");
  b.output(b.node("Tanh", {y}, {}, "tanh"), F({2, 4}));

  ir::Graph body;
  body.name = "body";
  ir::GraphBuilder bb(body);
  bb.input("iter", Type::tensor(DataType::kInt64, ir::Shape{}));
  bb.input("cond_in", Type::tensor(DataType::kBool, ir::Shape{}));
  bb.output(bb.node("Identity", {"cond_in"}, {}, "cond_out"), Type::tensor(DataType::kBool, ir::Shape{}));
  bb.output(bb.node("Neg", {sig}, {}, "neg"), F({2, 4}));
  std::string trips = b.constant_ints("trips", {2});
  m.graph.initializers.back().dims.clear();
  std::string yes = b.initializer(ir::make_tensor<uint8_t>("yes", DataType::kBool, {}, {1}));
  std::string ys = b.node("Loop", {trips, yes}, {Attribute::of_graph("body", std::move(body))}, "loop");
  b.output(b.node("Exp", {ys}, {}, "exp"), F({2, 2, 4}));
  return m;
}

double worst_error(const std::vector<std::vector<double>>& ref, const std::vector<std::vector<double>>& got,
                   double rtol, double atol) {
  double worst = 0;
  for (size_t k = 0; k < ref.size(); ++k)
    for (size_t i = 0; i < ref[k].size(); ++i)
      worst = std::max(worst, (std::fabs(ref[k][i] - got[k][i]) - rtol * std::fabs(ref[k][i])) / atol);
  return worst;
}

const ir::Node* node(const ir::Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

FloatConvertOptions blocking() {
  FloatConvertOptions o;
  o.keep_io_types = true;
  o.op_block_list = {"Relu", "Abs", "Tanh", "Neg", "Exp"};
  return o;
}

TEST(CastCleanup, NoCastPairsAcrossSubgraphBoundaries) {
  ir::Model m = boundary_model();
  ASSERT_FALSE(check::check_model(m).diagnostics.has_errors());
  Report r;
  ir::Model out = convert_float_copy(m, blocking(), r);
  ASSERT_FALSE(check::check_model(out).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(out));
  EXPECT_TRUE(test::no_cast_pairs(out));
  // Left: x to float16 for Sigmoid, and sig back to float32 in the else branch and in the loop body.
  // Gone: the model's two Casts (a no-op and a round trip), the branch's Cast of the outer 'back', the
  // Casts at the end of both branches and of the loop body, and their readers' Casts in main.
  EXPECT_EQ(test::count_op(out, "Cast"), 3);
  EXPECT_EQ(r.get("redundant Casts removed"), 8);
  const ir::Node* iff = node(out.graph, "if");
  ASSERT_TRUE(iff);
  EXPECT_EQ(node(out.graph, "tanh")->inputs[0], iff->outputs[0]);  // reads If's float32 output
  for (const auto& a : iff->attributes) EXPECT_EQ(a.graphs[0]->outputs[0].type.elem, DataType::kFloat);
  const ir::Graph& then = *iff->attr("then_branch")->graphs[0];
  EXPECT_EQ(then.nodes.size(), 1u);
  EXPECT_EQ(then.nodes[0].inputs[0], "x");  // not x -> float16 -> float32
  for (unsigned seed : {1u, 2u, 3u}) {
    auto feeds = test::feeds_for(m, seed);
    EXPECT_LE(worst_error(test::run_model(m, feeds), test::run_model(out, feeds), 1e-2, 1e-3), 1.0) << seed;
  }
}

TEST(CastCleanup, WithoutCleanupThePairsWouldBeThere) {
  // The same conversion before the cleanup: what the rules remove really was there.
  ir::Model m = boundary_model();
  Report r;
  ir::Model out = convert_float_copy(m, blocking(), r);
  // Undo the cleanup's effect by counting what it reported: 3 left + 8 removed = 11 Casts made.
  EXPECT_EQ(test::count_op(out, "Cast") + r.get("redundant Casts removed"), 11);
  EXPECT_FALSE(r.details.empty());
  bool named = std::any_of(r.details.begin(), r.details.end(), [](const std::string& d) {
    return d.find("If 'if' now hands on float itself") != std::string::npos;
  });
  EXPECT_TRUE(named);
}

TEST(CastCleanup, ModelsOwnNoOpCastGoes) {
  // A float16 model's Cast to float16 changes nothing; a Cast that writes a graph output stays.
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  std::string x = b.input("x", F({2}, DataType::kFloat16));
  std::string same = b.node("Cast", {x}, {to(DataType::kFloat16)}, "same");
  std::string r1 = b.node("Relu", {same}, {}, "relu");
  std::string kept = b.node("Cast", {r1}, {to(DataType::kFloat16)}, "kept");
  b.output(kept, F({2}, DataType::kFloat16));
  Report r;
  EXPECT_EQ(remove_redundant_casts(m, r), 1);
  EXPECT_EQ(m.graph.nodes.size(), 2u);
  EXPECT_EQ(node(m.graph, "relu")->inputs[0], "x");
  EXPECT_TRUE(node(m.graph, "kept"));
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
}

TEST(CastCleanup, IntegerRoundTripIsNotARedundantPair) {
  // float -> int32 -> float truncates: not a pair to drop.
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  std::string x = b.input("x", F({2}));
  std::string i = b.node("Cast", {x}, {to(DataType::kInt32)}, "to_int");
  std::string f = b.node("Cast", {i}, {to(DataType::kFloat)}, "to_float");
  b.output(b.node("Relu", {f}, {}, "relu"), F({2}));
  Report r;
  EXPECT_EQ(remove_redundant_casts(m, r), 0);
  EXPECT_EQ(m.graph.nodes.size(), 3u);
}

// main: x float [2,4] -> Relu 'pre' -> Loop(3, true, state) body { acc + 0.5 'acc_add' } -> Tanh 'post' -> z.
// With pre, acc_add and post kept float32 the Loop node itself still converts: its state becomes float16,
// cast to it before the loop, back to float32 on entry to the body, to float16 on exit and back after.
ir::Model carried_model() {
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  std::string x = b.input("x", F({2, 4}));
  std::string pre = b.node("Relu", {x}, {}, "pre");
  ir::Graph body;
  body.name = "body";
  ir::GraphBuilder bb(body);
  bb.input("iter", Type::tensor(DataType::kInt64, ir::Shape{}));
  bb.input("cond_in", Type::tensor(DataType::kBool, ir::Shape{}));
  bb.input("acc", F({2, 4}));
  std::string half = bb.node(
      "Constant", {},
      {Attribute::of_tensor("value", ir::make_tensor<float>("", DataType::kFloat, {}, {0.5f}))}, "half");
  bb.output(bb.node("Identity", {"cond_in"}, {}, "cond_out"), Type::tensor(DataType::kBool, ir::Shape{}));
  bb.output(bb.node("Add", {"acc", half}, {}, "acc_add"), F({2, 4}));
  std::string trips = b.constant_ints("trips", {3});
  m.graph.initializers.back().dims.clear();
  std::string yes = b.initializer(ir::make_tensor<uint8_t>("yes", DataType::kBool, {}, {1}));
  std::string y = b.node("Loop", {trips, yes, pre}, {Attribute::of_graph("body", std::move(body))}, "loop");
  b.output(b.node("Tanh", {y}, {}, "post"), F({2, 4}));
  return m;
}

TEST(CastCleanup, LoopCarriedValueCastPairsCancel) {
  ir::Model m = carried_model();
  ASSERT_FALSE(check::check_model(m).diagnostics.has_errors());
  FloatConvertOptions o;
  o.keep_io_types = true;
  o.node_block_list = {"pre", "acc_add", "post"};
  Report r;
  ir::Model out = convert_float_copy(m, o, r);
  ASSERT_FALSE(check::check_model(out).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(out));
  // The four Casts (before the loop, on entry, on exit, after it) all go: the state is carried in float32.
  EXPECT_EQ(test::count_op(out, "Cast"), 0);
  EXPECT_EQ(r.get("redundant Casts removed"), 4);
  bool named = std::any_of(r.details.begin(), r.details.end(), [](const std::string& d) {
    return d.find("Loop 'loop' carries state 0 in float itself") != std::string::npos;
  });
  EXPECT_TRUE(named);
  const ir::Node* loop = node(out.graph, "loop");
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->inputs[2], node(out.graph, "pre")->outputs[0]);
  const ir::Graph& body = *loop->attr("body")->graphs[0];
  EXPECT_EQ(body.inputs[2].type.elem, DataType::kFloat);
  EXPECT_EQ(body.outputs[1].type.elem, DataType::kFloat);
  // Everything computes in float32 as before: the outputs are the same bits.
  for (unsigned seed : {1u, 2u}) {
    auto feeds = test::feeds_for(m, seed);
    EXPECT_EQ(test::run_model(m, feeds), test::run_model(out, feeds)) << seed;
  }
}

TEST(CastCleanup, LoopStateFromAFloat16NodeKeepsItsCasts) {
  // 'pre' converts: the state starts as a float16 value no Cast made, so carrying it in float32 would
  // need a new Cast; the body's Casts stay.
  ir::Model m = carried_model();
  FloatConvertOptions o;
  o.keep_io_types = true;
  o.node_block_list = {"acc_add", "post"};
  Report r;
  ir::Model out = convert_float_copy(m, o, r);
  ASSERT_FALSE(check::check_model(out).diagnostics.has_errors());
  const ir::Node* loop = node(out.graph, "loop");
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->attr("body")->graphs[0]->inputs[2].type.elem, DataType::kFloat16);
  EXPECT_EQ(test::count_op(out, "Cast"), 4);  // x to float16, entry, exit, after the loop
  for (unsigned seed : {1u, 2u}) {
    auto feeds = test::feeds_for(m, seed);
    EXPECT_LE(worst_error(test::run_model(m, feeds), test::run_model(out, feeds), 1e-2, 1e-3), 1.0) << seed;
  }
}

// main: s0 float [2,4], xs float [3,2,4] -> Relu 'pre' -> Scan(state, xs) body { s + x 'sacc'; Abs(x) }
//   -> final state -> Tanh 'post' -> z; scan output ys -> output.
TEST(CastCleanup, ScanStateCastPairsCancel) {
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  std::string s0 = b.input("s0", F({2, 4}));
  std::string xs = b.input("xs", F({3, 2, 4}));
  std::string pre = b.node("Relu", {s0}, {}, "pre");
  ir::Graph body;
  body.name = "scan_body";
  ir::GraphBuilder bb(body);
  bb.input("s", F({2, 4}));
  bb.input("x", F({2, 4}));
  bb.output(bb.node("Add", {"s", "x"}, {}, "sacc"), F({2, 4}));
  bb.output(bb.node("Abs", {"x"}, {}, "absx"), F({2, 4}));
  auto outs = b.nodes("Scan", {pre, xs},
                      {Attribute::of_graph("body", std::move(body)), Attribute::of_int("num_scan_inputs", 1)},
                      "scan", 2);
  b.output(b.node("Tanh", {outs[0]}, {}, "post"), F({2, 4}));
  b.output(outs[1], F({3, 2, 4}));
  ASSERT_FALSE(check::check_model(m).diagnostics.has_errors());
  FloatConvertOptions o;
  o.keep_io_types = true;
  o.node_block_list = {"pre", "sacc", "post"};
  Report r;
  ir::Model out = convert_float_copy(m, o, r);
  ASSERT_FALSE(check::check_model(out).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(out));
  bool named = std::any_of(r.details.begin(), r.details.end(), [](const std::string& d) {
    return d.find("Scan 'scan' carries state 0 in float itself") != std::string::npos;
  });
  EXPECT_TRUE(named);
  const ir::Node* scan = node(out.graph, "scan");
  ASSERT_TRUE(scan);
  EXPECT_EQ(scan->inputs[0], node(out.graph, "pre")->outputs[0]);
  const ir::Graph& g = *scan->attr("body")->graphs[0];
  EXPECT_EQ(g.inputs[0].type.elem, DataType::kFloat);
  EXPECT_EQ(g.outputs[0].type.elem, DataType::kFloat);
  EXPECT_TRUE(test::no_cast_pairs(out));
  for (unsigned seed : {1u, 2u}) {
    auto feeds = test::feeds_for(m, seed);
    EXPECT_LE(worst_error(test::run_model(m, feeds), test::run_model(out, feeds), 1e-2, 1e-3), 1.0) << seed;
  }
}

}  // namespace
}  // namespace tessera::transforms
