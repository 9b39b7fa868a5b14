#include <gtest/gtest.h>

#include "edit_test_util.h"

namespace tessera::ir::test {
namespace {

const GraphPath kMain = GraphPath::main_graph();

Node relu(std::string name, std::string in, std::string out) {
  Node n;
  n.name = std::move(name);
  n.op_type = "Relu";
  n.inputs = {std::move(in)};
  n.outputs = {std::move(out)};
  return n;
}

TEST(AddNode, InsertsAtPositionWithFreshIdAndUndoReturnsTheId) {
  Model m = small_model();
  NodeId expected = m.graph.next_node_id;
  AddNode c(kMain, relu("relu2", "r", "r2"), 1);
  expect_round_trip(m, c, [&](const Model& after) {
    ASSERT_EQ(after.graph.nodes.size(), 5u);
    EXPECT_EQ(after.graph.nodes[1].name, "relu2");
    EXPECT_EQ(after.graph.nodes[1].id, expected);
    EXPECT_EQ(after.graph.next_node_id, expected + 1);
  });
  EXPECT_EQ(c.node_id(), expected);
  EXPECT_EQ(c.description(), "Add node 'relu2' (Relu)");
}

TEST(AddNode, AppendsByDefaultAndWorksInSubgraphsAndFunctions) {
  Model m = small_model();
  AddNode in_then(then_path(m), relu("r_then", "t", "t2"));
  expect_round_trip(m, in_then, [](const Model& after) {
    const Graph& then = *node_named(after.graph, "if")->attr("then_branch")->graphs[0];
    EXPECT_EQ(then.nodes.back().name, "r_then");
  });
  AddNode in_fn(GraphPath::function_body("custom", "Square"), relu("r_fn", "Y", "Y2"));
  expect_round_trip(m, in_fn,
                    [](const Model& after) { EXPECT_EQ(after.functions[0].body.nodes.back().name, "r_fn"); });
}

TEST(AddNode, RefusesTakenNamesAndBadPositions) {
  Model m = small_model();
  AddNode dup_name(kMain, relu("relu", "r", "new"));
  expect_refused(m, dup_name, "a node named 'relu' already exists in graph 'main'");
  AddNode dup_value(kMain, relu("r2", "r", "a"));
  expect_refused(m, dup_value, "a value named 'a' already exists in graph 'main'");
  AddNode input_value(kMain, relu("r2", "r", "x"));
  expect_refused(m, input_value, "a value named 'x' already exists in graph 'main'");
  // A subgraph may not shadow a name it sees from outside, nor may the outer graph take one a subgraph uses.
  AddNode shadow(then_path(m), relu("r2", "t", "r"));
  expect_refused(m, shadow, "a value named 'r' already exists in graph 'main'");
  AddNode captured(kMain, relu("r2", "r", "t"));
  expect_refused(m, captured, "a value named 't' already exists in graph 'then'");
  AddNode far(kMain, relu("r2", "r", "r3"), 9);
  expect_refused(m, far, "position 9 is out of range for graph 'main' (4 nodes)");
  Node no_op = relu("r2", "r", "r3");
  no_op.op_type.clear();
  AddNode empty_op(kMain, no_op);
  expect_refused(m, empty_op, "a node needs an op type");
}

TEST(RemoveNode, UndoRestoresPositionAndId) {
  Model m = small_model();
  NodeId id = id_of(m.graph, "relu");
  RemoveNode c(kMain, "relu");
  expect_round_trip(m, c, [&](const Model& after) {
    EXPECT_EQ(after.graph.nodes.size(), 3u);
    EXPECT_EQ(after.graph.find_node(id), nullptr);
  });
  EXPECT_EQ(c.description(), "Remove node 'relu'");
}

TEST(RemoveNode, ByIdInSubgraphAndMissingNode) {
  Model m = small_model();
  GraphPath b1 = b1_path(m);
  RemoveNode c(b1, "x1");
  expect_round_trip(m, c);
  RemoveNode missing(kMain, "conv_9");
  expect_refused(m, missing, "node 'conv_9' does not exist in graph 'main'");
  RemoveNode missing_id(kMain, NodeId{99});
  expect_refused(m, missing_id, "node #99 does not exist in graph 'main'");
}

TEST(RenameNode, RenamesAndRefusesDuplicates) {
  Model m = small_model();
  RenameNode c(kMain, "relu", "relu_renamed");
  expect_round_trip(m, c,
                    [](const Model& after) { EXPECT_NE(node_named(after.graph, "relu_renamed"), nullptr); });
  EXPECT_EQ(c.description(), "Rename node 'relu' to 'relu_renamed'");
  RenameNode dup(kMain, "add", "relu_renamed");
  expect_refused(m, dup, "a node named 'relu_renamed' already exists in graph 'main'");
  // Node names are per graph: a subgraph may reuse one.
  RenameNode other_graph(then_path(m), "ident", "add");
  expect_round_trip(m, other_graph);
}

TEST(RenameNode, RedoFindsTheNodeByIdAfterItsNameChanged) {
  Model m = small_model();
  History h(m);
  h.execute(std::make_unique<RenameNode>(kMain, "relu", "first"));
  h.execute(std::make_unique<RenameNode>(kMain, "first", "second"));
  Model after = m;
  h.undo();
  h.undo();
  h.redo();
  h.redo();
  EXPECT_TRUE(identical(m, after));
}

TEST(SetAttribute, ReplacesInPlaceOrAppends) {
  Model m = small_model();
  SetAttribute add_new(kMain, "relu", Attribute::of_float("alpha", 0.5f));
  expect_round_trip(m, add_new, [](const Model& after) {
    EXPECT_EQ(after.graph.find_node(id_of(after.graph, "relu"))->attr("alpha")->f, 0.5f);
  });
  SetAttribute replace(kMain, "relu", Attribute::of_float("alpha", 2.0f));
  expect_round_trip(m, replace, [](const Model& after) {
    const Node& n = *after.graph.find_node(id_of(after.graph, "relu"));
    ASSERT_EQ(n.attributes.size(), 1u);
    EXPECT_EQ(n.attributes[0].f, 2.0f);
  });
  EXPECT_EQ(replace.description(), "Set attribute 'alpha' of node 'relu'");
  SetAttribute unnamed(kMain, "relu", Attribute::of_float("", 1.0f));
  expect_refused(m, unnamed, "an attribute needs a name");
  SetAttribute missing(kMain, "nope", Attribute::of_int("axis", 1));
  expect_refused(m, missing, "node 'nope' does not exist in graph 'main'");
}

TEST(SetAttribute, ReplacingASubgraphUndoesExactly) {
  Model m = small_model();
  Graph g;
  g.name = "then2";
  SetAttribute c(kMain, "if", Attribute::of_graph("then_branch", g));
  expect_round_trip(m, c);
}

TEST(ResetAttribute, RemovesAndUndoReinsertsAtSamePosition) {
  Model m = small_model();
  ResetAttribute c(kMain, "if", "then_branch");
  expect_round_trip(m, c, [](const Model& after) {
    const Node& n = *after.graph.find_node(id_of(after.graph, "if"));
    ASSERT_EQ(n.attributes.size(), 1u);
    EXPECT_EQ(n.attributes[0].name, "else_branch");
  });
  ResetAttribute missing(kMain, "relu", "alpha");
  expect_refused(m, missing, "node 'relu' has no attribute 'alpha'");
}

TEST(NodeRef, UnnamedNodesAreLabelledByIdAndOp) {
  Model m = small_model();
  GraphPath b0 = GraphPath::main_graph().sub(id_of(m.graph, "multi"), "branches", 0);
  NodeId id = resolve_graph(m, b0).nodes[0].id;
  ResetAttribute c(b0, id, "alpha");
  expect_refused(m, c, "node #1 (Sigmoid) has no attribute 'alpha'");
  EXPECT_EQ(id, 1u);
}

}  // namespace
}  // namespace tessera::ir::test
