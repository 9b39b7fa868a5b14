// Shape-inference tests of the src/ops/control operators (If, Loop, Scan).
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tessera::testing {
namespace {

ir::ValueInfo vi(std::string name, ir::Type t = {}) {
  return {std::move(name), std::move(t), {}, {}};
}

ir::Node identity(std::string in, std::string out) {
  ir::Node n;
  n.op_type = "Identity";
  n.inputs = {std::move(in)};
  n.outputs = {std::move(out)};
  return n;
}

// A graph of Identity nodes: each pair (from, to) copies `from` to `to`; outputs are listed by name and
// left untyped so that their types come from inference.
ir::Graph identity_graph(std::vector<ir::ValueInfo> inputs,
                         std::vector<std::pair<std::string, std::string>> copies,
                         std::vector<std::string> outputs, std::vector<ir::Tensor> initializers = {}) {
  ir::Graph g;
  g.name = "body";
  g.inputs = std::move(inputs);
  g.initializers = std::move(initializers);
  for (auto& [from, to] : copies) g.add_node(identity(from, to));
  for (auto& o : outputs) g.outputs.push_back(vi(o));
  return g;
}

// A branch that returns a constant float tensor of the given dims.
ir::Graph const_branch(std::string name, std::vector<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  ir::Tensor t = float_tensor(dims, std::vector<float>(static_cast<size_t>(n), 1.0f));
  t.name = name + "_c";
  return identity_graph({}, {{name + "_c", name + "_out"}}, {name + "_out"}, {t});
}

ir::Attribute graph_attr(std::string name, ir::Graph g) {
  return ir::Attribute::of_graph(std::move(name), std::move(g));
}

// ---- If ----

TEST(IfTest, SameShapesPassThrough) {
  auto r = infer({.op = "If",
                  .opset = 16,
                  .inputs = {T(kBool, {})},
                  .attrs = {graph_attr("then_branch", const_branch("a", {2, 3})),
                            graph_attr("else_branch", const_branch("b", {2, 3}))}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2, 3}));
}

TEST(IfTest, DifferingDimsBecomeUnknown) {
  auto r = infer({.op = "If",
                  .opset = 13,
                  .inputs = {T(kBool, {1})},
                  .attrs = {graph_attr("then_branch", const_branch("a", {2, 3})),
                            graph_attr("else_branch", const_branch("b", {4, 3}))}});
  ASSERT_TRUE(r.ok()) << r.errors();
  ASSERT_TRUE(r.outputs[0].shape);
  EXPECT_EQ(r.outputs[0].shape->size(), 2u);
  EXPECT_FALSE((*r.outputs[0].shape)[0].is_static());
  EXPECT_EQ((*r.outputs[0].shape)[1], ir::Dim::of(3));
}

TEST(IfTest, DifferingRanksLeaveRankUnknown) {
  auto r = infer({.op = "If",
                  .opset = 11,
                  .inputs = {T(kBool, {})},
                  .attrs = {graph_attr("then_branch", const_branch("a", {2})),
                            graph_attr("else_branch", const_branch("b", {2, 2}))}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat));
}

TEST(IfTest, FailsOnOutputCountMismatch) {
  ir::Graph two = const_branch("b", {2});
  two.outputs.push_back(two.outputs[0]);
  auto r =
      infer({.op = "If",
             .opset = 16,
             .inputs = {T(kBool, {})},
             .attrs = {graph_attr("then_branch", const_branch("a", {2})), graph_attr("else_branch", two)}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("else_branch has 2"), std::string::npos) << r.errors();
}

TEST(IfTest, FailsOnElementTypeMismatch) {
  ir::Graph ints = identity_graph({}, {{"c", "o"}}, {"o"}, {ints_tensor({1, 2})});
  ints.initializers[0].name = "c";
  auto r =
      infer({.op = "If",
             .opset = 16,
             .inputs = {T(kBool, {})},
             .attrs = {graph_attr("then_branch", const_branch("a", {2})), graph_attr("else_branch", ints)}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("element types differ"), std::string::npos) << r.errors();
}

TEST(IfTest, FailsOnNonScalarCondition) {
  auto r = infer({.op = "If",
                  .opset = 16,
                  .inputs = {T(kBool, {3})},
                  .attrs = {graph_attr("then_branch", const_branch("a", {2})),
                            graph_attr("else_branch", const_branch("b", {2}))}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("single element"), std::string::npos) << r.errors();
}

// ---- Loop ----

// Body: (iter, cond, x) -> (cond, x, x as scan output).
ir::Graph loop_body() {
  return identity_graph({vi("i", T(kInt64, {})), vi("c", T(kBool, {})), vi("x")},
                        {{"c", "c_out"}, {"x", "x_out"}, {"x", "scan_out"}}, {"c_out", "x_out", "scan_out"});
}

TEST(LoopTest, CarriedAndScanOutputs) {
  auto r = infer({.op = "Loop",
                  .opset = 16,
                  .inputs = {T(kInt64, {}), T(kBool, {}), T(kFloat, {2, "n"})},
                  .attrs = {graph_attr("body", loop_body())},
                  .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0].elem, kFloat);
  EXPECT_EQ(r.outputs[1].elem, kFloat);
}

TEST(LoopTest, ConstantTripCountWithoutCondGivesScanLength) {
  // The body sees x with its initial shape dropped, so pass a body that declares x's shape.
  ir::Graph body = loop_body();
  body.inputs[2].type = T(kFloat, {3});
  auto r = infer({.op = "Loop",
                  .opset = 13,
                  .inputs = {std::nullopt, std::nullopt, T(kFloat, {3})},
                  .attrs = {graph_attr("body", body)},
                  .constants = {{0, ir::make_tensor<int64_t>("", kInt64, {}, {5})}},
                  .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {3}));
  EXPECT_EQ(r.outputs[1], T(kFloat, {5, 3}));
}

TEST(LoopTest, FailsOnBodyInputCount) {
  ir::Graph body = loop_body();
  body.inputs.pop_back();
  auto r = infer({.op = "Loop",
                  .opset = 16,
                  .inputs = {T(kInt64, {}), T(kBool, {}), T(kFloat, {2})},
                  .attrs = {graph_attr("body", body)},
                  .num_outputs = 2});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("the body takes 2 inputs but must take 3"), std::string::npos) << r.errors();
}

TEST(LoopTest, FailsOnOutputCount) {
  auto r = infer({.op = "Loop",
                  .opset = 16,
                  .inputs = {T(kInt64, {}), T(kBool, {}), T(kFloat, {2})},
                  .attrs = {graph_attr("body", loop_body())},
                  .num_outputs = 3});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("the node has 3 outputs"), std::string::npos) << r.errors();
}

TEST(LoopTest, FailsOnNonBoolCondition) {
  ir::Graph body = identity_graph({vi("i", T(kInt64, {})), vi("c", T(kBool, {})), vi("x")},
                                  {{"i", "c_out"}, {"x", "x_out"}}, {"c_out", "x_out"});
  auto r = infer({.op = "Loop",
                  .opset = 16,
                  .inputs = {T(kInt64, {}), T(kBool, {}), T(kFloat, {2})},
                  .attrs = {graph_attr("body", body)}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("condition) must be a bool tensor"), std::string::npos) << r.errors();
}

TEST(LoopTest, FailsOnCarriedElementTypeChange) {
  // The body turns the carried float into the int64 iteration number.
  ir::Graph body = identity_graph({vi("i", T(kInt64, {})), vi("c", T(kBool, {})), vi("x")},
                                  {{"c", "c_out"}, {"i", "x_out"}}, {"c_out", "x_out"});
  auto r = infer({.op = "Loop",
                  .opset = 16,
                  .inputs = {T(kInt64, {}), T(kBool, {}), T(kFloat, {2})},
                  .attrs = {graph_attr("body", body)}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("loop-carried value 0"), std::string::npos) << r.errors();
}

TEST(LoopTest, OptionalCarriedValueMayBeUnwrapped) {
  // The body gets optional(seq) and gives back seq: the result takes the body's type.
  ir::Graph body = identity_graph({vi("i", T(kInt64, {})), vi("c", T(kBool, {})), vi("x")}, {{"c", "c_out"}},
                                  {"c_out", "s_out"});
  ir::Node get;
  get.op_type = "OptionalGetElement";
  get.inputs = {"x"};
  get.outputs = {"s_out"};
  body.add_node(get);
  auto r = infer({.op = "Loop",
                  .opset = 18,
                  .inputs = {T(kInt64, {}), T(kBool, {}), ir::Type::optional(ir::Type::sequence(T(kFloat)))},
                  .attrs = {graph_attr("body", body)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], ir::Type::sequence(T(kFloat)));
}

// ---- Scan ----

// Body: (state s, scan slice x) -> (s, x).
ir::Graph scan_body() {
  return identity_graph({vi("s"), vi("x")}, {{"s", "s_out"}, {"x", "y"}}, {"s_out", "y"});
}

TEST(ScanTest, Opset9SlicesAndStacks) {
  auto r = infer({.op = "Scan",
                  .opset = 16,
                  .inputs = {T(kFloat, {2}), T(kFloat, {"seq", 2})},
                  .attrs = {graph_attr("body", scan_body()), ir::Attribute::of_int("num_scan_inputs", 1)},
                  .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2}));
  EXPECT_EQ(r.outputs[1], T(kFloat, {"seq", 2}));
}

TEST(ScanTest, Opset9Axes) {
  auto r = infer({.op = "Scan",
                  .opset = 11,
                  .inputs = {T(kFloat, {2}), T(kFloat, {2, 7})},
                  .attrs = {graph_attr("body", scan_body()), ir::Attribute::of_int("num_scan_inputs", 1),
                            ir::Attribute::of_ints("scan_input_axes", {1}),
                            ir::Attribute::of_ints("scan_output_axes", {-1})},
                  .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[1], T(kFloat, {2, 7}));
}

TEST(ScanTest, Opset8BatchAxis) {
  auto r = infer({.op = "Scan",
                  .opset = 8,
                  .inputs = {std::nullopt, T(kFloat, {4, 2}), T(kFloat, {4, 6, 2})},
                  .attrs = {graph_attr("body", scan_body()), ir::Attribute::of_int("num_scan_inputs", 1)},
                  .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {4, 2}));
  EXPECT_EQ(r.outputs[1], T(kFloat, {4, 6, 2}));
}

TEST(ScanTest, FailsOnSequenceLengthMismatch) {
  ir::Graph body = identity_graph({vi("x1"), vi("x2")}, {{"x1", "y1"}, {"x2", "y2"}}, {"y1", "y2"});
  auto r = infer({.op = "Scan",
                  .opset = 16,
                  .inputs = {T(kFloat, {3, 2}), T(kFloat, {4, 2})},
                  .attrs = {graph_attr("body", body), ir::Attribute::of_int("num_scan_inputs", 2)},
                  .num_outputs = 2});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("sequence length of scan input 1"), std::string::npos) << r.errors();
}

TEST(ScanTest, FailsOnBadNumScanInputs) {
  auto r = infer({.op = "Scan",
                  .opset = 16,
                  .inputs = {T(kFloat, {2}), T(kFloat, {3, 2})},
                  .attrs = {graph_attr("body", scan_body()), ir::Attribute::of_int("num_scan_inputs", 3)},
                  .num_outputs = 2});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("num_scan_inputs is 3"), std::string::npos) << r.errors();
}

TEST(ScanTest, FailsOnAxesLength) {
  auto r = infer({.op = "Scan",
                  .opset = 16,
                  .inputs = {T(kFloat, {2}), T(kFloat, {3, 2})},
                  .attrs = {graph_attr("body", scan_body()), ir::Attribute::of_int("num_scan_inputs", 1),
                            ir::Attribute::of_ints("scan_input_axes", {0, 1})},
                  .num_outputs = 2});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("'scan_input_axes' has 2 values"), std::string::npos) << r.errors();
}

}  // namespace
}  // namespace tessera::testing

namespace tessera::testing {
namespace {

TEST(ScanTest, FailsWhenStateChangesShape) {
  // The body returns the scan slice [3] as the new state, which started as [2].
  ir::Graph body = identity_graph({vi("s"), vi("x")}, {{"x", "s_out"}, {"x", "y"}}, {"s_out", "y"});
  auto r =
      infer({.op = "Scan",
             .opset = 16,
             .inputs = {T(kFloat, {2}), T(kFloat, {5, 3})},
             .attrs = {ir::Attribute::of_graph("body", body), ir::Attribute::of_int("num_scan_inputs", 1)},
             .num_outputs = 2});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("state 0"), std::string::npos) << r.errors();
}

}  // namespace
}  // namespace tessera::testing
