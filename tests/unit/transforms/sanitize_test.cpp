// tessera sanitize as a library: folding within the threshold, symbolic dimensions kept, bit-identical
// outputs, undo.
#include "transforms/sanitize.h"

#include <gtest/gtest.h>

#include "check/checker.h"
#include "ir/builder.h"
#include "ir/commands/history.h"
#include "transforms/transform_test_util.h"

namespace tessera::transforms {
namespace {

using ir::Attribute;
using ir::DataType;
using ir::Dim;

// x [batch, 4]:
//   ab = Add(Constant a, Constant b)                          folds
//   big = ConstantOfShape([512, 256]) (512 KiB of float)      folds only under a large enough threshold
//   s = Shape(x); r = Reshape(Mul(x, ab), s)                   Shape of a symbolic value: stays
//   i = Identity(r); y = Add(i, ReduceSum(big))               Identity goes
//   dead = Neg(x)                                             goes; 'unused' initializer goes
ir::Model foldable_model() {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  m.graph.name = "main";
  ir::GraphBuilder b(m.graph);
  std::string x =
      b.input("x", ir::Type::tensor(DataType::kFloat, ir::Shape{Dim::symbol("batch"), Dim::of(4)}));
  auto konst = [&](const std::string& name, std::vector<float> v) {
    return b.node("Constant", {},
                  {Attribute::of_tensor("value", ir::make_tensor("", DataType::kFloat, {4}, v))}, name);
  };
  std::string a = konst("a", {1, 2, 3, 4});
  std::string c = konst("b", {0.5f, 0.25f, 0.125f, 0.0625f});
  std::string ab = b.node("Add", {a, c}, {}, "ab");
  std::string shape = b.constant_ints("big_shape", {512, 256});
  std::string big = b.node(
      "ConstantOfShape", {shape},
      {Attribute::of_tensor("value", ir::make_tensor<float>("", DataType::kFloat, {1}, {0.001f}))}, "big");
  std::string sum = b.node("ReduceSum", {big}, {Attribute::of_int("keepdims", 0)}, "sum");
  std::string s = b.node("Shape", {x}, {}, "shape");
  std::string mul = b.node("Mul", {x, ab}, {}, "mul");
  std::string r = b.node("Reshape", {mul, s}, {}, "reshape");
  std::string i = b.node("Identity", {r}, {}, "identity");
  std::string y = b.node("Add", {i, sum}, {}, "y");
  b.node("Neg", {x}, {}, "dead");
  b.initializer(ir::make_tensor<float>("unused", DataType::kFloat, {2}, {1, 2}));
  b.output(y, ir::Type::tensor(DataType::kFloat, ir::Shape{Dim::symbol("batch"), Dim::of(4)}));
  return m;
}

bool has_node(const ir::Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return true;
  return false;
}

TEST(Sanitize, FoldsWithinTheThresholdAndKeepsOutputsBitIdentical) {
  ir::Model m = foldable_model();
  Report r;
  SanitizeOptions o;
  o.fold_threshold = 64 << 10;  // 64 KiB: 'big' (512 KiB) stays computed
  ir::Model out = sanitize_copy(m, o, r);
  EXPECT_FALSE(check::check_model(out).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(out));
  EXPECT_FALSE(has_node(out.graph, "ab"));
  EXPECT_FALSE(has_node(out.graph, "identity"));
  EXPECT_FALSE(has_node(out.graph, "dead"));
  EXPECT_TRUE(has_node(out.graph, "big"));
  EXPECT_TRUE(has_node(out.graph, "shape"));  // batch is symbolic: Shape stays
  EXPECT_EQ(out.graph.inputs[0].type.shape->at(0).param, "batch");
  EXPECT_EQ(out.graph.find_initializer("unused"), nullptr);
  EXPECT_GT(r.get("fold_constants"), 0);
  auto feeds = test::feeds_for(m);
  EXPECT_EQ(test::run_model(m, feeds), test::run_model(out, feeds));
}

TEST(Sanitize, LargerThresholdFoldsMore) {
  ir::Model m = foldable_model();
  Report r;
  SanitizeOptions o;
  o.fold_threshold = 1 << 20;
  ir::Model out = sanitize_copy(m, o, r);
  EXPECT_FALSE(has_node(out.graph, "big"));
  EXPECT_FALSE(has_node(out.graph, "sum"));  // and then its reduction
  auto feeds = test::feeds_for(m, 9);
  EXPECT_EQ(test::run_model(m, feeds), test::run_model(out, feeds));
}

TEST(Sanitize, OnePassDoesLessThanAFixedPoint) {
  ir::Model m = foldable_model();
  Report one, all;
  SanitizeOptions o;
  o.fold_threshold = 1 << 20;
  o.passes = 1;
  ir::Model a = sanitize_copy(m, o, one);
  o.passes = 0;
  ir::Model b = sanitize_copy(m, o, all);
  EXPECT_EQ(one.get("passes"), 1);
  EXPECT_GT(all.get("passes"), 1);
  EXPECT_GE(a.graph.nodes.size(), b.graph.nodes.size());
}

TEST(Sanitize, ControlFlowModelBitIdentical) {
  ir::Model m = test::control_flow_model();
  Report r;
  ir::Model out = sanitize_copy(m, {}, r);
  EXPECT_FALSE(check::check_model(out).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(out));
  auto feeds = test::feeds_for(m);
  EXPECT_EQ(test::run_model(m, feeds), test::run_model(out, feeds));
}

TEST(Sanitize, UndoRestoresTheModel) {
  ir::Model m = foldable_model();
  ir::Model original = m;
  ir::History h(m);
  sanitize(h, {});
  EXPECT_FALSE(m == original);
  ASSERT_EQ(h.undo_count(), 1u);
  h.undo();
  EXPECT_TRUE(m == original);
}

TEST(Sanitize, BrokenModelIsRefused) {
  ir::Model m = foldable_model();
  m.graph.nodes[3].inputs[0] = "nowhere";
  ir::Model original = m;
  ir::History h(m);
  EXPECT_THROW(sanitize(h, {}), TransformError);
  EXPECT_TRUE(m == original);
}

}  // namespace
}  // namespace tessera::transforms
