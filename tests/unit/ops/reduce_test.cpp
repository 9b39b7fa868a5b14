// Shape-inference tests of the src/ops/reduce operators (Reduce*, ArgMax/ArgMin, TopK).
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tessera::testing {
namespace {

TEST(ReduceTest, AttributeAxes) {
  auto r = infer({.op = "ReduceMean",
                  .opset = 13,
                  .inputs = {T(kFloat, {"n", 3, 4})},
                  .attrs = {ir::Attribute::of_ints("axes", {-1})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"n", 3, 1}));
}

TEST(ReduceTest, NoKeepdims) {
  auto r = infer({.op = "ReduceSumSquare",
                  .opset = 11,
                  .inputs = {T(kFloat, {2, 3, 4})},
                  .attrs = {ir::Attribute::of_ints("axes", {0, 2}), ir::Attribute::of_int("keepdims", 0)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {3}));
}

TEST(ReduceTest, NoAxesReducesAll) {
  auto r = infer({.op = "ReduceL2", .opset = 18, .inputs = {T(kFloat, {2, 3})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {1, 1}));
}

TEST(ReduceTest, InputAxesConstant) {
  auto r = infer({.op = "ReduceSum",
                  .opset = 13,
                  .inputs = {T(kFloat, {2, 3, 4})},
                  .attrs = {ir::Attribute::of_int("keepdims", 0)},
                  .constants = {{1, ints_tensor({1})}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2, 4}));
}

TEST(ReduceTest, InputAxesUnknownKeepsRank) {
  auto r = infer({.op = "ReduceMax", .opset = 18, .inputs = {T(kFloat, {2, 3}), T(kInt64, {1})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  ASSERT_TRUE(r.outputs[0].shape);
  EXPECT_EQ(r.outputs[0].shape->size(), 2u);
  EXPECT_FALSE((*r.outputs[0].shape)[0].is_static());
}

TEST(ReduceTest, InputAxesUnknownNoKeepdims) {
  auto r = infer({.op = "ReduceMax",
                  .opset = 18,
                  .inputs = {T(kFloat, {2, 3}), T(kInt64, {1})},
                  .attrs = {ir::Attribute::of_int("keepdims", 0)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat));
}

TEST(ReduceTest, NoopWithEmptyAxes) {
  auto r = infer({.op = "ReduceSum",
                  .opset = 13,
                  .inputs = {T(kFloat, {2, "k"})},
                  .attrs = {ir::Attribute::of_int("noop_with_empty_axes", 1)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2, "k"}));
}

TEST(ReduceTest, BoolAllowedFromOpset20) {
  EXPECT_TRUE(infer({.op = "ReduceMin", .opset = 20, .inputs = {T(kBool, {2})}}).ok());
  EXPECT_FALSE(infer({.op = "ReduceMin", .opset = 18, .inputs = {T(kBool, {2})}}).ok());
}

TEST(ReduceTest, FailsOnAxisOutOfRange) {
  auto r = infer({.op = "ReduceProd",
                  .opset = 13,
                  .inputs = {T(kFloat, {2, 3})},
                  .attrs = {ir::Attribute::of_ints("axes", {2})}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("'axes' is 2"), std::string::npos) << r.errors();
}

TEST(ReduceTest, FailsOnDuplicateAxes) {
  auto r = infer({.op = "ReduceLogSumExp",
                  .opset = 18,
                  .inputs = {T(kFloat, {2, 3})},
                  .constants = {{1, ints_tensor({1, -1})}}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("listed twice"), std::string::npos) << r.errors();
}

TEST(ArgMaxTest, KeepdimsAndNot) {
  auto r = infer({.op = "ArgMax",
                  .opset = 13,
                  .inputs = {T(kFloat, {2, 3, 4})},
                  .attrs = {ir::Attribute::of_int("axis", 1)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kInt64, {2, 1, 4}));
  r = infer({.op = "ArgMin",
             .opset = 12,
             .inputs = {T(kFloat, {2, 3, 4})},
             .attrs = {ir::Attribute::of_int("axis", -1), ir::Attribute::of_int("keepdims", 0)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kInt64, {2, 3}));
}

TEST(ArgMaxTest, FailsOnAxisOutOfRange) {
  auto r = infer(
      {.op = "ArgMax", .opset = 13, .inputs = {T(kFloat, {2})}, .attrs = {ir::Attribute::of_int("axis", 1)}});
  EXPECT_FALSE(r.ok());
}

TEST(TopKTest, ConstantK) {
  auto r = infer({.op = "TopK",
                  .opset = 11,
                  .inputs = {T(kFloat, {"b", 10})},
                  .constants = {{1, ints_tensor({3})}},
                  .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"b", 3}));
  EXPECT_EQ(r.outputs[1], T(kInt64, {"b", 3}));
}

TEST(TopKTest, AttributeKOpset1) {
  auto r = infer({.op = "TopK",
                  .opset = 1,
                  .inputs = {T(kFloat, {5, 4})},
                  .attrs = {ir::Attribute::of_int("k", 2), ir::Attribute::of_int("axis", 0)},
                  .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2, 4}));
}

TEST(TopKTest, UnknownK) {
  auto r =
      infer({.op = "TopK", .opset = 24, .inputs = {T(kFloat, {5, 4}), T(kInt64, {1})}, .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  ASSERT_TRUE(r.outputs[0].shape);
  EXPECT_EQ((*r.outputs[0].shape)[0], ir::Dim::of(5));
  EXPECT_FALSE((*r.outputs[0].shape)[1].is_static());
}

TEST(TopKTest, FailsWhenKExceedsAxis) {
  auto r = infer({.op = "TopK",
                  .opset = 11,
                  .inputs = {T(kFloat, {2, 3})},
                  .constants = {{1, ints_tensor({4})}},
                  .num_outputs = 2});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("k = 4 exceeds"), std::string::npos) << r.errors();
}

TEST(TopKTest, FailsOnKShape) {
  auto r =
      infer({.op = "TopK", .opset = 11, .inputs = {T(kFloat, {2, 3}), T(kInt64, {2})}, .num_outputs = 2});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("input 'K' must be"), std::string::npos) << r.errors();
}

}  // namespace
}  // namespace tessera::testing
