// Shape-inference tests of the transformer, ai.onnx.ml and training operators: src/ops/attention
// (ai.onnx Attention, RotaryEmbedding, LinearAttention, SwiGLU), src/ops/contrib (com.microsoft),
// src/ops/ml (ai.onnx.ml) and src/ops/training (ai.onnx.preview.training, ai.onnx.preview).
#include <gtest/gtest.h>

#include "ops/op_test_util.h"
#include "ops/registry.h"

namespace tessera::testing {
namespace {

using ir::Attribute;
using ir::DataType;

Attribute i1(const char* name, int64_t v) {
  return Attribute::of_int(name, v);
}
Attribute f1(const char* name, float v) {
  return Attribute::of_float(name, v);
}
Attribute str(const char* name, const char* v) {
  return Attribute::of_string(name, v);
}
Attribute ints(const char* name, std::vector<int64_t> v) {
  return Attribute::of_ints(name, std::move(v));
}
Attribute strs(const char* name, std::vector<std::string> v) {
  return Attribute::of_strings(name, std::move(v));
}

bool fails_with(const OpResult& r, const std::string& text) {
  return !r.ok() && r.errors().find(text) != std::string::npos;
}

constexpr const char* kMs = "com.microsoft";
constexpr const char* kMl = "ai.onnx.ml";
constexpr const char* kTraining = "ai.onnx.preview.training";

// ---- ai.onnx Attention ----

TEST(OnnxAttentionTest, Packed3dWithGqaAndCache) {
  auto r = infer(
      {.op = "Attention",
       .opset = 23,
       .inputs = {T(kFloat, {"batch", "seq", 72}), T(kFloat, {"batch", 6, 24}), T(kFloat, {"batch", 6, 30}),
                  std::nullopt, T(kFloat, {"batch", 3, 12, 8}), T(kFloat, {"batch", 3, 12, 10})},
       .attrs = {i1("q_num_heads", 9), i1("kv_num_heads", 3)},
       .num_outputs = 4});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"batch", "seq", 90}));
  EXPECT_EQ(r.outputs[1], T(kFloat, {"batch", 3, 18, 8}));
  EXPECT_EQ(r.outputs[2], T(kFloat, {"batch", 3, 18, 10}));
  EXPECT_EQ(r.outputs[3], T(kFloat, {"batch", 9, "seq", 18}));
}

