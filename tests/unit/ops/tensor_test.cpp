// Shape-inference tests of the src/ops/tensor operators: reshaping, slicing, gathering, scattering,
// padding, casting and creation, in their old and new versions, and the shape values that keep
// symbolic dimensions alive through Shape -> Gather -> Concat -> Reshape chains.
#include <gtest/gtest.h>

#include "check/checker.h"
#include "ops/op_test_util.h"
#include "ops/registry.h"

namespace tessera::testing {
namespace {

using ir::Attribute;
using ir::DataType;

ir::Tensor scalar_i64(int64_t v) {
  return ir::make_tensor<int64_t>("", kInt64, {}, std::vector<int64_t>{v});
}

bool has_error(const OpResult& r, std::string_view text) {
  return r.errors().find(text) != std::string::npos;
}

// A small graph of several nodes, for shape values flowing from one node to the next.
struct Chain {
  ir::Model m;
  explicit Chain(int opset) {
    m.ir_version = 10;
    m.opset_imports.push_back({"", opset});
  }
  Chain& input(std::string name, ir::Type t) {
    m.graph.inputs.push_back({std::move(name), std::move(t), {}, {}});
    return *this;
  }
  Chain& constant(std::string name, ir::Tensor t) {
    t.name = std::move(name);
    m.graph.initializers.push_back(std::move(t));
    return *this;
  }
  Chain& node(std::string op, std::vector<std::string> in, std::string out,
              std::vector<Attribute> attrs = {}) {
    ir::Node n;
    n.name = out;
    n.op_type = std::move(op);
    n.inputs = std::move(in);
    n.outputs = {std::move(out)};
    n.attributes = std::move(attrs);
    m.graph.add_node(std::move(n));
    return *this;
  }
  // The type of `value` after checking; fails the test on any error.
  ir::Type type_of(const std::string& value) {
    check::CheckResult r = check::check_model(m);
    for (const auto& d : r.diagnostics.items) ADD_FAILURE() << d.to_string();
    auto it = r.value_types.find(value);
    return it == r.value_types.end() ? ir::Type{} : it->second;
  }
};

// --- Reshape ---

TEST(TensorTest, ReshapeInfersMinusOneAndCopiesZero) {
  auto r = infer({.op = "Reshape",
                  .opset = 14,
                  .inputs = {T(kFloat, {2, 3, 4}), T(kInt64, {3})},
                  .constants = {{1, ints_tensor({0, -1, 2})}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2, 6, 2}));
}

TEST(TensorTest, ReshapeCancelsSymbols) {
  auto r = infer({.op = "Reshape",
                  .opset = 13,
                  .inputs = {T(kFloat, {"batch", 3, 224, 224}), T(kInt64, {2})},
                  .constants = {{1, ints_tensor({0, -1})}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"batch", 150528}));
}

TEST(TensorTest, ReshapeRejectsIndivisibleTarget) {
  auto r = infer({.op = "Reshape",
                  .opset = 13,
                  .inputs = {T(kFloat, {1, 3, 224, 224}), T(kInt64, {3})},
                  .constants = {{1, ints_tensor({1, -1, 5})}}});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(has_error(r, "cannot reshape [1,3,224,224] to [1,-1,5]")) << r.errors();
}

TEST(TensorTest, ReshapeRejectsWrongCountAndTwoMinusOnes) {
  EXPECT_FALSE(infer({.op = "Reshape",
                      .opset = 13,
                      .inputs = {T(kFloat, {2, 3}), T(kInt64, {2})},
                      .constants = {{1, ints_tensor({4, 2})}}})
                   .ok());
  auto r = infer({.op = "Reshape",
                  .opset = 13,
                  .inputs = {T(kFloat, {2, 3}), T(kInt64, {2})},
                  .constants = {{1, ints_tensor({-1, -1})}}});
  EXPECT_TRUE(has_error(r, "more than one -1")) << r.errors();
}

TEST(TensorTest, ReshapeAllowZeroKeepsRealZero) {
  auto r = infer({.op = "Reshape",
                  .opset = 14,
                  .inputs = {T(kFloat, {0, 3}), T(kInt64, {2})},
                  .attrs = {Attribute::of_int("allowzero", 1)},
                  .constants = {{1, ints_tensor({3, 0})}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {3, 0}));
}

TEST(TensorTest, ReshapeVersion1UsesAttribute) {
  auto r = infer({.op = "Reshape",
                  .opset = 1,
                  .inputs = {T(kFloat, {2, 6})},
                  .attrs = {Attribute::of_ints("shape", {3, -1})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {3, 4}));
}

TEST(TensorTest, ReshapeUnknownTargetKeepsRank) {
  auto r = infer({.op = "Reshape", .opset = 13, .inputs = {T(kFloat, {2, 6}), T(kInt64, {3})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  ASSERT_TRUE(r.outputs[0].shape);
  EXPECT_EQ(r.outputs[0].shape->size(), 3u);
}

// --- shape values through chains ---

TEST(TensorTest, ShapeGatherConcatReshapeKeepsBatch) {
  Chain c(13);
  c.input("x", T(kFloat, {"batch", 3, 4, 5}))
      .constant("i0", scalar_i64(0))
      .constant("minus1", ints_tensor({-1}))
      .constant("ax0", ints_tensor({0}))
      .node("Shape", {"x"}, "s")
      .node("Gather", {"s", "i0"}, "b")
      .node("Unsqueeze", {"b", "ax0"}, "b1")
      .node("Concat", {"b1", "minus1"}, "target", {Attribute::of_int("axis", 0)})
      .node("Reshape", {"x", "target"}, "y");
  EXPECT_EQ(c.type_of("b"), T(kInt64, {}));
  EXPECT_EQ(c.type_of("y"), T(kFloat, {"batch", 60}));
}

TEST(TensorTest, ShapeSliceExpandKeepsSymbols) {
  Chain c(13);
  c.input("x", T(kFloat, {"n", "seq", 8}))
      .input("y", T(kFloat, {1, 1, 8}))
      .constant("st", ints_tensor({0}))
      .constant("en", ints_tensor({2}))
      .constant("one", ints_tensor({8}))
      .node("Shape", {"x"}, "s")
      .node("Slice", {"s", "st", "en"}, "head")
      .node("Concat", {"head", "one"}, "target", {Attribute::of_int("axis", 0)})
      .node("Expand", {"y", "target"}, "z")
      .node("ConstantOfShape", {"target"}, "zeros");
  EXPECT_EQ(c.type_of("z"), T(kFloat, {"n", "seq", 8}));
  EXPECT_EQ(c.type_of("zeros"), T(kFloat, {"n", "seq", 8}));
}

TEST(TensorTest, ConstantValueIntsFeedsReshape) {
  Chain c(13);
  c.input("x", T(kFloat, {4, 6}))
      .node("Constant", {}, "shape", {Attribute::of_ints("value_ints", {2, -1, 3})})
      .node("Cast", {"shape"}, "shape64", {Attribute::of_int("to", 7)})
      .node("Reshape", {"x", "shape64"}, "y");
  EXPECT_EQ(c.type_of("shape"), T(kInt64, {3}));
  EXPECT_EQ(c.type_of("y"), T(kFloat, {2, 4, 3}));
}

TEST(TensorTest, SizeOfStaticShape) {
  Chain c(13);
  c.input("x", T(kFloat, {2, 3}))
      .constant("ax0", ints_tensor({0}))
      .node("Size", {"x"}, "n")
      .node("Unsqueeze", {"n", "ax0"}, "n1")
      .node("Reshape", {"x", "n1"}, "flat");
  EXPECT_EQ(c.type_of("n"), T(kInt64, {}));
  EXPECT_EQ(c.type_of("flat"), T(kFloat, {6}));
}

// --- Shape, Size ---

TEST(TensorTest, ShapeStartEnd) {
  auto r = infer({.op = "Shape",
                  .opset = 15,
                  .inputs = {T(kFloat, {2, 3, 4, 5})},
                  .attrs = {Attribute::of_int("start", 1), Attribute::of_int("end", -1)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kInt64, {2}));
  EXPECT_EQ(infer({.op = "Shape", .opset = 13, .inputs = {T(kFloat, {2, 3})}}).outputs[0], T(kInt64, {2}));
}

TEST(TensorTest, SizeIsScalar) {
  EXPECT_EQ(infer({.op = "Size", .opset = 13, .inputs = {T(kFloat, {"n", 3})}}).outputs[0], T(kInt64, {}));
}

// --- Cast family ---

TEST(TensorTest, CastChangesTypeKeepsShape) {
  auto r = infer({.op = "Cast",
                  .opset = 19,
                  .inputs = {T(kFloat, {"n", 3})},
                  .attrs = {Attribute::of_int("to", static_cast<int64_t>(DataType::kFloat16))}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat16, {"n", 3}));
}

TEST(TensorTest, CastVersion1TakesTypeName) {
  auto r = infer(
      {.op = "Cast", .opset = 1, .inputs = {T(kFloat, {2})}, .attrs = {Attribute::of_string("to", "INT32")}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kInt32, {2}));
}

TEST(TensorTest, CastRejectsUnknownType) {
  auto r =
      infer({.op = "Cast", .opset = 13, .inputs = {T(kFloat, {2})}, .attrs = {Attribute::of_int("to", 99)}});
  EXPECT_TRUE(has_error(r, "attribute 'to' is 99")) << r.errors();
}

TEST(TensorTest, CastLikeTakesSecondType) {
  auto r = infer({.op = "CastLike", .opset = 15, .inputs = {T(kFloat, {2, "k"}), T(kDouble, {1})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kDouble, {2, "k"}));
}

TEST(TensorTest, BitCastNeedsEqualWidths) {
  auto ok = infer(
      {.op = "BitCast", .opset = 26, .inputs = {T(kFloat, {3})}, .attrs = {Attribute::of_int("to", 6)}});
  ASSERT_TRUE(ok.ok()) << ok.errors();
  EXPECT_EQ(ok.outputs[0], T(kInt32, {3}));
  auto bad = infer(
      {.op = "BitCast", .opset = 26, .inputs = {T(kFloat, {3})}, .attrs = {Attribute::of_int("to", 7)}});
  EXPECT_TRUE(has_error(bad, "cannot bitcast float (32 bits) to int64 (64 bits)")) << bad.errors();
}

// --- Concat, Split ---

TEST(TensorTest, ConcatSumsAxis) {
  auto r = infer({.op = "Concat",
                  .opset = 13,
                  .inputs = {T(kFloat, {"n", 2, 5}), T(kFloat, {"n", 3, 5})},
                  .attrs = {Attribute::of_int("axis", -2)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"n", 5, 5}));
}

TEST(TensorTest, ConcatRejectsMismatch) {
  auto r = infer({.op = "Concat",
                  .opset = 13,
                  .inputs = {T(kFloat, {2, 4}), T(kFloat, {3, 5})},
                  .attrs = {Attribute::of_int("axis", 0)}});
  EXPECT_TRUE(has_error(r, "in dimension 1")) << r.errors();
  auto rank = infer({.op = "Concat",
                     .opset = 13,
                     .inputs = {T(kFloat, {2, 4}), T(kFloat, {3})},
                     .attrs = {Attribute::of_int("axis", 0)}});
  EXPECT_TRUE(has_error(rank, "has rank 1")) << rank.errors();
}

TEST(TensorTest, SplitEqualAndExplicit) {
  auto r = infer({.op = "Split",
                  .opset = 13,
                  .inputs = {T(kFloat, {6, "n"})},
                  .attrs = {Attribute::of_int("axis", 0)},
                  .num_outputs = 3});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[2], T(kFloat, {2, "n"}));
  auto e = infer({.op = "Split",
                  .opset = 13,
                  .inputs = {T(kFloat, {6, 4}), T(kInt64, {2})},
                  .attrs = {Attribute::of_int("axis", 1)},
                  .constants = {{1, ints_tensor({1, 3})}},
                  .num_outputs = 2});
  ASSERT_TRUE(e.ok()) << e.errors();
  EXPECT_EQ(e.outputs[1], T(kFloat, {6, 3}));
}

TEST(TensorTest, Split18NumOutputsUnevenLastPiece) {
  auto r = infer({.op = "Split",
                  .opset = 18,
                  .inputs = {T(kFloat, {7})},
                  .attrs = {Attribute::of_int("num_outputs", 3)},
                  .num_outputs = 3});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {3}));
  EXPECT_EQ(r.outputs[2], T(kFloat, {1}));
}

TEST(TensorTest, SplitRejectsBadSum) {
  auto r = infer({.op = "Split",
                  .opset = 11,
                  .inputs = {T(kFloat, {6})},
                  .attrs = {Attribute::of_ints("split", {2, 2})},
                  .num_outputs = 2});
  EXPECT_TRUE(has_error(r, "split [2,2] sums to 4")) << r.errors();
}

// --- Squeeze, Unsqueeze, Flatten, Transpose ---

TEST(TensorTest, SqueezeVersions) {
  auto v11 = infer({.op = "Squeeze",
                    .opset = 11,
                    .inputs = {T(kFloat, {1, 3, 1})},
                    .attrs = {Attribute::of_ints("axes", {-1})}});
  ASSERT_TRUE(v11.ok()) << v11.errors();
  EXPECT_EQ(v11.outputs[0], T(kFloat, {1, 3}));
  auto all = infer({.op = "Squeeze", .opset = 13, .inputs = {T(kFloat, {1, 3, 1})}});
  EXPECT_EQ(all.outputs[0], T(kFloat, {3}));
  auto bad = infer({.op = "Squeeze",
                    .opset = 13,
                    .inputs = {T(kFloat, {1, 3}), T(kInt64, {1})},
                    .constants = {{1, ints_tensor({1})}}});
  EXPECT_TRUE(has_error(bad, "cannot squeeze axis 1")) << bad.errors();
}

TEST(TensorTest, UnsqueezeInsertsOnes) {
  auto r = infer({.op = "Unsqueeze",
                  .opset = 13,
                  .inputs = {T(kFloat, {"n", 4}), T(kInt64, {2})},
                  .constants = {{1, ints_tensor({0, -1})}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {1, "n", 4, 1}));
  auto dup = infer({.op = "Unsqueeze",
                    .opset = 11,
                    .inputs = {T(kFloat, {4})},
                    .attrs = {Attribute::of_ints("axes", {0, 0})}});
  EXPECT_TRUE(has_error(dup, "twice")) << dup.errors();
}

TEST(TensorTest, FlattenAxis) {
  auto r = infer({.op = "Flatten",
                  .opset = 13,
                  .inputs = {T(kFloat, {2, 3, 4})},
                  .attrs = {Attribute::of_int("axis", -1)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {6, 4}));
  EXPECT_EQ(infer({.op = "Flatten", .opset = 9, .inputs = {T(kFloat, {"n", 3, 4})}}).outputs[0],
            T(kFloat, {"n", 12}));
  EXPECT_FALSE(infer({.op = "Flatten",
                      .opset = 9,
                      .inputs = {T(kFloat, {2, 3})},
                      .attrs = {Attribute::of_int("axis", -1)}})
                   .ok());
}

TEST(TensorTest, TransposeDefaultAndPerm) {
  EXPECT_EQ(infer({.op = "Transpose", .opset = 13, .inputs = {T(kFloat, {1, 2, 3})}}).outputs[0],
            T(kFloat, {3, 2, 1}));
  auto r = infer({.op = "Transpose",
                  .opset = 21,
                  .inputs = {T(kFloat, {"b", 2, 3})},
                  .attrs = {Attribute::of_ints("perm", {0, 2, 1})}});
  EXPECT_EQ(r.outputs[0], T(kFloat, {"b", 3, 2}));
  auto bad = infer({.op = "Transpose",
                    .opset = 13,
                    .inputs = {T(kFloat, {1, 2, 3})},
                    .attrs = {Attribute::of_ints("perm", {0, 2})}});
  EXPECT_TRUE(has_error(bad, "perm [0,2] is not a permutation")) << bad.errors();
}

// --- Slice ---

TEST(TensorTest, SliceWithStepsAndNegatives) {
  auto r = infer(
      {.op = "Slice",
       .opset = 13,
       .inputs = {T(kFloat, {20, 10, "n"}), T(kInt64, {2}), T(kInt64, {2}), T(kInt64, {2}), T(kInt64, {2})},
       .constants = {{1, ints_tensor({0, -1})},
                     {2, ints_tensor({3, -100})},
                     {3, ints_tensor({0, 1})},
                     {4, ints_tensor({1, -2})}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {3, 5, "n"}));
}

TEST(TensorTest, SliceVersion1Attributes) {
  auto r = infer({.op = "Slice",
                  .opset = 1,
                  .inputs = {T(kFloat, {4, 5})},
                  .attrs = {Attribute::of_ints("starts", {1}), Attribute::of_ints("ends", {1000}),
                            Attribute::of_ints("axes", {1})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {4, 4}));
}

TEST(TensorTest, SliceRejectsZeroStep) {
  auto r = infer(
      {.op = "Slice",
       .opset = 13,
       .inputs = {T(kFloat, {4}), T(kInt64, {1}), T(kInt64, {1}), T(kInt64, {1}), T(kInt64, {1})},
       .constants = {
           {1, ints_tensor({0})}, {2, ints_tensor({4})}, {3, ints_tensor({0})}, {4, ints_tensor({0})}}});
  EXPECT_TRUE(has_error(r, "step 0")) << r.errors();
}

// --- Gather family ---

TEST(TensorTest, GatherReplacesAxis) {
  auto r = infer({.op = "Gather",
                  .opset = 13,
                  .inputs = {T(kFloat, {5, 4, 3}), T(kInt64, {"n", 2})},
                  .attrs = {Attribute::of_int("axis", 1)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {5, "n", 2, 3}));
  auto bad = infer({.op = "Gather",
                    .opset = 13,
                    .inputs = {T(kFloat, {5}), T(kInt64, {1})},
                    .constants = {{1, ints_tensor({7})}}});
  EXPECT_TRUE(has_error(bad, "index 7 is out of range for axis 0 of size 5")) << bad.errors();
}

TEST(TensorTest, GatherElementsAndND) {
  auto ge = infer({.op = "GatherElements", .opset = 13, .inputs = {T(kFloat, {3, 3}), T(kInt64, {2, 3})}});
  EXPECT_EQ(ge.outputs[0], T(kFloat, {2, 3}));
  EXPECT_FALSE(
      infer({.op = "GatherElements", .opset = 13, .inputs = {T(kFloat, {3, 3}), T(kInt64, {3})}}).ok());
  auto nd = infer({.op = "GatherND",
                   .opset = 12,
                   .inputs = {T(kFloat, {2, 3, 4, 5}), T(kInt64, {2, 7, 2})},
                   .attrs = {Attribute::of_int("batch_dims", 1)}});
  ASSERT_TRUE(nd.ok()) << nd.errors();
  EXPECT_EQ(nd.outputs[0], T(kFloat, {2, 7, 5}));
  auto bad = infer({.op = "GatherND", .opset = 13, .inputs = {T(kFloat, {2, 3}), T(kInt64, {4, 3})}});
  EXPECT_FALSE(bad.ok());
}

// --- Scatter family ---

TEST(TensorTest, ScatterKeepsDataShape) {
  auto r = infer({.op = "ScatterElements",
                  .opset = 18,
                  .inputs = {T(kFloat, {3, 3}), T(kInt64, {2, 3}), T(kFloat, {2, 3})},
                  .attrs = {Attribute::of_string("reduction", "max")}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {3, 3}));
  auto old = infer({.op = "ScatterElements",
                    .opset = 16,
                    .inputs = {T(kFloat, {3, 3}), T(kInt64, {2, 3}), T(kFloat, {2, 3})},
                    .attrs = {Attribute::of_string("reduction", "max")}});
  EXPECT_TRUE(has_error(old, "reduction")) << old.errors();
  EXPECT_TRUE(
      infer(
          {.op = "Scatter", .opset = 10, .inputs = {T(kFloat, {3, 3}), T(kInt64, {1, 3}), T(kFloat, {1, 3})}})
          .ok());
}

TEST(TensorTest, ScatterNDChecksUpdates) {
  auto ok = infer({.op = "ScatterND",
                   .opset = 16,
                   .inputs = {T(kFloat, {4, 4, 4}), T(kInt64, {2, 1}), T(kFloat, {2, 4, 4})}});
  ASSERT_TRUE(ok.ok()) << ok.errors();
  auto bad = infer({.op = "ScatterND",
                    .opset = 16,
                    .inputs = {T(kFloat, {4, 4, 4}), T(kInt64, {2, 1}), T(kFloat, {2, 4})}});
  EXPECT_TRUE(has_error(bad, "should have shape [2,4,4]")) << bad.errors();
}

TEST(TensorTest, TensorScatterChecksUpdate) {
  auto ok = infer(
      {.op = "TensorScatter", .opset = 24, .inputs = {T(kFloat, {2, 3, 16, 8}), T(kFloat, {2, 3, 1, 8})}});
  ASSERT_TRUE(ok.ok()) << ok.errors();
  EXPECT_EQ(ok.outputs[0], T(kFloat, {2, 3, 16, 8}));
  EXPECT_FALSE(
      infer(
          {.op = "TensorScatter", .opset = 24, .inputs = {T(kFloat, {2, 3, 16, 8}), T(kFloat, {2, 3, 1, 4})}})
          .ok());
}

// --- Pad, Tile, Expand, depth/space ---

TEST(TensorTest, PadVersions) {
  auto v2 = infer({.op = "Pad",
                   .opset = 2,
                   .inputs = {T(kFloat, {2, 3})},
                   .attrs = {Attribute::of_ints("pads", {1, 0, 1, 2})}});
  ASSERT_TRUE(v2.ok()) << v2.errors();
  EXPECT_EQ(v2.outputs[0], T(kFloat, {4, 5}));
  auto v18 = infer({.op = "Pad",
                    .opset = 18,
                    .inputs = {T(kFloat, {2, 3, "n"}), T(kInt64, {2}), std::nullopt, T(kInt64, {1})},
                    .constants = {{1, ints_tensor({1, 1})}, {3, ints_tensor({1})}}});
  ASSERT_TRUE(v18.ok()) << v18.errors();
  EXPECT_EQ(v18.outputs[0], T(kFloat, {2, 5, "n"}));
  auto bad = infer({.op = "Pad",
                    .opset = 13,
                    .inputs = {T(kFloat, {2, 3}), T(kInt64, {2})},
                    .constants = {{1, ints_tensor({1, 1})}}});
  EXPECT_TRUE(has_error(bad, "pads [1,1] has 2 values")) << bad.errors();
  auto wrap = infer({.op = "Pad",
                     .opset = 18,
                     .inputs = {T(kFloat, {2}), T(kInt64, {2})},
                     .attrs = {Attribute::of_string("mode", "wrap")},
                     .constants = {{1, ints_tensor({1, 1})}}});
  EXPECT_TRUE(has_error(wrap, "'wrap'")) << wrap.errors();
}

TEST(TensorTest, TileMultiplies) {
  auto r = infer({.op = "Tile",
                  .opset = 13,
                  .inputs = {T(kFloat, {2, "n"}), T(kInt64, {2})},
                  .constants = {{1, ints_tensor({3, 1})}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {6, "n"}));
  auto bad = infer({.op = "Tile", .opset = 13, .inputs = {T(kFloat, {2, 3}), T(kInt64, {3})}});
  EXPECT_TRUE(has_error(bad, "repeats has 3 values")) << bad.errors();
}

TEST(TensorTest, ExpandBroadcasts) {
  auto r = infer({.op = "Expand",
                  .opset = 13,
                  .inputs = {T(kFloat, {3, 1}), T(kInt64, {3})},
                  .constants = {{1, ints_tensor({2, 1, 6})}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2, 3, 6}));
  EXPECT_FALSE(infer({.op = "Expand",
                      .opset = 8,
                      .inputs = {T(kFloat, {3}), T(kInt64, {1})},
                      .constants = {{1, ints_tensor({4})}}})
                   .ok());
}

TEST(TensorTest, DepthToSpaceAndBack) {
  auto d = infer({.op = "DepthToSpace",
                  .opset = 13,
                  .inputs = {T(kFloat, {1, 8, 2, 3})},
                  .attrs = {Attribute::of_int("blocksize", 2)}});
  ASSERT_TRUE(d.ok()) << d.errors();
  EXPECT_EQ(d.outputs[0], T(kFloat, {1, 2, 4, 6}));
  auto s = infer({.op = "SpaceToDepth",
                  .opset = 1,
                  .inputs = {T(kFloat, {1, 2, 4, 6})},
                  .attrs = {Attribute::of_int("blocksize", 2)}});
  EXPECT_EQ(s.outputs[0], T(kFloat, {1, 8, 2, 3}));
  auto bad = infer({.op = "DepthToSpace",
                    .opset = 11,
                    .inputs = {T(kFloat, {1, 6, 2, 3})},
                    .attrs = {Attribute::of_int("blocksize", 2)}});
  EXPECT_TRUE(has_error(bad, "not divisible by 4")) << bad.errors();
}

// --- creation ---

TEST(TensorTest, ConstantKinds) {
  auto f = infer({.op = "Constant",
                  .opset = 13,
                  .inputs = {},
                  .attrs = {Attribute::of_floats("value_floats", {1, 2, 3})}});
  ASSERT_TRUE(f.ok()) << f.errors();
  EXPECT_EQ(f.outputs[0], T(kFloat, {3}));
  auto t = infer({.op = "Constant",
                  .opset = 9,
                  .inputs = {},
                  .attrs = {Attribute::of_tensor("value", float_tensor({2, 2}, {1, 2, 3, 4}))}});
  EXPECT_EQ(t.outputs[0], T(kFloat, {2, 2}));
  auto none = infer({.op = "Constant", .opset = 13, .inputs = {}});
  EXPECT_TRUE(has_error(none, "got none")) << none.errors();
  auto two = infer({.op = "Constant",
                    .opset = 13,
                    .inputs = {},
                    .attrs = {Attribute::of_int("value_int", 1), Attribute::of_float("value_float", 1)}});
  EXPECT_TRUE(has_error(two, "got 2")) << two.errors();
}

TEST(TensorTest, ConstantOfShapeUsesValueType) {
  auto r = infer({.op = "ConstantOfShape",
                  .opset = 9,
                  .inputs = {T(kInt64, {2})},
                  .attrs = {Attribute::of_tensor(
                      "value", ir::make_tensor<int32_t>("", kInt32, {1}, std::vector<int32_t>{7}))},
                  .constants = {{0, ints_tensor({4, 5})}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kInt32, {4, 5}));
  auto rank = infer({.op = "ConstantOfShape", .opset = 20, .inputs = {T(kInt64, {3})}});
  ASSERT_TRUE(rank.outputs[0].shape);
  EXPECT_EQ(rank.outputs[0].shape->size(), 3u);
}

TEST(TensorTest, RangeFromConstants) {
  auto r = infer({.op = "Range",
                  .opset = 11,
                  .inputs = {T(kInt64, {}), T(kInt64, {}), T(kInt64, {})},
                  .constants = {{0, scalar_i64(1)}, {1, scalar_i64(10)}, {2, scalar_i64(3)}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kInt64, {3}));
  EXPECT_EQ(infer({.op = "Range", .opset = 11, .inputs = {T(kFloat, {}), T(kFloat, {}), T(kFloat, {})}})
                .outputs[0]
                .rank(),
            1u);
}

TEST(TensorTest, EyeLikeAndOneHot) {
  auto e = infer(
      {.op = "EyeLike", .opset = 9, .inputs = {T(kFloat, {3, 4})}, .attrs = {Attribute::of_int("dtype", 7)}});
  EXPECT_EQ(e.outputs[0], T(kInt64, {3, 4}));
  EXPECT_FALSE(infer({.op = "EyeLike", .opset = 9, .inputs = {T(kFloat, {3})}}).ok());
  auto o = infer({.op = "OneHot",
                  .opset = 11,
                  .inputs = {T(kInt64, {2, 3}), T(kInt64, {}), T(kFloat, {2})},
                  .attrs = {Attribute::of_int("axis", 1)},
                  .constants = {{1, scalar_i64(10)}}});
  ASSERT_TRUE(o.ok()) << o.errors();
  EXPECT_EQ(o.outputs[0], T(kFloat, {2, 10, 3}));
}

// --- data-dependent outputs and the rest ---

TEST(TensorTest, DataDependentShapes) {
  auto nz = infer({.op = "NonZero", .opset = 13, .inputs = {T(kFloat, {2, 3})}});
  ASSERT_TRUE(nz.outputs[0].shape);
  EXPECT_EQ((*nz.outputs[0].shape)[0], ir::Dim::of(2));
  auto u = infer({.op = "Unique", .opset = 11, .inputs = {T(kFloat, {2, 3})}, .num_outputs = 4});
  ASSERT_TRUE(u.ok()) << u.errors();
  EXPECT_EQ(u.outputs[2], T(kInt64, {6}));
  auto c = infer({.op = "Compress",
                  .opset = 11,
                  .inputs = {T(kFloat, {3, 2}), T(kBool, {3})},
                  .attrs = {Attribute::of_int("axis", 0)}});
  ASSERT_TRUE(c.ok()) << c.errors();
  EXPECT_EQ(c.outputs[0].rank(), 2u);
}

TEST(TensorTest, TriluReverseSequenceCenterCropPad) {
  EXPECT_FALSE(infer({.op = "Trilu", .opset = 14, .inputs = {T(kFloat, {3})}}).ok());
  EXPECT_EQ(infer({.op = "Trilu", .opset = 14, .inputs = {T(kFloat, {"n", 3, 3})}}).outputs[0],
            T(kFloat, {"n", 3, 3}));
  auto rs = infer({.op = "ReverseSequence", .opset = 10, .inputs = {T(kFloat, {4, 2, 3}), T(kInt64, {3})}});
  EXPECT_FALSE(rs.ok());
  auto cc = infer({.op = "CenterCropPad",
                   .opset = 18,
                   .inputs = {T(kFloat, {20, 8, 3}), T(kInt64, {2})},
                   .attrs = {Attribute::of_ints("axes", {0, 1})},
                   .constants = {{1, ints_tensor({10, 10})}}});
  ASSERT_TRUE(cc.ok()) << cc.errors();
  EXPECT_EQ(cc.outputs[0], T(kFloat, {10, 10, 3}));
}

TEST(TensorTest, IdentityPassesSequences) {
  auto r = infer({.op = "Identity", .opset = 16, .inputs = {ir::Type::sequence(T(kFloat, {2}))}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], ir::Type::sequence(T(kFloat, {2})));
}

TEST(TensorTest, EveryVersionRegistered) {
  const auto& reg = ops::OpRegistry::global();
  auto since = [&](const char* op) {
    std::vector<int> v;
    for (const auto* s : reg.versions("", op)) v.push_back(s->since_version());
    return v;
  };
  EXPECT_EQ(since("Reshape"), (std::vector<int>{1, 5, 13, 14, 19, 21, 23, 24, 25}));
  EXPECT_EQ(since("Split"), (std::vector<int>{1, 2, 11, 13, 18}));
  EXPECT_EQ(since("Pad"), (std::vector<int>{1, 2, 11, 13, 18, 19, 21, 23, 24, 25}));
  EXPECT_EQ(since("Cast"), (std::vector<int>{1, 6, 9, 13, 19, 21, 23, 24, 25}));
  EXPECT_EQ(since("BitCast"), (std::vector<int>{26}));
  EXPECT_EQ(since("TensorScatter"), (std::vector<int>{24}));
}

}  // namespace
}  // namespace tessera::testing
