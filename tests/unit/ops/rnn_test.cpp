// Shape-inference tests of the src/ops/rnn operators.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tessera::testing {
namespace {

TEST(RnnTest, ForwardSequenceFirst) {
  auto r = infer({.op = "RNN",
                  .opset = 14,
                  .inputs = {T(kFloat, {"s", "b", 4}), T(kFloat, {1, 8, 4}), T(kFloat, {1, 8, 8})},
                  .attrs = {ir::Attribute::of_int("hidden_size", 8)},
                  .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"s", 1, "b", 8}));
  EXPECT_EQ(r.outputs[1], T(kFloat, {1, "b", 8}));
}

TEST(GruTest, BidirectionalHiddenFromWeights) {
  auto r = infer({.op = "GRU",
                  .opset = 7,
                  .inputs = {T(kFloat, {5, 2, 4}), T(kFloat, {2, 9, 4}), T(kFloat, {2, 9, 3})},
                  .attrs = {ir::Attribute::of_string("direction", "bidirectional")},
                  .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {5, 2, 2, 3}));
  EXPECT_EQ(r.outputs[1], T(kFloat, {2, 2, 3}));
}

TEST(GruTest, Opset1DefaultDirection) {
  // Version 1 spells its default "foward"; it must still be accepted as forward.
  auto r = infer({.op = "GRU",
                  .opset = 1,
                  .inputs = {T(kFloat, {5, 2, 4}), T(kFloat, {1, 9, 4}), T(kFloat, {1, 9, 3})},
                  .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[1], T(kFloat, {1, 2, 3}));
}

TEST(LstmTest, BatchFirstLayout) {
  auto r = infer({.op = "LSTM",
                  .opset = 22,
                  .inputs = {T(kFloat, {"b", 7, 4}), T(kFloat, {1, 12, 4}), T(kFloat, {1, 12, 3})},
                  .attrs = {ir::Attribute::of_int("layout", 1)},
                  .num_outputs = 3});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"b", 7, 1, 3}));
  EXPECT_EQ(r.outputs[1], T(kFloat, {"b", 1, 3}));
  EXPECT_EQ(r.outputs[2], T(kFloat, {"b", 1, 3}));
}

TEST(LstmTest, FailsOnGateMultiple) {
  auto r = infer({.op = "LSTM",
                  .opset = 14,
                  .inputs = {T(kFloat, {5, 2, 4}), T(kFloat, {1, 10, 4}), T(kFloat, {1, 10, 3})},
                  .num_outputs = 3});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("not a multiple of the 4 gates"), std::string::npos) << r.errors();
}

TEST(RnnTest, FailsOnHiddenSizeMismatch) {
  auto r = infer({.op = "RNN",
                  .opset = 14,
                  .inputs = {T(kFloat, {5, 2, 4}), T(kFloat, {1, 8, 4}), T(kFloat, {1, 8, 8})},
                  .attrs = {ir::Attribute::of_int("hidden_size", 6)},
                  .num_outputs = 2});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("hidden size"), std::string::npos) << r.errors();
}

TEST(RnnTest, FailsOnDirections) {
  auto r = infer({.op = "RNN",
                  .opset = 14,
                  .inputs = {T(kFloat, {5, 2, 4}), T(kFloat, {2, 8, 4}), T(kFloat, {2, 8, 8})},
                  .num_outputs = 2});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("num_directions"), std::string::npos) << r.errors();
}

TEST(RnnTest, FailsOnBadDirection) {
  auto r = infer({.op = "RNN",
                  .opset = 14,
                  .inputs = {T(kFloat, {5, 2, 4}), T(kFloat, {1, 8, 4}), T(kFloat, {1, 8, 8})},
                  .attrs = {ir::Attribute::of_string("direction", "sideways")},
                  .num_outputs = 2});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("'direction'"), std::string::npos) << r.errors();
}

}  // namespace
}  // namespace tessera::testing
