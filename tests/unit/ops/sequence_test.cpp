// Shape-inference tests of the src/ops/sequence operators (sequences and optionals).
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tessera::testing {
namespace {

using ir::Type;

Type S(Type elem) {
  return Type::sequence(std::move(elem));
}
Type O(Type elem) {
  return Type::optional(std::move(elem));
}
ir::Tensor scalar_int(int64_t v) {
  return ir::make_tensor<int64_t>("", kInt64, {}, {v});
}

TEST(SequenceTest, EmptyDefaultsToFloat) {
  auto r = infer({.op = "SequenceEmpty", .opset = 11});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], S(T(kFloat)));
  r = infer({.op = "SequenceEmpty", .opset = 11, .attrs = {ir::Attribute::of_int("dtype", 7)}});
  EXPECT_EQ(r.outputs[0], S(T(kInt64)));
}

TEST(SequenceTest, EmptyFailsOnBadDtype) {
  EXPECT_FALSE(
      infer({.op = "SequenceEmpty", .opset = 11, .attrs = {ir::Attribute::of_int("dtype", 99)}}).ok());
}

TEST(SequenceTest, ConstructMergesShapes) {
  auto r = infer({.op = "SequenceConstruct", .opset = 11, .inputs = {T(kFloat, {2, 3}), T(kFloat, {2, 4})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  ASSERT_TRUE(r.outputs[0].inner);
  EXPECT_EQ(r.outputs[0].inner->shape->at(0), ir::Dim::of(2));
  EXPECT_FALSE(r.outputs[0].inner->shape->at(1).is_static());
}

TEST(SequenceTest, ConstructFailsOnMixedTypes) {
  auto r = infer({.op = "SequenceConstruct", .opset = 11, .inputs = {T(kFloat, {2}), T(kInt64, {2})}});
  EXPECT_FALSE(r.ok());
}

TEST(SequenceTest, InsertAtAndLength) {
  auto r = infer({.op = "SequenceInsert", .opset = 11, .inputs = {S(T(kFloat, {2})), T(kFloat, {2})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], S(T(kFloat, {2})));
  r = infer({.op = "SequenceAt",
             .opset = 11,
             .inputs = {S(T(kFloat, {2, "n"})), std::nullopt},
             .constants = {{1, scalar_int(0)}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2, "n"}));
  r = infer({.op = "SequenceLength", .opset = 11, .inputs = {S(T(kFloat))}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kInt64, {}));
}

TEST(SequenceTest, InsertFailsOnElementType) {
  auto r = infer({.op = "SequenceInsert", .opset = 11, .inputs = {S(T(kFloat, {2})), T(kInt32, {2})}});
  EXPECT_FALSE(r.ok());
}

TEST(SequenceTest, EraseFailsOnNonScalarPosition) {
  auto r = infer({.op = "SequenceErase", .opset = 11, .inputs = {S(T(kFloat, {2})), T(kInt64, {2})}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("must be a scalar"), std::string::npos) << r.errors();
}

TEST(SequenceTest, ConcatFromSequence) {
  auto r = infer({.op = "ConcatFromSequence",
                  .opset = 11,
                  .inputs = {S(T(kFloat, {2, 3}))},
                  .attrs = {ir::Attribute::of_int("axis", 1)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0].shape->size(), 2u);
  EXPECT_EQ(r.outputs[0].shape->at(0), ir::Dim::of(2));
  r = infer({.op = "ConcatFromSequence",
             .opset = 11,
             .inputs = {S(T(kFloat, {2, 3}))},
             .attrs = {ir::Attribute::of_int("axis", -1), ir::Attribute::of_int("new_axis", 1)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0].shape->size(), 3u);
  EXPECT_EQ(r.outputs[0].shape->at(1), ir::Dim::of(3));
}

TEST(SequenceTest, ConcatFromSequenceFailsOnAxis) {
  auto r = infer({.op = "ConcatFromSequence",
                  .opset = 11,
                  .inputs = {S(T(kFloat, {2, 3}))},
                  .attrs = {ir::Attribute::of_int("axis", 2)}});
  EXPECT_FALSE(r.ok());
}

TEST(SequenceTest, SplitToSequence) {
  auto r = infer({.op = "SplitToSequence", .opset = 11, .inputs = {T(kFloat, {6, 4})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], S(T(kFloat, {1, 4})));
  r = infer({.op = "SplitToSequence",
             .opset = 24,
             .inputs = {T(kFloat, {6, 4})},
             .attrs = {ir::Attribute::of_int("keepdims", 0)}});
  EXPECT_EQ(r.outputs[0], S(T(kFloat, {4})));
  r = infer({.op = "SplitToSequence",
             .opset = 11,
             .inputs = {T(kFloat, {6, 4})},
             .constants = {{1, ints_tensor({3, 3})}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], S(T(kFloat, {3, 4})));
  r = infer({.op = "SplitToSequence",
             .opset = 11,
             .inputs = {T(kFloat, {6, 4})},
             .attrs = {ir::Attribute::of_int("axis", 1)},
             .constants = {{1, scalar_int(2)}}});
  EXPECT_EQ(r.outputs[0], S(T(kFloat, {6, 2})));
}

TEST(SequenceTest, SplitToSequenceFailsOnSum) {
  auto r = infer({.op = "SplitToSequence",
                  .opset = 11,
                  .inputs = {T(kFloat, {6, 4})},
                  .constants = {{1, ints_tensor({3, 2})}}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("add up to 5"), std::string::npos) << r.errors();
}

TEST(SequenceTest, SequenceMapCollectsBodyOutputs) {
  ir::Graph body;
  body.name = "body";
  body.inputs = {{"x", {}, {}, {}}};
  ir::Node n;
  n.op_type = "Identity";
  n.inputs = {"x"};
  n.outputs = {"y"};
  body.add_node(n);
  body.outputs = {{"y", {}, {}, {}}};
  auto r = infer({.op = "SequenceMap",
                  .opset = 17,
                  .inputs = {S(T(kFloat, {3}))},
                  .attrs = {ir::Attribute::of_graph("body", body)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], S(T(kFloat, {3})));
  r = infer({.op = "SequenceMap",
             .opset = 17,
             .inputs = {S(T(kFloat, {3})), T(kFloat, {2})},
             .attrs = {ir::Attribute::of_graph("body", body)}});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.errors().find("the body takes 1 inputs"), std::string::npos) << r.errors();
}

TEST(OptionalTest, WrapAndUnwrap) {
  auto r = infer({.op = "Optional", .opset = 15, .inputs = {T(kFloat, {2})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], O(T(kFloat, {2})));
  ir::Attribute type_attr;
  type_attr.name = "type";
  type_attr.type = ir::AttrType::kTypeProto;
  type_attr.types = {S(T(kInt64))};
  r = infer({.op = "Optional", .opset = 15, .attrs = {type_attr}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], O(S(T(kInt64))));
  r = infer({.op = "OptionalGetElement", .opset = 15, .inputs = {O(T(kFloat, {2}))}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2}));
  r = infer({.op = "OptionalGetElement", .opset = 18, .inputs = {S(T(kFloat, {2}))}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], S(T(kFloat, {2})));
  r = infer({.op = "OptionalHasElement", .opset = 18, .inputs = {std::nullopt}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kBool, {}));
}

TEST(OptionalTest, Failures) {
  EXPECT_FALSE(infer({.op = "Optional", .opset = 15}).ok());
  EXPECT_FALSE(infer({.op = "OptionalGetElement", .opset = 15, .inputs = {T(kFloat, {2})}}).ok());
  EXPECT_FALSE(infer({.op = "OptionalHasElement", .opset = 15, .inputs = {T(kFloat, {2})}}).ok());
}

}  // namespace
}  // namespace tessera::testing

namespace tessera::testing {
namespace {

TEST(SequenceTest, PositionMayBeSingleElement1D) {
  auto r = infer({.op = "SequenceInsert",
                  .opset = 11,
                  .inputs = {ir::Type::sequence(T(kFloat, {2})), T(kFloat, {2}), T(kInt64, {1})}});
  EXPECT_TRUE(r.ok()) << r.errors();
}

}  // namespace
}  // namespace tessera::testing
