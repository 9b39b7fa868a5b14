// delete_initializer: the tensor and every input that read it, in its graph and in the subgraphs that
// see it from the outer scope, in one undo step.
#include "ir/commands/delete_initializer.h"

#include <gtest/gtest.h>

#include "edit_test_util.h"
#include "ir/commands/command_json.h"
#include "ir/commands/ir_json.h"

namespace tessera::ir::test {
namespace {

const GraphPath kMain = GraphPath::main_graph();

Node reader(std::string name, std::vector<std::string> inputs, std::string out) {
  Node n;
  n.name = std::move(name);
  n.op_type = "Add";
  n.inputs = std::move(inputs);
  n.outputs = {std::move(out)};
  return n;
}

Graph& subgraph(Graph& g, const std::string& node, const std::string& attr, size_t i = 0) {
  return *g.find_node(node)->attr(attr)->graphs[i];
}

// small_model plus readers of 'w': the then-branch (directly and, at depth 2, in the body of a node of
// its own) and branch b1, which defines its own 'w' and so shadows the outer one.
Model model_with_subgraph_readers() {
  Model m = small_model();
  Graph& then = subgraph(m.graph, "if", "then_branch");
  then.add_node(reader("then_w", {"r", "w"}, "tw"));
  Graph body;
  body.name = "deep";
  body.add_node(reader("deep_w", {"w", "w"}, "dw"));
  body.outputs.push_back(ValueInfo{"dw", Type::tensor(DataType::kFloat, Shape{}), {}, {}});
  Node holder = reader("holder", {"r"}, "h");
  holder.op_type = "custom.Holder";
  holder.attributes.push_back(Attribute::of_graph("body", std::move(body)));
  then.add_node(std::move(holder));
  Graph& b1 = subgraph(m.graph, "multi", "branches", 1);
  b1.initializers.push_back(make_tensor<float>("w", DataType::kFloat, {1}, {2.0f}));
  b1.add_node(reader("own_w", {"a", "w"}, "ow"));
  return m;
}

TEST(DeleteInitializer, DisconnectsReadersInSubgraphsThatSeeItAndUndoesInOneStep) {
  Model m = model_with_subgraph_readers();
  DeleteInitializer del(kMain, "w");
  expect_round_trip(m, del, [](const Model& after) {
    EXPECT_EQ(after.graph.find_initializer("w"), nullptr);
    const Graph& g = after.graph;
    EXPECT_EQ(g.find_node(id_of(g, "add"))->inputs, (std::vector<std::string>{"x"}));
    Graph& then = subgraph(const_cast<Graph&>(g), "if", "then_branch");
    EXPECT_EQ(node_named(then, "then_w")->inputs, (std::vector<std::string>{"r"}));
    // Both inputs of the depth-2 reader: trailing, so both are dropped (last first).
    EXPECT_EQ(node_named(subgraph(then, "holder", "body"), "deep_w")->inputs, std::vector<std::string>{});
    // b1 has its own 'w': its reader keeps it.
    Graph& b1 = subgraph(const_cast<Graph&>(g), "multi", "branches", 1);
    EXPECT_EQ(node_named(b1, "own_w")->inputs, (std::vector<std::string>{"a", "w"}));
  });
  EXPECT_EQ(del.disconnected(), 4u);
  EXPECT_EQ(del.description(), "Delete initializer 'w'");
  EXPECT_EQ(del.to_json(), json({{"type", "delete_initializer"}, {"name", "w"}}));
}

TEST(DeleteInitializer, ThroughHistoryOneUndoRestoresEveryLink) {
  Model m = model_with_subgraph_readers();
  Model before = m;
  History h(m);
  h.execute(command_from_json(json{{"type", "delete_initializer"}, {"name", "w"}}));
  EXPECT_EQ(m.graph.find_initializer("w"), nullptr);
  h.undo();
  EXPECT_TRUE(identical(m, before));
  EXPECT_FALSE(h.can_undo());
}

// An initializer that is the default of a graph input of the same name: its readers read the input,
// which stays, so they keep their links.
TEST(DeleteInitializer, ReadersOfAGraphInputOfTheSameNameKeepIt) {
  Model m = small_model();
  m.graph.inputs.push_back(ValueInfo{"w", Type::tensor(DataType::kFloat, Shape{}), {}, {}});
  DeleteInitializer del(kMain, "w");
  expect_round_trip(m, del, [](const Model& after) {
    EXPECT_EQ(after.graph.find_node(id_of(after.graph, "add"))->inputs, (std::vector<std::string>{"x", "w"}));
  });
  EXPECT_EQ(del.disconnected(), 0u);
}

// A graph output naming the initializer cannot be left empty like a node input: the deletion is refused,
// naming every such output (in the graph and in subgraphs that see it), and nothing changes.
TEST(DeleteInitializer, AGraphOutputNamingItIsRefusedNamingTheOutput) {
  Model m = model_with_subgraph_readers();
  m.graph.outputs.push_back(ValueInfo{"w", Type::tensor(DataType::kFloat, Shape{}), {}, {}});
  Graph& then = subgraph(m.graph, "if", "then_branch");
  then.outputs.push_back(ValueInfo{"w", Type::tensor(DataType::kFloat, Shape{}), {}, {}});
  // b1 returns its own 'w': not the one deleted, so not named.
  subgraph(m.graph, "multi", "branches", 1)
      .outputs.push_back(ValueInfo{"w", Type::tensor(DataType::kFloat, Shape{}), {}, {}});
  DeleteInitializer del(kMain, "w");
  expect_refused(
      m, del,
      "initializer 'w' is returned by output 2 of graph 'main', output 1 of graph 'then': remove that "
      "output or give it another value first");
}

TEST(DeleteInitializer, ASubgraphOutputNamingItIsRefusedThroughTheJsonCommand) {
  Model m = model_with_subgraph_readers();
  Graph& deep = subgraph(subgraph(m.graph, "if", "then_branch"), "holder", "body");
  deep.outputs.push_back(ValueInfo{"w", Type::tensor(DataType::kFloat, Shape{}), {}, {}});
  Model before = m;
  History h(m);
  try {
    h.execute(command_from_json(json{{"type", "delete_initializer"}, {"name", "w"}}));
    ADD_FAILURE() << "deleted";
  } catch (const CommandError& e) {
    EXPECT_STREQ(
        e.what(),
        "initializer 'w' is returned by output 1 of graph 'deep': remove that output or give it another "
        "value first");
  }
  EXPECT_TRUE(identical(m, before));
  EXPECT_FALSE(h.can_undo());
}

TEST(DeleteInitializer, AMissingInitializerIsRefused) {
  Model m = small_model();
  DeleteInitializer del(kMain, "nope");
  expect_refused(m, del, "initializer 'nope' does not exist in graph 'main'");
}

}  // namespace
}  // namespace tessera::ir::test