TEST(OnnxAttentionTest, FourDimensionalKeepsSymbols) {
  auto r = infer({.op = "Attention",
                  .opset = 24,
                  .inputs = {T(kFloat16, {"b", 8, "s", 64}), T(kFloat16, {"b", 2, "kv", 64}),
                             T(kFloat16, {"b", 2, "kv", 32})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat16, {"b", 8, "s", 32}));
}

TEST(OnnxAttentionTest, RejectsBadHeads) {
  auto indivisible =
      infer({.op = "Attention",
             .opset = 23,
             .inputs = {T(kFloat, {2, 4, 768}), T(kFloat, {2, 4, 768}), T(kFloat, {2, 4, 768})},
             .attrs = {i1("q_num_heads", 7), i1("kv_num_heads", 7)}});
  EXPECT_TRUE(fails_with(indivisible, "hidden size 768 of input 0 ('")) << indivisible.errors();
  EXPECT_TRUE(fails_with(indivisible, "is not divisible by q_num_heads 7")) << indivisible.errors();
  auto groups =
      infer({.op = "Attention",
             .opset = 23,
             .inputs = {T(kFloat, {2, 6, 4, 8}), T(kFloat, {2, 4, 4, 8}), T(kFloat, {2, 4, 4, 8})}});
  EXPECT_TRUE(fails_with(groups, "query heads 6 is not a multiple of key/value heads 4")) << groups.errors();
  auto missing = infer({.op = "Attention",
                        .opset = 23,
                        .inputs = {T(kFloat, {2, 4, 24}), T(kFloat, {2, 4, 24}), T(kFloat, {2, 4, 24})}});
  EXPECT_TRUE(fails_with(missing, "q_num_heads and kv_num_heads")) << missing.errors();
  auto head_size =
      infer({.op = "Attention",
             .opset = 23,
             .inputs = {T(kFloat, {2, 3, 4, 8}), T(kFloat, {2, 3, 4, 16}), T(kFloat, {2, 3, 4, 8})}});
  EXPECT_TRUE(fails_with(head_size, "head size of Q and K")) << head_size.errors();
}

TEST(OnnxAttentionTest, UnknownShapesStayUnknown) {
  auto r = infer({.op = "Attention", .opset = 23, .inputs = {T(kFloat), T(kFloat), T(kFloat)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat));
}

TEST(OnnxAttentionTest, WindowAttributesFromOpset25) {
  OpCase c{.op = "Attention",
           .opset = 25,
           .inputs = {T(kFloat, {1, 1, 5, 4}), T(kFloat, {1, 1, 5, 4}), T(kFloat, {1, 1, 5, 4})},
           .attrs = {i1("left_window_size", 2)}};
  EXPECT_TRUE(infer(c).ok()) << infer(c).errors();
  c.opset = 24;
  EXPECT_FALSE(infer(c).ok());
}

TEST(OnnxRotaryEmbeddingTest, ThreeDimensionalNeedsHeadsAndMatchingCache) {
  auto r = infer(
      {.op = "RotaryEmbedding",
       .opset = 23,
       .inputs = {T(kFloat, {"b", "s", 32}), T(kFloat, {50, 2}), T(kFloat, {50, 2}), T(kInt64, {"b", "s"})},
       .attrs = {i1("num_heads", 4), i1("rotary_embedding_dim", 4)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"b", "s", 32}));
  auto no_heads =
      infer({.op = "RotaryEmbedding",
             .opset = 23,
             .inputs = {T(kFloat, {2, 3, 32}), T(kFloat, {50, 4}), T(kFloat, {50, 4}), T(kInt64, {2, 3})}});
  EXPECT_TRUE(fails_with(no_heads, "num_heads")) << no_heads.errors();
  auto cache = infer({.op = "RotaryEmbedding",
                      .opset = 23,
                      .inputs = {T(kFloat, {2, 4, 3, 8}), T(kFloat, {2, 3, 3}), T(kFloat, {2, 3, 3})}});
  EXPECT_TRUE(fails_with(cache, "expected rotary_dim/2 = 4")) << cache.errors();
}

TEST(LinearAttentionTest, GqaStateAndRules) {
  auto r = infer({.op = "LinearAttention",
                  .opset = 27,
                  .inputs = {T(kFloat, {"b", "t", 64}), T(kFloat, {"b", "t", 32}), T(kFloat, {"b", "t", 32}),
                             std::nullopt, T(kFloat, {"b", "t", 32}), T(kFloat, {"b", "t", 4})},
                  .attrs = {i1("q_num_heads", 8), i1("kv_num_heads", 4)},
                  .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"b", "t", 64}));
  EXPECT_EQ(r.outputs[1], T(kFloat, {"b", 4, 8, 8}));
  auto no_beta = infer({.op = "LinearAttention",
                        .opset = 27,
                        .inputs = {T(kFloat, {2, 4, 32}), T(kFloat, {2, 4, 32}), T(kFloat, {2, 4, 32})},
                        .attrs = {i1("q_num_heads", 4), i1("kv_num_heads", 4), str("update_rule", "delta")},
                        .num_outputs = 2});
  EXPECT_TRUE(fails_with(no_beta, "needs the beta input")) << no_beta.errors();
}

TEST(SwiGluTest, SameShapeNoBroadcast) {
  auto r = infer({.op = "SwiGLU", .opset = 28, .inputs = {T(kFloat, {"n", 4}), T(kFloat, {"n", 4})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"n", 4}));
  auto bad = infer({.op = "SwiGLU", .opset = 28, .inputs = {T(kFloat, {2, 4}), T(kFloat, {1, 4})}});
  EXPECT_TRUE(fails_with(bad, "does not broadcast")) << bad.errors();
}

// ---- com.microsoft ----

TEST(ContribTest, FusedMatMulTransposes) {
  auto r = infer({.op = "FusedMatMul",
                  .domain = kMs,
                  .opset = 1,
                  .inputs = {T(kFloat, {"b", 16, 8}), T(kFloat, {32, 16})},
                  .attrs = {i1("transA", 1), i1("transB", 1)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"b", 8, 32}));
  auto bad = infer(
      {.op = "FusedMatMul", .domain = kMs, .opset = 1, .inputs = {T(kFloat, {4, 8}), T(kFloat, {4, 3})}});
  EXPECT_TRUE(fails_with(bad, "inner dimensions differ")) << bad.errors();
}

TEST(ContribTest, GeluFamily) {
  auto fast = infer({.op = "FastGelu",
                     .domain = kMs,
                     .opset = 1,
                     .inputs = {T(kFloat16, {"b", "s", 3072}), T(kFloat16, {3072})}});
  ASSERT_TRUE(fast.ok()) << fast.errors();
  EXPECT_EQ(fast.outputs[0], T(kFloat16, {"b", "s", 3072}));
  auto bias =
      infer({.op = "BiasGelu", .domain = kMs, .opset = 1, .inputs = {T(kFloat, {2, 8}), T(kFloat, {7})}});
  EXPECT_TRUE(fails_with(bias, "bias length")) << bias.errors();
  auto quick = infer({.op = "QuickGelu", .domain = kMs, .opset = 1, .inputs = {T(kFloat, {"n"})}});
  EXPECT_EQ(quick.outputs[0], T(kFloat, {"n"}));
}

TEST(ContribTest, SkipLayerNormalization) {
  auto r = infer({.op = "SkipLayerNormalization",
                  .domain = kMs,
                  .opset = 1,
                  .inputs = {T(kFloat16, {"b", "s", 768}), T(kFloat16, {"b", "s", 768}), T(kFloat16, {768}),
                             T(kFloat16, {768})},
                  .num_outputs = 4});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat16, {"b", "s", 768}));
  EXPECT_EQ(r.outputs[1], T(kFloat, {"b", "s", 1}));
  EXPECT_EQ(r.outputs[3], T(kFloat16, {"b", "s", 768}));
  auto bad = infer({.op = "SkipSimplifiedLayerNormalization",
                    .domain = kMs,
                    .opset = 1,
                    .inputs = {T(kFloat, {2, 3, 8}), T(kFloat, {2, 3, 8}), T(kFloat, {6})}});
  EXPECT_TRUE(fails_with(bad, "gamma length")) << bad.errors();
}

