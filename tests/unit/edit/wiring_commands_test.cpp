#include <gtest/gtest.h>

#include "edit_test_util.h"

namespace tessera::ir::test {
namespace {

const GraphPath kMain = GraphPath::main_graph();

const Node& node(const Model& m, const char* name) {
  return *node_named(m.graph, name);
}

TEST(Connect, SetsAnInputOrAppendsATrailingOne) {
  Model m = small_model();
  Connect set(kMain, "add", 1, "x");
  expect_round_trip(m, set, [](const Model& after) {
    EXPECT_EQ(node(after, "add").inputs, (std::vector<std::string>{"x", "x"}));
  });
  EXPECT_EQ(set.description(), "Connect 'x' to input 1 of node 'add'");
  Connect append(kMain, "relu", 1, "w");
  expect_round_trip(m, append, [](const Model& after) {
    EXPECT_EQ(node(after, "relu").inputs, (std::vector<std::string>{"a", "w"}));
  });
}

TEST(Connect, SubgraphsSeeOuterValues) {
  Model m = small_model();
  Connect c(then_path(m), "ident", 0, "x");
  expect_round_trip(m, c);
}

TEST(Connect, RefusesBadIndexAndUnknownValues) {
  Model m = small_model();
  Connect far(kMain, "add", 3, "x");
  expect_refused(m, far, "input index 3 is out of range for node 'add' (2 inputs)");
  Connect one(kMain, "relu", 2, "x");
  expect_refused(m, one, "input index 2 is out of range for node 'relu' (1 input)");
  Connect unknown(kMain, "add", 0, "nope");
  expect_refused(m, unknown, "value 'nope' does not exist in graph 'main'");
  // A value of a subgraph is not visible to the graph around it.
  Connect inner(kMain, "add", 0, "t");
  expect_refused(m, inner, "value 't' does not exist in graph 'main'");
  Connect empty(kMain, "add", 0, "");
  expect_refused(m, empty, "Connect needs a value name; use Disconnect to omit an input");
}

TEST(Disconnect, OmitsAMiddleInputAndDropsATrailingOne) {
  Model m = small_model();
  Disconnect middle(kMain, "add", 0);
  expect_round_trip(m, middle, [](const Model& after) {
    EXPECT_EQ(node(after, "add").inputs, (std::vector<std::string>{"", "w"}));
  });
  Disconnect last(kMain, "add", 1);
  expect_round_trip(m, last, [](const Model& after) {
    EXPECT_EQ(node(after, "add").inputs, (std::vector<std::string>{""}));
  });
  Disconnect far(kMain, "add", 1);
  expect_refused(m, far, "input index 1 is out of range for node 'add' (1 input)");
}

TEST(SetNodeOutput, RenamesOneOutputAppendsAndDrops) {
  Model m = small_model();
  SetNodeOutput set(kMain, "relu", 0, "r_new");
  expect_round_trip(m, set, [](const Model& after) {
    EXPECT_EQ(node(after, "relu").outputs, (std::vector<std::string>{"r_new"}));
    EXPECT_EQ(node(after, "multi").inputs[0], "r");  // consumers are not rewired
  });
  SetNodeOutput append(kMain, "relu", 1, "mask");
  expect_round_trip(m, append, [](const Model& after) {
    EXPECT_EQ(node(after, "relu").outputs, (std::vector<std::string>{"r_new", "mask"}));
  });
  SetNodeOutput drop(kMain, "relu", 1, "");
  expect_round_trip(m, drop, [](const Model& after) {
    EXPECT_EQ(node(after, "relu").outputs, (std::vector<std::string>{"r_new"}));
  });
}

TEST(SetNodeOutput, RefusesTakenNamesAndBadIndex) {
  Model m = small_model();
  SetNodeOutput taken(kMain, "relu", 0, "a");
  expect_refused(m, taken, "a value named 'a' already exists in graph 'main'");
  SetNodeOutput far(kMain, "relu", 2, "q");
  expect_refused(m, far, "output index 2 is out of range for node 'relu' (1 output)");
  SetNodeOutput append_empty(kMain, "relu", 1, "");
  expect_refused(m, append_empty, "output index 1 is out of range for node 'relu' (1 output)");
}

}  // namespace
}  // namespace tessera::ir::test
