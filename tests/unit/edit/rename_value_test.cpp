#include <gtest/gtest.h>

#include "edit_test_util.h"

namespace tessera::ir::test {
namespace {

const GraphPath kMain = GraphPath::main_graph();

const Graph& sub(const Model& m, const char* node, const char* attr, size_t i = 0) {
  return *node_named(m.graph, node)->attr(attr)->graphs[i];
}

TEST(RenameValue, RenamesEverywhereInTheGraphAndInSubgraphsThatReadIt) {
  Model m = small_model();
  RenameValue c(kMain, "a", "sum");
  expect_round_trip(m, c, [](const Model& after) {
    EXPECT_EQ(node_named(after.graph, "add")->outputs[0], "sum");
    EXPECT_EQ(node_named(after.graph, "relu")->inputs[0], "sum");
    EXPECT_EQ(after.graph.value_info[0].name, "sum");
    EXPECT_EQ(sub(after, "if", "else_branch").nodes[0].inputs[0], "sum");
    EXPECT_EQ(sub(after, "multi", "branches", 1).nodes[0].inputs[0], "sum");
  });
  EXPECT_EQ(c.description(), "Rename value 'a' to 'sum'");
}

TEST(RenameValue, RenamesGraphInputsOutputsAndInitializers) {
  Model m = small_model();
  RenameValue input(kMain, "x", "x_in");
  expect_round_trip(m, input, [](const Model& after) {
    EXPECT_EQ(after.graph.inputs[0].name, "x_in");
    EXPECT_EQ(node_named(after.graph, "add")->inputs[0], "x_in");
  });
  RenameValue init(kMain, "w", "weight");
  expect_round_trip(m, init, [](const Model& after) {
    EXPECT_EQ(after.graph.initializers[0].name, "weight");
    EXPECT_EQ(node_named(after.graph, "add")->inputs[1], "weight");
  });
  RenameValue output(kMain, "y", "result");
  expect_round_trip(m, output, [](const Model& after) { EXPECT_EQ(after.graph.outputs[0].name, "result"); });
}

TEST(RenameValue, LeavesShadowingSubgraphsAlone) {
  Model m = small_model();
  // Give the then branch its own 'r' (as a graph input: a loop body's iteration variable, say).
  Graph& then = *m.graph.find_node(id_of(m.graph, "if"))->attr("then_branch")->graphs[0];
  then.inputs.push_back(ValueInfo{"r", {}, {}, {}});
  RenameValue c(kMain, "r", "relu_out");
  expect_round_trip(m, c, [](const Model& after) {
    EXPECT_EQ(node_named(after.graph, "relu")->outputs[0], "relu_out");
    EXPECT_EQ(sub(after, "if", "then_branch").nodes[0].inputs[0], "r");            // shadowed
    EXPECT_EQ(sub(after, "multi", "branches", 0).nodes[0].inputs[0], "relu_out");  // outer reference
  });
}

TEST(RenameValue, RenamesSubgraphLocalValues) {
  Model m = small_model();
  RenameValue c(then_path(m), "t", "t_local");
  expect_round_trip(m, c, [](const Model& after) {
    const Graph& then = sub(after, "if", "then_branch");
    EXPECT_EQ(then.nodes[0].outputs[0], "t_local");
    EXPECT_EQ(then.outputs[0].name, "t_local");
  });
}

TEST(RenameValue, RenamesFunctionParameters) {
  Model m = small_model();
  RenameValue c(GraphPath::function_body("custom", "Square"), "X", "input");
  expect_round_trip(m, c, [](const Model& after) {
    const Graph& body = after.functions[0].body;
    EXPECT_EQ(body.inputs[0].name, "input");
    EXPECT_EQ(body.nodes[0].inputs, (std::vector<std::string>{"input", "input"}));
  });
}

TEST(RenameValue, RefusesCollisionsAndOuterValues) {
  Model m = small_model();
  RenameValue existing(kMain, "a", "x");
  expect_refused(m, existing, "a value named 'x' already exists in graph 'main'");
  // 't' lives in a subgraph: renaming 'a' to it would capture the subgraph's reference.
  RenameValue nested(kMain, "a", "t");
  expect_refused(m, nested, "a value named 't' already exists in graph 'main'");
  RenameValue from_sub(then_path(m), "r", "r2");
  expect_refused(m, from_sub, "value 'r' belongs to the enclosing graph 'main'; rename it there");
  RenameValue hides_outer(then_path(m), "t", "x");
  expect_refused(m, hides_outer, "a value named 'x' already exists in graph 'main'");
  RenameValue missing(kMain, "nope", "n2");
  expect_refused(m, missing, "value 'nope' does not exist in graph 'main'");
  RenameValue same(kMain, "a", "a");
  expect_refused(m, same, "value 'a' already has that name");
  RenameValue empty(kMain, "a", "");
  expect_refused(m, empty, "value names cannot be empty");
}

}  // namespace
}  // namespace tessera::ir::test