TEST(ContribTest, LayerNormStats) {
  auto r = infer({.op = "LayerNormalization",
                  .domain = kMs,
                  .opset = 1,
                  .inputs = {T(kFloat, {"b", 4, 8}), T(kFloat, {8}), T(kFloat, {8})},
                  .num_outputs = 3});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"b", 4, 8}));
  EXPECT_EQ(r.outputs[1], T(kFloat, {"b", 4, 1}));
  auto rms = infer({.op = "SimplifiedLayerNormalization",
                    .domain = kMs,
                    .opset = 1,
                    .inputs = {T(kFloat16, {2, 8}), T(kFloat16, {8})},
                    .num_outputs = 2});
  ASSERT_TRUE(rms.ok()) << rms.errors();
  EXPECT_EQ(rms.outputs[1], T(kFloat, {2, 1}));
}

TEST(ContribTest, AttentionWithPast) {
  auto r = infer({.op = "Attention",
                  .domain = kMs,
                  .opset = 1,
                  .inputs = {T(kFloat, {"batch", "seq", 768}), T(kFloat, {768, 2304}), T(kFloat, {2304}),
                             std::nullopt, T(kFloat, {2, "batch", 12, "past", 64})},
                  .attrs = {i1("num_heads", 12)},
                  .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"batch", "seq", 768}));
  ASSERT_TRUE(r.outputs[1].shape.has_value());
  EXPECT_EQ((*r.outputs[1].shape)[4], ir::Dim::of(64));
  auto bad = infer({.op = "Attention",
                    .domain = kMs,
                    .opset = 1,
                    .inputs = {T(kFloat, {1, 4, 768}), T(kFloat, {768, 2304})},
                    .attrs = {i1("num_heads", 7)}});
  EXPECT_TRUE(fails_with(bad, "is not divisible by num_heads 7")) << bad.errors();
}

TEST(ContribTest, MultiHeadAttentionLayouts) {
  auto r = infer({.op = "MultiHeadAttention",
                  .domain = kMs,
                  .opset = 1,
                  .inputs = {T(kFloat, {"b", "s", 512}), T(kFloat, {"b", "l", 512}),
                             T(kFloat, {"b", "l", 512}), std::nullopt, std::nullopt, std::nullopt,
                             T(kFloat, {"b", 8, 10, 64}), T(kFloat, {"b", 8, 10, 64})},
                  .attrs = {i1("num_heads", 8)},
                  .num_outputs = 3});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"b", "s", 512}));
  EXPECT_EQ((*r.outputs[1].shape)[3], ir::Dim::of(64));
  auto packed = infer({.op = "MultiHeadAttention",
                       .domain = kMs,
                       .opset = 1,
                       .inputs = {T(kFloat16, {2, 5, 4, 3, 16})},
                       .attrs = {i1("num_heads", 4)}});
  ASSERT_TRUE(packed.ok()) << packed.errors();
  EXPECT_EQ(packed.outputs[0], T(kFloat16, {2, 5, 64}));
}

