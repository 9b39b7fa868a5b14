// Shape-inference tests of the src/ops/loss operators.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tessera::testing {
namespace {

TEST(NllLossTest, MeanIsScalar) {
  auto r = infer({.op = "NegativeLogLikelihoodLoss",
                  .opset = 13,
                  .inputs = {T(kFloat, {"n", 5, 2}), T(kInt64, {"n", 2}), T(kFloat, {5})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {}));
}

TEST(NllLossTest, NoneKeepsTargetShape) {
  auto r = infer({.op = "NegativeLogLikelihoodLoss",
                  .opset = 22,
                  .inputs = {T(kFloat, {3, 5, 2}), T(kInt32, {3, 2})},
                  .attrs = {ir::Attribute::of_string("reduction", "none")}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {3, 2}));
}

TEST(NllLossTest, FailsOnTargetRank) {
  auto r = infer(
      {.op = "NegativeLogLikelihoodLoss", .opset = 13, .inputs = {T(kFloat, {3, 5}), T(kInt64, {3, 5})}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("must have rank 1"), std::string::npos) << r.errors();
}

TEST(NllLossTest, FailsOnWeightSize) {
  auto r = infer({.op = "NegativeLogLikelihoodLoss",
                  .opset = 13,
                  .inputs = {T(kFloat, {3, 5}), T(kInt64, {3}), T(kFloat, {4})}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("class count"), std::string::npos) << r.errors();
}

TEST(NllLossTest, FailsOnReduction) {
  auto r = infer({.op = "NegativeLogLikelihoodLoss",
                  .opset = 13,
                  .inputs = {T(kFloat, {3, 5}), T(kInt64, {3})},
                  .attrs = {ir::Attribute::of_string("reduction", "max")}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("'reduction'"), std::string::npos) << r.errors();
}

TEST(SoftmaxCrossEntropyTest, LogProbHasScoresShape) {
  auto r = infer({.op = "SoftmaxCrossEntropyLoss",
                  .opset = 13,
                  .inputs = {T(kFloat, {3, 5, 7}), T(kInt64, {3, 7})},
                  .attrs = {ir::Attribute::of_string("reduction", "none")},
                  .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {3, 7}));
  EXPECT_EQ(r.outputs[1], T(kFloat, {3, 5, 7}));
}

TEST(SoftmaxCrossEntropyTest, FailsOnBatchMismatch) {
  auto r =
      infer({.op = "SoftmaxCrossEntropyLoss", .opset = 12, .inputs = {T(kFloat, {3, 5}), T(kInt64, {4})}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("batch size"), std::string::npos) << r.errors();
}

}  // namespace
}  // namespace tessera::testing
