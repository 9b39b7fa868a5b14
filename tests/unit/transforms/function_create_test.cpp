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
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  m.graph.name = "main";
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