TEST(ContribTest, GroupQueryAttentionCache) {
  OpCase c{
      .op = "GroupQueryAttention",
      .domain = kMs,
      .opset = 1,
      .inputs = {T(kFloat16, {1, "s", 2048}), T(kFloat16, {1, "s", 512}), T(kFloat16, {1, "s", 512}),
                 T(kFloat16, {1, 8, 128, 64}), T(kFloat16, {1, 8, 128, 64}), T(kInt32, {1}), std::nullopt},
      .attrs = {i1("num_heads", 32), i1("kv_num_heads", 8)},
      .constants = {{6, ir::make_tensor<int32_t>("", DataType::kInt32, {}, std::vector<int32_t>{20})}},
      .num_outputs = 3};
  auto r = infer(c);
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat16, {1, "s", 2048}));
  EXPECT_EQ(r.outputs[1], T(kFloat16, {1, 8, 128, 64}));
  c.attrs = {i1("num_heads", 30), i1("kv_num_heads", 8)};
  EXPECT_TRUE(fails_with(infer(c), "num_heads 30 is not a multiple of kv_num_heads 8"));
}

TEST(ContribTest, EmbedLayerNormalization) {
  auto r = infer({.op = "EmbedLayerNormalization",
                  .domain = kMs,
                  .opset = 1,
                  .inputs = {T(kInt32, {"b", "s"}), T(kInt32, {"b", "s"}), T(kFloat, {30522, 768}),
                             T(kFloat, {512, 768}), T(kFloat, {2, 768}), T(kFloat, {768}), T(kFloat, {768})},
                  .num_outputs = 2});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"b", "s", 768}));
  EXPECT_EQ(r.outputs[1], T(kInt32, {"b"}));
}

TEST(ContribTest, RotaryEmbeddingAndBiasAdd) {
  auto rope = infer({.op = "RotaryEmbedding",
                     .domain = kMs,
                     .opset = 1,
                     .inputs = {T(kFloat, {"b", "s", 256}), T(kInt64, {"b", "s"}), T(kFloat, {1024, 32}),
                                T(kFloat, {1024, 32})},
                     .attrs = {i1("num_heads", 4)}});
  ASSERT_TRUE(rope.ok()) << rope.errors();
  EXPECT_EQ(rope.outputs[0], T(kFloat, {"b", "s", 256}));
  auto add =
      infer({.op = "BiasAdd",
             .domain = kMs,
             .opset = 1,
             .inputs = {T(kFloat16, {"n", 64, 320}), T(kFloat16, {320}), T(kFloat16, {"n", 64, 320})}});
  ASSERT_TRUE(add.ok()) << add.errors();
  EXPECT_EQ(add.outputs[0], T(kFloat16, {"n", 64, 320}));
}

TEST(ContribTest, MatMulNBits) {
  OpCase c{.op = "MatMulNBits",
           .domain = kMs,
           .opset = 1,
           .inputs = {T(kFloat16, {"b", "s", 4096}), T(kUint8, {11008, 128, 16}), T(kFloat16, {11008 * 128})},
           .attrs = {i1("K", 4096), i1("N", 11008), i1("block_size", 32), i1("bits", 4)}};
  auto r = infer(c);
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat16, {"b", "s", 11008}));
  c.inputs[0] = T(kFloat16, {"b", "s", 4000});
  EXPECT_TRUE(fails_with(infer(c), "attribute K"));
}

// ---- ai.onnx.ml ----

TEST(MlTest, TreeEnsembleV5) {
  ir::Tensor weights = float_tensor({2}, {1.0f, 2.0f});
  ir::Tensor splits = float_tensor({1}, {0.5f});
  Attribute w = Attribute::of_tensor("leaf_weights", weights);
  Attribute s = Attribute::of_tensor("nodes_splits", splits);
  Attribute modes = Attribute::of_tensor(
      "nodes_modes", ir::make_tensor<uint8_t>("", DataType::kUint8, {1}, std::vector<uint8_t>{0}));
  auto r = infer(
      {.op = "TreeEnsemble",
       .domain = kMl,
       .opset = 5,
       .inputs = {T(kFloat, {"n", 3})},
       .attrs = {i1("n_targets", 2), ints("leaf_targetids", {0, 1}), w, ints("nodes_falseleafs", {1}),
                 ints("nodes_falsenodeids", {1}), ints("nodes_featureids", {0}), modes, s,
                 ints("nodes_trueleafs", {1}), ints("nodes_truenodeids", {0}), ints("tree_roots", {0})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"n", 2}));
}

