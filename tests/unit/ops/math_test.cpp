// Shape-inference tests of the src/ops/math operators: elementwise math, activations, comparisons,
// logic, bit operations, the variadic Max/Min/Sum/Mean and Where, in their old and new versions.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"
#include "ops/registry.h"

namespace tessera::testing {
namespace {

using ir::Attribute;

// --- one-input ops ---

TEST(MathTest, UnaryKeepsSymbolicShape) {
  auto r = infer({.op = "Sqrt", .opset = 13, .inputs = {T(kFloat, {"batch", 3, "seq"})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"batch", 3, "seq"}));
}

TEST(MathTest, UnaryUnknownRankStaysUnknown) {
  auto r = infer({.op = "Exp", .opset = 6, .inputs = {T(kDouble)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kDouble));
}

TEST(MathTest, UnaryOldVersionWithConsumedInputs) {
  auto r = infer({.op = "Abs",
                  .opset = 1,
                  .inputs = {T(kFloat, {2, 3})},
                  .attrs = {Attribute::of_ints("consumed_inputs", {0})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2, 3}));
}

TEST(MathTest, TypesWidenWithVersion) {
  // Relu takes signed integers from opset 14, not before; trig functions take bfloat16 from 22.
  EXPECT_TRUE(infer({.op = "Relu", .opset = 14, .inputs = {T(kInt32, {4})}}).ok());
  EXPECT_FALSE(infer({.op = "Relu", .opset = 13, .inputs = {T(kInt32, {4})}}).ok());
  EXPECT_TRUE(infer({.op = "Cos", .opset = 22, .inputs = {T(ir::DataType::kBFloat16, {4})}}).ok());
  EXPECT_FALSE(infer({.op = "Cos", .opset = 21, .inputs = {T(ir::DataType::kBFloat16, {4})}}).ok());
}

TEST(MathTest, ActivationDefaultsComeFromTheSchema) {
  const auto& reg = ops::OpRegistry::global();
  const ops::OpSchema* selu6 = reg.find("", "Selu", 21);
  ASSERT_TRUE(selu6);
  EXPECT_EQ(selu6->since_version(), 6);
  ASSERT_TRUE(selu6->find_attr("alpha"));
  EXPECT_FLOAT_EQ(selu6->find_attr("alpha")->default_value->f, 1.67326319217681884765625f);
  const ops::OpSchema* selu1 = reg.find("", "Selu", 5);
  ASSERT_TRUE(selu1);
  EXPECT_FLOAT_EQ(selu1->find_attr("gamma")->default_value->f, 1.0507f);
  const ops::OpSchema* clip6 = reg.find("", "Clip", 10);
  ASSERT_TRUE(clip6);
  EXPECT_EQ(clip6->since_version(), 6);
  EXPECT_GT(clip6->find_attr("max")->default_value->f, 3e38f);
}

TEST(MathTest, NewerActivations) {
  auto gelu = infer({.op = "Gelu",
                     .opset = 20,
                     .inputs = {T(kFloat16, {"n", 8})},
                     .attrs = {Attribute::of_string("approximate", "tanh")}});
  ASSERT_TRUE(gelu.ok()) << gelu.errors();
  EXPECT_EQ(gelu.outputs[0], T(kFloat16, {"n", 8}));
  EXPECT_TRUE(infer({.op = "Mish", .opset = 18, .inputs = {T(kFloat, {2})}}).ok());
  EXPECT_TRUE(infer({.op = "Swish", .opset = 24, .inputs = {T(kFloat, {2})}}).ok());
  // Mish came in opset 18, Swish in 24.
  EXPECT_FALSE(infer({.op = "Mish", .opset = 17, .inputs = {T(kFloat, {2})}}).ok());
  EXPECT_FALSE(infer({.op = "Swish", .opset = 23, .inputs = {T(kFloat, {2})}}).ok());
}

TEST(MathTest, GeluRejectsUnknownApproximation) {
  auto r = infer({.op = "Gelu",
                  .opset = 20,
                  .inputs = {T(kFloat, {2})},
                  .attrs = {Attribute::of_string("approximate", "erf")}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("approximate"), std::string::npos) << r.errors();
}

TEST(MathTest, IsInfAndIsNaNGiveBool) {
  auto r = infer({.op = "IsInf", .opset = 20, .inputs = {T(kFloat16, {"n", 2})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kBool, {"n", 2}));
  r = infer({.op = "IsNaN", .opset = 9, .inputs = {T(kDouble)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kBool));
  // IsInf-10 took float and double only.
  EXPECT_FALSE(infer({.op = "IsInf", .opset = 10, .inputs = {T(kFloat16, {2})}}).ok());
}

// --- Clip and PRelu ---

TEST(MathTest, ClipWithScalarBounds) {
  auto r = infer({.op = "Clip", .opset = 13, .inputs = {T(kInt32, {"n", 4}), T(kInt32, {}), T(kInt32, {})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kInt32, {"n", 4}));
  r = infer({.op = "Clip", .opset = 11, .inputs = {T(kFloat, {3}), std::nullopt, T(kFloat, {})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {3}));
}

TEST(MathTest, ClipRejectsNonScalarBound) {
  auto r = infer({.op = "Clip", .opset = 13, .inputs = {T(kFloat, {3}), T(kFloat, {3})}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("'min' must be a scalar"), std::string::npos) << r.errors();
}

TEST(MathTest, ClipAttributesBeforeOpset11) {
  auto r = infer({.op = "Clip",
                  .opset = 6,
                  .inputs = {T(kFloat, {2, 2})},
                  .attrs = {Attribute::of_float("min", 0.0f), Attribute::of_float("max", 6.0f)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2, 2}));
}

TEST(MathTest, PReluSlopeBroadcastsToX) {
  auto r = infer({.op = "PRelu", .opset = 16, .inputs = {T(kFloat, {"n", 3, 8, 8}), T(kFloat, {3, 1, 1})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"n", 3, 8, 8}));
  r = infer({.op = "PRelu", .opset = 9, .inputs = {T(kFloat, {2, 3}), T(kFloat, {4})}});
  EXPECT_FALSE(r.ok());
  // The slope may not grow X: unidirectional broadcasting only.
  r = infer({.op = "PRelu", .opset = 16, .inputs = {T(kFloat, {3}), T(kFloat, {2, 3})}});
  EXPECT_FALSE(r.ok());
}

// --- two-input arithmetic ---

TEST(MathTest, AddBroadcastsNumpyStyle) {
  auto r = infer({.op = "Add", .opset = 14, .inputs = {T(kFloat, {"b", 1, 4}), T(kFloat, {3, 1})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"b", 3, 4}));
}

TEST(MathTest, AddRejectsMismatchedDimensions) {
  auto r = infer({.op = "Mul", .opset = 13, .inputs = {T(kFloat, {2, 3}), T(kFloat, {4})}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("cannot be broadcast"), std::string::npos) << r.errors();
}

TEST(MathTest, AddInt8NeedsOpset14) {
  EXPECT_TRUE(
      infer({.op = "Sub", .opset = 14, .inputs = {T(ir::DataType::kInt8, {2}), T(ir::DataType::kInt8, {2})}})
          .ok());
  EXPECT_FALSE(
      infer({.op = "Sub", .opset = 13, .inputs = {T(ir::DataType::kInt8, {2}), T(ir::DataType::kInt8, {2})}})
          .ok());
}

TEST(MathTest, LegacyAddWithoutBroadcastNeedsSameShape) {
  auto r = infer({.op = "Add", .opset = 6, .inputs = {T(kFloat, {2, "n"}), T(kFloat, {2, 5})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2, 5}));
  r = infer({.op = "Add", .opset = 6, .inputs = {T(kFloat, {2, 3}), T(kFloat, {3})}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("broadcast"), std::string::npos) << r.errors();
}

TEST(MathTest, LegacyAddSuffixBroadcast) {
  auto r = infer({.op = "Add",
                  .opset = 1,
                  .inputs = {T(kFloat, {2, 3, 4, 5}), T(kFloat, {4, 5})},
                  .attrs = {Attribute::of_int("broadcast", 1)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2, 3, 4, 5}));
}

TEST(MathTest, LegacyAddBroadcastFromAxis) {
  auto r = infer({.op = "Div",
                  .opset = 6,
                  .inputs = {T(kFloat, {2, 3, 4, 5}), T(kFloat, {3, 4})},
                  .attrs = {Attribute::of_int("broadcast", 1), Attribute::of_int("axis", 1)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2, 3, 4, 5}));
  // Scalars and single-element tensors always broadcast.
  r = infer({.op = "Mul",
             .opset = 6,
             .inputs = {T(kFloat, {2, 3}), T(kFloat, {1, 1})},
             .attrs = {Attribute::of_int("broadcast", 1)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2, 3}));
}

TEST(MathTest, LegacyBroadcastMismatchFails) {
  auto r = infer({.op = "Sub",
                  .opset = 6,
                  .inputs = {T(kFloat, {2, 3, 4, 5}), T(kFloat, {3, 4})},
                  .attrs = {Attribute::of_int("broadcast", 1)}});  // suffix [4,5] vs [3,4]
  EXPECT_FALSE(r.ok());
  r = infer({.op = "Sub",
             .opset = 6,
             .inputs = {T(kFloat, {2, 3}), T(kFloat, {3, 2, 3})},
             .attrs = {Attribute::of_int("broadcast", 1)}});
  EXPECT_FALSE(r.ok());
  r = infer({.op = "Add",
             .opset = 6,
             .inputs = {T(kFloat, {2, 3}), T(kFloat, {3})},
             .attrs = {Attribute::of_int("broadcast", 1), Attribute::of_int("axis", 5)}});
  EXPECT_FALSE(r.ok());
}

TEST(MathTest, PowExponentMayHaveAnotherType) {
  auto r = infer({.op = "Pow", .opset = 15, .inputs = {T(kFloat, {"n", 3}), T(kInt64, {})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"n", 3}));
  // Before opset 12 base and exponent share one type.
  EXPECT_FALSE(infer({.op = "Pow", .opset = 7, .inputs = {T(kFloat, {3}), T(kDouble, {3})}}).ok());
}

TEST(MathTest, ModFmodRules) {
  auto ints = infer({.op = "Mod", .opset = 13, .inputs = {T(kInt32, {4}), T(kInt32, {1})}});
  ASSERT_TRUE(ints.ok()) << ints.errors();
  EXPECT_EQ(ints.outputs[0], T(kInt32, {4}));
  // Floats need fmod=1 until opset 28 defined fmod=0 for them.
  EXPECT_FALSE(infer({.op = "Mod", .opset = 13, .inputs = {T(kFloat, {4}), T(kFloat, {4})}}).ok());
  EXPECT_TRUE(infer({.op = "Mod",
                     .opset = 13,
                     .inputs = {T(kFloat, {4}), T(kFloat, {4})},
                     .attrs = {Attribute::of_int("fmod", 1)}})
                  .ok());
  EXPECT_TRUE(infer({.op = "Mod", .opset = 28, .inputs = {T(kFloat, {4}), T(kFloat, {4})}}).ok());
  EXPECT_FALSE(infer({.op = "Mod",
                      .opset = 13,
                      .inputs = {T(kInt32, {4}), T(kInt32, {4})},
                      .attrs = {Attribute::of_int("fmod", 2)}})
                   .ok());
}

// --- comparison and logic ---

TEST(MathTest, ComparisonGivesBool) {
  auto r = infer({.op = "Less", .opset = 13, .inputs = {T(kInt64, {"n", 1}), T(kInt64, {5})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kBool, {"n", 5}));
  r = infer({.op = "GreaterOrEqual", .opset = 16, .inputs = {T(kFloat, {2, 3}), T(kFloat, {3, 3})}});
  EXPECT_FALSE(r.ok());
}

TEST(MathTest, EqualOnStringsFromOpset19) {
  auto r = infer({.op = "Equal", .opset = 19, .inputs = {T(kString, {3}), T(kString, {3})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kBool, {3}));
  EXPECT_FALSE(infer({.op = "Equal", .opset = 13, .inputs = {T(kString, {3}), T(kString, {3})}}).ok());
}

TEST(MathTest, LegacyComparisonBroadcast) {
  auto r = infer({.op = "Greater",
                  .opset = 1,
                  .inputs = {T(kFloat, {2, 3}), T(kFloat, {3})},
                  .attrs = {Attribute::of_int("broadcast", 1)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kBool, {2, 3}));
}

TEST(MathTest, LogicalOps) {
  auto r = infer({.op = "Xor", .opset = 7, .inputs = {T(kBool, {3, 4, 5}), T(kBool, {4, 5})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kBool, {3, 4, 5}));
  r = infer({.op = "Not", .opset = 1, .inputs = {T(kBool, {"n"})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kBool, {"n"}));
  EXPECT_FALSE(infer({.op = "And", .opset = 7, .inputs = {T(kInt32, {3}), T(kInt32, {3})}}).ok());
}

TEST(MathTest, BitwiseOps) {
  auto r = infer({.op = "BitwiseAnd", .opset = 18, .inputs = {T(kUint8, {2, 3, 4}), T(kUint8, {4})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kUint8, {2, 3, 4}));
  r = infer({.op = "BitwiseNot", .opset = 18, .inputs = {T(kInt32, {"n"})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kInt32, {"n"}));
}

TEST(MathTest, BitShiftDirection) {
  auto r = infer({.op = "BitShift",
                  .opset = 11,
                  .inputs = {T(kUint8, {3}), T(kUint8, {3})},
                  .attrs = {Attribute::of_string("direction", "LEFT")}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kUint8, {3}));
  r = infer({.op = "BitShift",
             .opset = 11,
             .inputs = {T(kUint8, {3}), T(kUint8, {3})},
             .attrs = {Attribute::of_string("direction", "UP")}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("direction"), std::string::npos) << r.errors();
  // Signed integers are shifted from opset 28 only.
  auto signed_shift = [](int opset) {
    return infer({.op = "BitShift",
                  .opset = opset,
                  .inputs = {T(kInt32, {3}), T(kInt32, {3})},
                  .attrs = {Attribute::of_string("direction", "RIGHT")}});
  };
  EXPECT_FALSE(signed_shift(18).ok());
  EXPECT_TRUE(signed_shift(28).ok());
}

// --- variadic and Where ---

TEST(MathTest, VariadicBroadcastsFromOpset8) {
  auto r = infer({.op = "Max", .opset = 13, .inputs = {T(kFloat, {3, 1}), T(kFloat, {"n"}), T(kFloat, {})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {3, "n"}));
  r = infer({.op = "Sum", .opset = 8, .inputs = {T(kFloat, {2})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2}));
}

TEST(MathTest, VariadicBeforeOpset8NeedsSameShapes) {
  auto r = infer({.op = "Mean", .opset = 6, .inputs = {T(kFloat, {2, "n"}), T(kFloat, {2, 3})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2, 3}));
  r = infer({.op = "Min", .opset = 6, .inputs = {T(kFloat, {2, 3}), T(kFloat, {3})}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("same shape"), std::string::npos) << r.errors();
  // An unknown shape takes the one the other inputs give.
  r = infer({.op = "Sum", .opset = 1, .inputs = {T(kFloat), T(kFloat, {4})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {4}));
}

TEST(MathTest, MaxTakesIntegersFromOpset12) {
  EXPECT_TRUE(infer({.op = "Max", .opset = 12, .inputs = {T(kInt64, {2}), T(kInt64, {2})}}).ok());
  EXPECT_FALSE(infer({.op = "Max", .opset = 11, .inputs = {T(kInt64, {2}), T(kInt64, {2})}}).ok());
  EXPECT_FALSE(infer({.op = "Sum", .opset = 13, .inputs = {T(kInt64, {2}), T(kInt64, {2})}}).ok());
}

TEST(MathTest, WhereBroadcastsThreeInputs) {
  auto r = infer(
      {.op = "Where", .opset = 16, .inputs = {T(kBool, {"n", 1}), T(kString, {1, 4}), T(kString, {4})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kString, {"n", 4}));
  r = infer({.op = "Where", .opset = 9, .inputs = {T(kBool, {2}), T(kFloat, {3}), T(kFloat, {1})}});
  EXPECT_FALSE(r.ok());
}

TEST(MathTest, WhereTypeFromY) {
  auto r = infer({.op = "Where", .opset = 9, .inputs = {T(kBool, {2}), ir::Type{}, T(kInt64, {2})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0].elem, kInt64);
}

}  // namespace
}  // namespace tessera::testing
