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
  ir::Model m = test::opset17_model();
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
  b.node("Abs", {x}, {}, "dead");
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

// x [batch, 3, 4, 4], the way exporters rebuild reshape targets one dimension at a time:
//   s = Shape(x); b = Gather(s, 0) (symbolic: stays); h = Gather(s, 2); w = Gather(s, -1); c = Slice(s, 1:2)
//   hw = Mul(h, w); t1 = Concat(Unsqueeze(b, [0]), c, Unsqueeze(hw, [0])); y1 = Reshape(x, t1)
//   t2 = Concat(Unsqueeze(b, [0] again, another initializer), [48]); y2 = Reshape(x, t2)
//   r = Slice(s, -1:0:-1) (4, 4, 3: a negative step); y3 = Cast(r) to float, a graph output
ir::Model shape_arithmetic_model() {
  ir::Model m = test::opset17_model();
  ir::GraphBuilder b(m.graph);
  ir::Shape xs{Dim::symbol("batch"), Dim::of(3), Dim::of(4), Dim::of(4)};
  std::string x = b.input("x", ir::Type::tensor(DataType::kFloat, xs));
  auto scalar = [&](const std::string& name, int64_t v) {
    return b.initializer(ir::make_tensor<int64_t>(name, DataType::kInt64, {}, {v}));
  };
  std::string s = b.node("Shape", {x}, {}, "shape");
  std::string batch = b.node("Gather", {s, scalar("i0", 0)}, {}, "gather_batch");
  std::string h = b.node("Gather", {s, scalar("i2", 2)}, {}, "gather_h");
  std::string w = b.node("Gather", {s, scalar("im1", -1)}, {}, "gather_w");
  std::string c =
      b.node("Slice", {s, b.constant_ints("one", {1}), b.constant_ints("two", {2})}, {}, "slice_c");
  std::string hw = b.node("Mul", {h, w}, {}, "hw");
  std::string ub = b.node("Unsqueeze", {batch, b.constant_ints("axes_a", {0})}, {}, "unsqueeze_a");
  std::string uhw = b.node("Unsqueeze", {hw, b.constant_ints("axes_b", {0})}, {}, "unsqueeze_hw");
  std::string t1 = b.node("Concat", {ub, c, uhw}, {Attribute::of_int("axis", 0)}, "target_1");
  std::string y1 = b.node("Reshape", {x, t1}, {}, "y1");
  std::string ub2 = b.node("Unsqueeze", {batch, b.constant_ints("axes_c", {0})}, {}, "unsqueeze_again");
  std::string t2 =
      b.node("Concat", {ub2, b.constant_ints("n48", {48})}, {Attribute::of_int("axis", 0)}, "target_2");
  std::string y2 = b.node("Reshape", {x, t2}, {}, "y2");
  std::string r = b.node("Slice",
                         {s, b.constant_ints("m1", {-1}), b.constant_ints("zero", {0}),
                          b.constant_ints("ax0", {0}), b.constant_ints("back", {-1})},
                         {}, "slice_back");
  std::string y3 =
      b.node("Cast", {r}, {Attribute::of_int("to", static_cast<int64_t>(DataType::kFloat))}, "y3");
  b.output(y1, ir::Type::tensor(DataType::kFloat, ir::Shape{Dim::symbol("batch"), Dim::of(3), Dim::of(16)}));
  b.output(y2, ir::Type::tensor(DataType::kFloat, ir::Shape{Dim::symbol("batch"), Dim::of(48)}));
  b.output(y3, ir::Type::tensor(DataType::kFloat, ir::Shape{Dim::of(3)}));
  return m;
}

TEST(Sanitize, StaticElementsOfASymbolicShapeFoldAndEqualNodesMerge) {
  ir::Model m = shape_arithmetic_model();
  Report r;
  ir::Model out = sanitize_copy(m, {}, r);
  EXPECT_FALSE(check::check_model(out).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(out));
  for (const char* gone : {"gather_h", "gather_w", "slice_c", "hw", "unsqueeze_hw", "slice_back"})
    EXPECT_FALSE(has_node(out.graph, gone)) << gone;
  // The batch size is symbolic: its Shape and Gather stay, and the second Unsqueeze of it, whose axes are
  // an equal initializer of another name, is merged into the first.
  EXPECT_TRUE(has_node(out.graph, "shape"));
  EXPECT_TRUE(has_node(out.graph, "gather_batch"));
  EXPECT_TRUE(has_node(out.graph, "unsqueeze_a"));
  EXPECT_FALSE(has_node(out.graph, "unsqueeze_again"));
  EXPECT_EQ(out.graph.nodes.size(), 8u);  // Shape, Gather, Unsqueeze, 2 Concat, 2 Reshape, Cast
  EXPECT_GE(r.get("fold_shape_elements"), 4);
  EXPECT_GE(r.get("merge_equal_constants"), 1);
  EXPECT_GE(r.get("merge_common_subexpressions"), 1);
  EXPECT_EQ(out.graph.inputs[0].type.shape->at(0).param, "batch");
  // A node making a graph output stays (the interface keeps its names); it now reads a constant.
  ir::Node* cast = out.graph.find_node("y3");
  ASSERT_NE(cast, nullptr);
  EXPECT_NE(out.graph.find_initializer(cast->inputs[0]), nullptr);
  for (unsigned seed : {1u, 2u}) {
    auto feeds = test::feeds_for(m, seed);
    EXPECT_EQ(test::run_model(m, feeds), test::run_model(out, feeds));
  }
}

TEST(Sanitize, RandomNodesAndCustomOperatorsAreNeverMergedOrDropped) {
  // x [2, 3]: two equal RandomNormalLike draws (two different values), two equal Neg (one goes), a dead
  // Abs (goes) and a dead custom operator (stays: it may have effects outside the graph).
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}, {"custom", 1}};
  m.graph.name = "main";
  ir::GraphBuilder b(m.graph);
  auto type = ir::Type::tensor(DataType::kFloat, ir::Shape{Dim::of(2), Dim::of(3)});
  std::string x = b.input("x", type);
  std::string r1 = b.node("RandomNormalLike", {x}, {Attribute::of_float("seed", 1.f)}, "draw_1");
  std::string r2 = b.node("RandomNormalLike", {x}, {Attribute::of_float("seed", 1.f)}, "draw_2");
  std::string n1 = b.node("Neg", {x}, {}, "neg_1");
  std::string n2 = b.node("Neg", {x}, {}, "neg_2");
  b.node("Abs", {x}, {}, "dead");
  b.nodes("Probe", {x}, {}, "custom_probe", 1, "custom");
  std::string sum =
      b.node("Add", {b.node("Add", {r1, r2}, {}, "draws"), b.node("Add", {n1, n2}, {}, "negs")}, {}, "sum");
  b.output(sum, type);
  Report r;
  ir::Model out = sanitize_copy(m, {}, r);
  for (const char* kept : {"draw_1", "draw_2", "neg_1", "custom_probe"})
    EXPECT_TRUE(has_node(out.graph, kept)) << kept;
  EXPECT_FALSE(has_node(out.graph, "neg_2"));
  EXPECT_FALSE(has_node(out.graph, "dead"));
  EXPECT_EQ(r.get("merge_common_subexpressions"), 1);
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
