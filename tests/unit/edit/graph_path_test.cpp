#include <gtest/gtest.h>

#include "edit_test_util.h"

namespace tessera::ir::test {
namespace {

std::string resolve_error(const Model& m, const GraphPath& p) {
  try {
    resolve_graph(m, p);
  } catch (const CommandError& e) {
    return e.what();
  }
  return "resolved";
}

TEST(GraphPath, ResolvesMainSubgraphsListsAndFunctions) {
  Model m = small_model();
  EXPECT_EQ(resolve_graph(m, GraphPath::main_graph()).name, "main");
  EXPECT_EQ(resolve_graph(m, then_path(m)).name, "then");
  EXPECT_EQ(resolve_graph(m, b1_path(m)).name, "b1");
  EXPECT_EQ(resolve_graph(m, GraphPath::function_body("custom", "Square")).name, "Square");
  EXPECT_EQ(path_string(m, b1_path(m)), "main/multi.branches[1]");
  EXPECT_EQ(path_string(m, then_path(m)), "main/if.then_branch");
}

TEST(GraphPath, NestsToAnyDepthIncludingInsideFunctions) {
  Model m = small_model();
  Graph inner;
  inner.name = "inner";
  Node loop;
  loop.name = "loop";
  loop.op_type = "Loop";
  loop.attributes.push_back(Attribute::of_graph("body", inner));
  // A subgraph inside the then branch, and one inside the function body.
  AddNode in_then(then_path(m), loop);
  in_then.apply(m);
  GraphPath deep = then_path(m).sub(in_then.node_id(), "body");
  EXPECT_EQ(resolve_graph(m, deep).name, "inner");
  EXPECT_EQ(path_string(m, deep), "main/if.then_branch/loop.body");
  GraphPath fn = GraphPath::function_body("custom", "Square");
  AddNode in_fn(fn, loop);
  in_fn.apply(m);
  EXPECT_EQ(path_string(m, fn.sub(in_fn.node_id(), "body")), "function custom.Square/loop.body");

  // Commands work at depth like anywhere else.
  Node relu;
  relu.op_type = "Relu";
  relu.inputs = {"r"};  // three scopes out
  relu.outputs = {"deep_out"};
  AddNode c(deep, relu);
  expect_round_trip(m, c);
  RenameValue rename(GraphPath::main_graph(), "r", "r_renamed");
  expect_round_trip(m, rename, [&](const Model& after) {
    EXPECT_EQ(resolve_graph(after, deep).nodes[0].inputs[0], "r_renamed");
  });
}

TEST(GraphPath, ErrorsSayWhichStepFails) {
  Model m = small_model();
  NodeId if_id = id_of(m.graph, "if");
  NodeId multi_id = id_of(m.graph, "multi");
  EXPECT_EQ(resolve_error(m, GraphPath::main_graph().sub(99, "body")),
            "node #99 does not exist in graph 'main'");
  EXPECT_EQ(resolve_error(m, GraphPath::main_graph().sub(if_id, "body")),
            "node 'if' has no attribute 'body'");
  EXPECT_EQ(resolve_error(m, GraphPath::main_graph().sub(if_id, "then_branch", 1)),
            "graph index 1 is out of range for attribute 'then_branch' of node 'if' (1 graphs)");
  EXPECT_EQ(resolve_error(m, GraphPath::main_graph().sub(multi_id, "branches", 2)),
            "graph index 2 is out of range for attribute 'branches' of node 'multi' (2 graphs)");
  EXPECT_EQ(resolve_error(m, GraphPath::function_body("custom", "Cube")),
            "function 'custom.Cube' does not exist in the model");
  Model with_attr = m;
  with_attr.graph.find_node(if_id)->attributes.push_back(Attribute::of_int("axis", 1));
  EXPECT_EQ(resolve_error(with_attr, GraphPath::main_graph().sub(if_id, "axis")),
            "attribute 'axis' of node 'if' has type int, not graph");
  // A command on a path that does not resolve is refused like any other.
  RemoveNode c(GraphPath::main_graph().sub(99, "body"), "x");
  expect_refused(m, c, "node #99 does not exist in graph 'main'");
}

TEST(GraphPath, StaysValidAcrossRemoveAndUndoOfTheOwningNode) {
  Model m = small_model();
  History h(m);
  GraphPath then = then_path(m);
  h.execute(std::make_unique<RenameNode>(then, "ident", "ident2"));
  h.execute(std::make_unique<RemoveNode>(GraphPath::main_graph(), "if"));
  Model after = m;
  h.undo();
  h.undo();
  h.redo();
  h.redo();
  EXPECT_TRUE(identical(m, after));
}

}  // namespace
}  // namespace tessera::ir::test