TEST(MlTest, LabelEncoderTypesFromAttributes) {
  auto r = infer({.op = "LabelEncoder",
                  .domain = kMl,
                  .opset = 2,
                  .inputs = {T(kString, {"n"})},
                  .attrs = {strs("keys_strings", {"a", "b"}), ints("values_int64s", {1, 2})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kInt64, {"n"}));
  auto mismatch = infer({.op = "LabelEncoder",
                         .domain = kMl,
                         .opset = 2,
                         .inputs = {T(kInt64, {3})},
                         .attrs = {strs("keys_strings", {"a", "b"}), ints("values_int64s", {1})}});
  EXPECT_TRUE(fails_with(mismatch, "2 keys but 1 values")) << mismatch.errors();
}

TEST(MlTest, ClassifiersAndTransforms) {
  auto tree = infer({.op = "TreeEnsembleClassifier",
                     .domain = kMl,
                     .opset = 3,
                     .inputs = {T(kFloat, {"n", 4})},
                     .attrs = {strs("classlabels_strings", {"a", "b", "c"})},
                     .num_outputs = 2});
  ASSERT_TRUE(tree.ok()) << tree.errors();
  EXPECT_EQ(tree.outputs[0], T(kString, {"n"}));
  EXPECT_EQ(tree.outputs[1], T(kFloat, {"n", 3}));
  auto onehot = infer({.op = "OneHotEncoder",
                       .domain = kMl,
                       .opset = 1,
                       .inputs = {T(kInt64, {"n", 2})},
                       .attrs = {ints("cats_int64s", {1, 2, 3})}});
  ASSERT_TRUE(onehot.ok()) << onehot.errors();
  EXPECT_EQ(onehot.outputs[0], T(kFloat, {"n", 2, 3}));
  auto extract = infer({.op = "ArrayFeatureExtractor",
                        .domain = kMl,
                        .opset = 1,
                        .inputs = {T(kDouble, {"n", 10}), T(kInt64, {3})}});
  EXPECT_EQ(extract.outputs[0], T(kDouble, {"n", 3}));
  auto reg = infer({.op = "LinearRegressor",
                    .domain = kMl,
                    .opset = 1,
                    .inputs = {T(kFloat, {"n", 4})},
                    .attrs = {i1("targets", 2)}});
  EXPECT_EQ(reg.outputs[0], T(kFloat, {"n", 2}));
  auto zip = infer({.op = "ZipMap",
                    .domain = kMl,
                    .opset = 1,
                    .inputs = {T(kFloat, {"n", 3})},
                    .attrs = {ints("classlabels_int64s", {0, 1})}});
  EXPECT_TRUE(fails_with(zip, "3 columns but there are 2 class labels")) << zip.errors();
}

// ---- training ----

TEST(TrainingTest, AdamGroups) {
  auto r = infer({.op = "Adam",
                  .domain = kTraining,
                  .opset = 1,
                  .inputs = {T(kFloat, {}), T(kInt64, {}), T(kFloat, {1}), T(kFloat, {2}), T(kFloat, {1}),
                             T(kFloat, {2}), T(kFloat, {1}), T(kFloat, {2}), T(kFloat, {1}), T(kFloat, {2})},
                  .num_outputs = 6});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[1], T(kFloat, {2}));
  EXPECT_EQ(r.outputs[5], T(kFloat, {2}));
  auto odd = infer({.op = "Adagrad",
                    .domain = kTraining,
                    .opset = 1,
                    .inputs = {T(kFloat, {}), T(kInt64, {}), T(kFloat, {1}), T(kFloat, {1})},
                    .num_outputs = 2});
  EXPECT_TRUE(fails_with(odd, "do not split that way")) << odd.errors();
  auto momentum = infer(
      {.op = "Momentum",
       .domain = kTraining,
       .opset = 1,
       .inputs = {T(kFloat, {}), T(kInt64, {}), T(kFloat, {2}), T(kFloat, {2}), T(kFloat, {2})},
       .attrs = {f1("alpha", 0.9f), f1("beta", 0.1f), str("mode", "heavy"), f1("norm_coefficient", 0.0f)},
       .num_outputs = 2});
  EXPECT_TRUE(fails_with(momentum, "mode 'heavy'")) << momentum.errors();
}

TEST(TrainingTest, FlexAttentionGqa) {
  auto r = infer(
      {.op = "FlexAttention",
       .domain = "ai.onnx.preview",
       .opset = 1,
       .inputs = {T(kFloat, {"b", 8, "l", 16}), T(kFloat, {"b", 2, "s", 16}), T(kFloat, {"b", 2, "s", 32})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"b", 8, "l", 32}));
}

}  // namespace
}  // namespace tessera::testing
