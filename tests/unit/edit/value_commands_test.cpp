#include <gtest/gtest.h>

#include "edit_test_util.h"

namespace tessera::ir::test {
namespace {

const GraphPath kMain = GraphPath::main_graph();

Tensor bias(std::string name, float v = 0.5f) {
  return make_tensor<float>(std::move(name), DataType::kFloat, {4}, {v, v, v, v});
}
ValueInfo info(std::string name, DataType t = DataType::kFloat) {
  return ValueInfo{std::move(name), Type::tensor(t, Shape{Dim::symbol("batch"), Dim::of(4)}), {}, {}};
}

TEST(Initializers, AddReplaceRemove) {
  Model m = small_model();
  AddInitializer add(kMain, bias("b"));
  expect_round_trip(m, add,
                    [](const Model& after) { EXPECT_NE(after.graph.find_initializer("b"), nullptr); });
  ReplaceInitializer replace(kMain, bias("w", 9.0f));
  expect_round_trip(m, replace, [](const Model& after) {
    const Tensor& w = after.graph.initializers[0];
    EXPECT_EQ(w.dims, (std::vector<int64_t>{4}));
    EXPECT_EQ(w.as<float>()[0], 9.0f);
  });
  RemoveInitializer remove(kMain, "w");
  expect_round_trip(m, remove, [](const Model& after) {
    ASSERT_EQ(after.graph.initializers.size(), 1u);
    EXPECT_EQ(after.graph.initializers[0].name, "b");
  });
  EXPECT_EQ(remove.description(), "Remove initializer 'w'");
}

TEST(Initializers, MayShareANameWithAGraphInputOnly) {
  Model m = small_model();
  AddInitializer default_for_input(kMain, bias("x"));
  expect_round_trip(m, default_for_input);
  AddInitializer dup(kMain, bias("w"));
  expect_refused(m, dup, "an initializer named 'w' already exists in graph 'main'");
  AddInitializer node_output(kMain, bias("a"));
  expect_refused(m, node_output, "a value named 'a' already exists in graph 'main'");
  ReplaceInitializer missing(kMain, bias("nope"));
  expect_refused(m, missing, "initializer 'nope' does not exist in graph 'main'");
  RemoveInitializer missing_remove(then_path(m), "w");
  expect_refused(m, missing_remove, "initializer 'w' does not exist in graph 'then'");
}

TEST(GraphInputs, AddAtPositionAndRemove) {
  Model m = small_model();
  AddGraphInput add(kMain, info("mask", DataType::kBool), 1);
  expect_round_trip(m, add, [](const Model& after) {
    ASSERT_EQ(after.graph.inputs.size(), 3u);
    EXPECT_EQ(after.graph.inputs[1].name, "mask");
  });
  RemoveGraphInput remove(kMain, "x");
  expect_round_trip(m, remove, [](const Model& after) { EXPECT_EQ(after.graph.inputs[0].name, "mask"); });
  AddGraphInput for_initializer(kMain, info("w"));
  expect_round_trip(m, for_initializer);
}

TEST(GraphInputs, Refusals) {
  Model m = small_model();
  AddGraphInput dup(kMain, info("x"));
  expect_refused(m, dup, "graph 'main' already has an input named 'x'");
  AddGraphInput produced(kMain, info("r"));
  expect_refused(m, produced, "a value named 'r' already exists in graph 'main'");
  AddGraphInput far(kMain, info("q"), 5);
  expect_refused(m, far, "position 5 is out of range for the inputs of graph 'main' (2)");
  AddGraphInput unnamed(kMain, info(""));
  expect_refused(m, unnamed, "a graph input needs a name");
  RemoveGraphInput missing(kMain, "q");
  expect_refused(m, missing, "graph 'main' has no input named 'q'");
}

TEST(GraphOutputs, AddAndRemove) {
  Model m = small_model();
  AddGraphOutput add(kMain, info("a"), 0);
  expect_round_trip(m, add, [](const Model& after) { EXPECT_EQ(after.graph.outputs[0].name, "a"); });
  RemoveGraphOutput remove(kMain, "y");
  expect_round_trip(m, remove, [](const Model& after) { EXPECT_EQ(after.graph.find_output("y"), nullptr); });
  AddGraphOutput in_sub(then_path(m), info("r"));  // a subgraph may output an outer value directly
  expect_round_trip(m, in_sub);
  AddGraphOutput dup(kMain, info("z"));
  expect_refused(m, dup, "graph 'main' already has an output named 'z'");
  AddGraphOutput unknown(kMain, info("nope"));
  expect_refused(m, unknown, "value 'nope' does not exist in graph 'main'");
  RemoveGraphOutput missing(kMain, "nope");
  expect_refused(m, missing, "graph 'main' has no output named 'nope'");
}

TEST(SetValueInfo, ChangesInputTypeOrValueInfo) {
  Model m = small_model();
  SetValueInfo input(kMain, info("x", DataType::kFloat16));
  expect_round_trip(m, input, [](const Model& after) {
    EXPECT_EQ(after.graph.inputs[0].type.elem, DataType::kFloat16);
    EXPECT_EQ(after.graph.value_info.size(), 1u);
  });
  SetValueInfo existing(kMain, info("a", DataType::kDouble));
  expect_round_trip(m, existing, [](const Model& after) {
    ASSERT_EQ(after.graph.value_info.size(), 1u);
    EXPECT_EQ(after.graph.value_info[0].type.elem, DataType::kDouble);
  });
  SetValueInfo fresh(kMain, info("r"));
  expect_round_trip(m, fresh, [](const Model& after) {
    ASSERT_EQ(after.graph.value_info.size(), 2u);
    EXPECT_EQ(after.graph.value_info[1].name, "r");
  });
  EXPECT_EQ(fresh.description(), "Set type of 'r' to tensor(float)[batch,4]");
  m.graph.outputs.push_back(info("x"));  // a value that is both an input and an output: both change
  SetValueInfo retype(kMain, info("x", DataType::kInt8));
  expect_round_trip(m, retype, [](const Model& after) {
    EXPECT_EQ(after.graph.inputs[0].type.elem, DataType::kInt8);
    EXPECT_EQ(after.graph.outputs.back().type.elem, DataType::kInt8);
  });
  SetValueInfo unknown(kMain, info("nope"));
  expect_refused(m, unknown, "value 'nope' does not exist in graph 'main'");
}

TEST(RemoveValueInfo, DropsTheEntry) {
  Model m = small_model();
  RemoveValueInfo c(kMain, "a");
  expect_round_trip(m, c, [](const Model& after) { EXPECT_TRUE(after.graph.value_info.empty()); });
  RemoveValueInfo missing(kMain, "x");
  expect_refused(m, missing, "value 'x' has no value_info entry in graph 'main'");
}

}  // namespace
}  // namespace tessera::ir::test
