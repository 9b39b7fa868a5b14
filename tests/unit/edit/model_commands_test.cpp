#include <gtest/gtest.h>

#include "edit_test_util.h"

namespace tessera::ir::test {
namespace {

Function double_fn() {
  Function f;
  f.domain = "custom";
  f.name = "Double";
  f.body.name = "Double";
  f.body.inputs = {ValueInfo{"X", {}, {}, {}}};
  f.body.outputs = {ValueInfo{"Y", {}, {}, {}}};
  Node n;
  n.op_type = "Add";
  n.inputs = {"X", "X"};
  n.outputs = {"Y"};
  f.body.add_node(n);
  return f;
}

TEST(Functions, AddReplaceRemove) {
  Model m = small_model();
  AddFunction add(double_fn());
  expect_round_trip(m, add,
                    [](const Model& after) { EXPECT_NE(after.find_function("custom", "Double"), nullptr); });
  EXPECT_EQ(add.description(), "Add function 'custom.Double'");
  Function changed = double_fn();
  changed.doc_string = "twice X";
  changed.attributes = {"scale"};
  ReplaceFunction replace(changed);
  expect_round_trip(m, replace, [](const Model& after) {
    EXPECT_EQ(after.find_function("custom", "Double")->doc_string, "twice X");
  });
  RemoveFunction remove("custom", "Square");
  expect_round_trip(m, remove, [](const Model& after) {
    ASSERT_EQ(after.functions.size(), 1u);
    EXPECT_EQ(after.functions[0].name, "Double");
  });
}

TEST(Functions, OverloadsAreDistinctAndErrorsAreClear) {
  Model m = small_model();
  Function overload = double_fn();
  overload.name = "Square";
  overload.overload = "fast";
  AddFunction add(overload);
  expect_round_trip(m, add);
  AddFunction dup(overload);
  expect_refused(m, dup, "function 'custom.Square:fast' already exists in the model");
  RemoveFunction missing("custom", "Cube");
  expect_refused(m, missing, "function 'custom.Cube' does not exist in the model");
  Function unknown = double_fn();
  ReplaceFunction replace_missing(unknown);
  expect_refused(m, replace_missing, "function 'custom.Double' does not exist in the model");
}

TEST(SetOpsetImport, ChangesAddsAndRemoves) {
  Model m = small_model();
  SetOpsetImport change("ai.onnx", 21);  // "ai.onnx" names the default domain
  expect_round_trip(m, change, [](const Model& after) { EXPECT_EQ(after.opset_version(""), 21); });
  SetOpsetImport add("com.microsoft", 1);
  expect_round_trip(m, add, [](const Model& after) { EXPECT_EQ(after.opset_version("com.microsoft"), 1); });
  SetOpsetImport remove("custom", std::nullopt);
  expect_round_trip(m, remove, [](const Model& after) {
    EXPECT_EQ(after.opset_version("custom"), std::nullopt);
    EXPECT_EQ(after.opset_imports.back().domain, "com.microsoft");
  });
  EXPECT_EQ(remove.description(), "Remove opset import 'custom'");
  SetOpsetImport missing("nope", std::nullopt);
  expect_refused(m, missing, "the model does not import domain 'nope'");
  SetOpsetImport zero("", 0);
  expect_refused(m, zero, "opset version 0 is not valid");
}

TEST(SetModelMetadata, ChangesOnlyTheGivenFields) {
  Model m = small_model();
  ModelMetadata md;
  md.doc_string = "A small model";
  md.metadata_props = std::vector<StringPair>{{"author", "tessera"}};
  md.model_version = 3;
  md.graph_name = "renamed";
  SetModelMetadata c(md);
  expect_round_trip(m, c, [](const Model& after) {
    EXPECT_EQ(after.graph.name, "renamed");
    EXPECT_EQ(after.doc_string, "A small model");
    EXPECT_EQ(after.model_version, 3);
    EXPECT_EQ(after.producer_name, "tessera-test");  // not given, kept
    ASSERT_EQ(after.metadata_props.size(), 1u);
  });
}

}  // namespace
}  // namespace tessera::ir::test
