// Local functions as a library: list, inline (bit-identical outputs), delete, undo.
#include "transforms/functions.h"

#include <gtest/gtest.h>

#include "check/checker.h"
#include "ir/commands/history.h"
#include "transforms/transform_test_util.h"

namespace tessera::transforms {
namespace {

TEST(FunctionTransforms, ListsSignatureAndCalls) {
  auto list = list_functions(test::control_flow_model());
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].key, "custom:Scale");
  EXPECT_EQ(list[0].nodes, 2u);
  EXPECT_EQ(list[0].calls, 1u);
  EXPECT_EQ(list[0].inputs, std::vector<std::string>{"X"});
}

TEST(FunctionTransforms, InlineKeepsOutputsBitIdenticalAndUndoes) {
  ir::Model m = test::control_flow_model();
  ir::Model original = m;
  ir::History h(m);
  Report r = inline_function(h, "custom:Scale");
  EXPECT_EQ(r.get("calls inlined"), 1);
  EXPECT_TRUE(m.functions.empty());
  EXPECT_EQ(test::count_op(m, "Scale"), 0);
  EXPECT_FALSE(check::check_model(m).diagnostics.has_errors());
  EXPECT_TRUE(test::onnx_checker_accepts(m));
  auto feeds = test::feeds_for(original);
  EXPECT_EQ(test::run_model(original, feeds), test::run_model(m, feeds));
  h.undo();
  EXPECT_TRUE(m == original);
}

TEST(FunctionTransforms, DeleteLeavesCustomOperatorCalls) {
  ir::Model m = test::control_flow_model();
  ir::Model original = m;
  ir::History h(m);
  Report r = delete_function(h, "custom:Scale");
  EXPECT_EQ(r.get("calls left as custom operators"), 1);
  EXPECT_TRUE(m.functions.empty());
  EXPECT_EQ(test::count_op(m, "Scale"), 1);
  h.undo();
  EXPECT_TRUE(m == original);
}

TEST(FunctionTransforms, UnknownFunctionIsAnError) {
  ir::Model m = test::control_flow_model();
  ir::History h(m);
  try {
    inline_function(h, "custom:Nope");
    FAIL();
  } catch (const TransformError& e) {
    EXPECT_EQ(std::string(e.what()), "the model has no local function 'custom:Nope' (it has: custom:Scale)");
  }
  EXPECT_EQ(h.undo_count(), 0u);
}

}  // namespace
}  // namespace tessera::transforms
