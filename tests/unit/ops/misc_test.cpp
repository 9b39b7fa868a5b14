// Shape-inference tests of the random, quantization, signal, string and image operators.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"
#include "ops/registry.h"

namespace tessera::testing {
namespace {

using ir::Attribute;
using ir::DataType;

// "tensor(float)[2,?,batch]": compact, and it shows unknown dimensions, which T() cannot build.
std::string S(const ir::Type& t) {
  return t.to_string();
}

ir::Tensor scalar_int(int64_t v) {
  return ir::make_tensor<int64_t>("", kInt64, {}, {v});
}
ir::Tensor floats_1d(std::vector<float> v) {
  return float_tensor({static_cast<int64_t>(v.size())}, v);
}

// --- random ---

TEST(RandomTest, RandomNormalTakesShapeAndTypeFromAttributes) {
  auto r = infer({.op = "RandomNormal",
                  .opset = 22,
                  .attrs = {Attribute::of_ints("shape", {2, 3}), Attribute::of_int("dtype", 11)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kDouble, {2, 3}));
  auto f = infer({.op = "RandomUniform", .opset = 1, .attrs = {Attribute::of_ints("shape", {4})}});
  ASSERT_TRUE(f.ok()) << f.errors();
  EXPECT_EQ(f.outputs[0], T(kFloat, {4}));
}

TEST(RandomTest, RandomNormalRejectsBadDtypeAndMissingShape) {
  EXPECT_FALSE(infer({.op = "RandomNormal",
                      .opset = 1,
                      .attrs = {Attribute::of_ints("shape", {2}), Attribute::of_int("dtype", 7)}})
                   .ok());  // int64 is no float type
  EXPECT_FALSE(infer({.op = "RandomUniform", .opset = 1}).ok());
  EXPECT_FALSE(infer({.op = "RandomUniform", .opset = 1, .attrs = {Attribute::of_ints("shape", {-1})}}).ok());
  // bfloat16 arrives in opset 22.
  auto bf16 = Attribute::of_int("dtype", static_cast<int64_t>(DataType::kBFloat16));
  EXPECT_FALSE(
      infer({.op = "RandomNormal", .opset = 21, .attrs = {Attribute::of_ints("shape", {2}), bf16}}).ok());
  EXPECT_TRUE(
      infer({.op = "RandomNormal", .opset = 22, .attrs = {Attribute::of_ints("shape", {2}), bf16}}).ok());
}

TEST(RandomTest, LikeOpsKeepShape) {
  auto r = infer({.op = "RandomUniformLike", .opset = 22, .inputs = {T(kFloat16, {"b", 5})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat16, {"b", 5}));
  auto d = infer({.op = "RandomNormalLike",
                  .opset = 1,
                  .inputs = {T(kInt64, {3})},
                  .attrs = {Attribute::of_int("dtype", 1)}});
  ASSERT_TRUE(d.ok()) << d.errors();
  EXPECT_EQ(d.outputs[0], T(kFloat, {3}));
  // An integer input needs an explicit float dtype.
  auto bad = infer({.op = "RandomNormalLike", .opset = 1, .inputs = {T(kInt64, {3})}});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.errors().find("dtype"), std::string::npos) << bad.errors();
}

TEST(RandomTest, Bernoulli) {
  auto r = infer({.op = "Bernoulli", .opset = 15, .inputs = {T(kDouble, {"n", 4})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kDouble, {"n", 4}));
  auto b = infer({.op = "Bernoulli",
                  .opset = 22,
                  .inputs = {T(kFloat, {2})},
                  .attrs = {Attribute::of_int("dtype", static_cast<int64_t>(DataType::kBool))}});
  ASSERT_TRUE(b.ok()) << b.errors();
  EXPECT_EQ(b.outputs[0], T(kBool, {2}));
  EXPECT_FALSE(infer({.op = "Bernoulli",
                      .opset = 15,
                      .inputs = {T(kFloat, {2})},
                      .attrs = {Attribute::of_int("dtype", 8)}})
                   .ok());
}

TEST(RandomTest, Multinomial) {
  auto r = infer({.op = "Multinomial",
                  .opset = 7,
                  .inputs = {T(kFloat, {"batch", 10})},
                  .attrs = {Attribute::of_int("sample_size", 5)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kInt32, {"batch", 5}));
  auto i64 = infer({.op = "Multinomial",
                    .opset = 22,
                    .inputs = {T(kFloat, {2, 3})},
                    .attrs = {Attribute::of_int("dtype", 7)}});
  EXPECT_EQ(i64.outputs[0], T(kInt64, {2, 1}));
  EXPECT_FALSE(infer({.op = "Multinomial", .opset = 7, .inputs = {T(kFloat, {10})}}).ok());
  EXPECT_FALSE(infer({.op = "Multinomial",
                      .opset = 7,
                      .inputs = {T(kFloat, {2, 3})},
                      .attrs = {Attribute::of_int("sample_size", 0)}})
                   .ok());
}

// --- quantization ---

TEST(QuantTest, QuantizeDefaultsToUint8) {
  auto r = infer({.op = "QuantizeLinear", .opset = 13, .inputs = {T(kFloat, {"n", 3}), T(kFloat, {})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kUint8, {"n", 3}));
}

TEST(QuantTest, QuantizeTypeFromZeroPointOrOutputDtype) {
  auto zp = infer({.op = "QuantizeLinear",
                   .opset = 10,
                   .inputs = {T(kFloat, {4}), T(kFloat, {}), T(ir::DataType::kInt8, {})}});
  ASSERT_TRUE(zp.ok()) << zp.errors();
  EXPECT_EQ(zp.outputs[0], T(ir::DataType::kInt8, {4}));
  auto od = infer({.op = "QuantizeLinear",
                   .opset = 21,
                   .inputs = {T(kFloat, {4}), T(kFloat, {})},
                   .attrs = {Attribute::of_int("output_dtype", static_cast<int64_t>(DataType::kInt4))}});
  ASSERT_TRUE(od.ok()) << od.errors();
  EXPECT_EQ(od.outputs[0], T(ir::DataType::kInt4, {4}));
  // output_dtype disagreeing with the zero point.
  EXPECT_FALSE(infer({.op = "QuantizeLinear",
                      .opset = 21,
                      .inputs = {T(kFloat, {4}), T(kFloat, {}), T(kUint8, {})},
                      .attrs = {Attribute::of_int("output_dtype", 3)}})
                   .ok());
  // int4 is not a quantized type of opset 19.
  EXPECT_FALSE(infer({.op = "QuantizeLinear",
                      .opset = 19,
                      .inputs = {T(kFloat, {4}), T(kFloat, {}), T(ir::DataType::kInt4, {})}})
                   .ok());
}

TEST(QuantTest, PerAxisScaleMustMatchAxis) {
  auto ok = infer({.op = "QuantizeLinear",
                   .opset = 13,
                   .inputs = {T(kFloat, {2, 3, 4}), T(kFloat, {3}), T(kUint8, {3})}});
  ASSERT_TRUE(ok.ok()) << ok.errors();
  auto bad = infer({.op = "DequantizeLinear",
                    .opset = 13,
                    .inputs = {T(kUint8, {2, 3, 4}), T(kFloat, {4})},
                    .attrs = {Attribute::of_int("axis", 1)}});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.errors().find("per-axis"), std::string::npos) << bad.errors();
  auto last = infer({.op = "DequantizeLinear",
                     .opset = 13,
                     .inputs = {T(kUint8, {2, 3, 4}), T(kFloat, {4})},
                     .attrs = {Attribute::of_int("axis", -1)}});
  EXPECT_TRUE(last.ok()) << last.errors();
  // Per-axis quantization arrives in opset 13.
  EXPECT_FALSE(
      infer({.op = "QuantizeLinear", .opset = 10, .inputs = {T(kFloat, {2, 3}), T(kFloat, {3})}}).ok());
  // Zero point and scale shapes must agree; a scalar and a [1] both mean per-tensor.
  EXPECT_FALSE(infer({.op = "DequantizeLinear",
                      .opset = 13,
                      .inputs = {T(kUint8, {2, 3}), T(kFloat, {3}), T(kUint8, {2})}})
                   .ok());
  EXPECT_TRUE(infer({.op = "DequantizeLinear",
                     .opset = 13,
                     .inputs = {T(kUint8, {2, 3}), T(kFloat, {}), T(kUint8, {1})}})
                  .ok());
}

TEST(QuantTest, BlockedQuantization) {
  auto r = infer({.op = "DequantizeLinear",
                  .opset = 21,
                  .inputs = {T(kUint8, {1, 4, 3, 2}), T(kFloat, {1, 2, 3, 2}), T(kUint8, {1, 2, 3, 2})},
                  .attrs = {Attribute::of_int("axis", 1), Attribute::of_int("block_size", 2)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {1, 4, 3, 2}));
  // 5 elements in blocks of 2 need 3 scales.
  auto odd = infer({.op = "QuantizeLinear",
                    .opset = 21,
                    .inputs = {T(kFloat, {3, 5}), T(kFloat, {3, 3})},
                    .attrs = {Attribute::of_int("axis", 1), Attribute::of_int("block_size", 2)}});
  EXPECT_TRUE(odd.ok()) << odd.errors();
  auto wrong = infer({.op = "QuantizeLinear",
                      .opset = 21,
                      .inputs = {T(kFloat, {3, 5}), T(kFloat, {3, 2})},
                      .attrs = {Attribute::of_int("axis", 1), Attribute::of_int("block_size", 2)}});
  EXPECT_FALSE(wrong.ok());
  // A 2-D scale without block_size.
  EXPECT_FALSE(
      infer({.op = "QuantizeLinear", .opset = 21, .inputs = {T(kFloat, {3, 4}), T(kFloat, {3, 2})}}).ok());
}

TEST(QuantTest, DequantizeOutputType) {
  auto f =
      infer({.op = "DequantizeLinear", .opset = 10, .inputs = {T(ir::DataType::kInt8, {5}), T(kFloat, {})}});
  EXPECT_EQ(f.outputs[0], T(kFloat, {5}));
  auto h = infer({.op = "DequantizeLinear",
                  .opset = 19,
                  .inputs = {T(ir::DataType::kFloat8E4M3FN, {5}), T(kFloat16, {})}});
  ASSERT_TRUE(h.ok()) << h.errors();
  EXPECT_EQ(h.outputs[0], T(kFloat16, {5}));
  auto od = infer({.op = "DequantizeLinear",
                   .opset = 25,
                   .inputs = {T(ir::DataType::kInt2, {5}), T(kFloat, {})},
                   .attrs = {Attribute::of_int("output_dtype", static_cast<int64_t>(DataType::kBFloat16))}});
  ASSERT_TRUE(od.ok()) << od.errors();
  EXPECT_EQ(od.outputs[0], T(ir::DataType::kBFloat16, {5}));
  EXPECT_FALSE(infer({.op = "DequantizeLinear",
                      .opset = 23,
                      .inputs = {T(kUint8, {5}), T(kFloat, {})},
                      .attrs = {Attribute::of_int("output_dtype", 7)}})
                   .ok());
}

TEST(QuantTest, DynamicQuantizeLinear) {
  auto r =
      infer({.op = "DynamicQuantizeLinear", .opset = 11, .inputs = {T(kFloat, {"n", 8})}, .num_outputs = 3});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kUint8, {"n", 8}));
  EXPECT_EQ(r.outputs[1], T(kFloat, {}));
  EXPECT_EQ(r.outputs[2], T(kUint8, {}));
}

// --- signal ---

TEST(SignalTest, WindowLengthFromConstant) {
  auto r =
      infer({.op = "HannWindow", .opset = 17, .inputs = {std::nullopt}, .constants = {{0, scalar_int(10)}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {10}));
  auto d = infer({.op = "BlackmanWindow",
                  .opset = 17,
                  .inputs = {T(kInt32, {})},
                  .attrs = {Attribute::of_int("output_datatype", 11)}});
  ASSERT_TRUE(d.ok()) << d.errors();
  EXPECT_EQ(S(d.outputs[0]), "tensor(double)[?]");
  EXPECT_FALSE(infer({.op = "HammingWindow", .opset = 17, .inputs = {T(kInt64, {2, 2})}}).ok());
  EXPECT_FALSE(infer({.op = "HammingWindow",
                      .opset = 17,
                      .inputs = {T(kInt64, {})},
                      .attrs = {Attribute::of_int("output_datatype", 8)}})
                   .ok());
}

TEST(SignalTest, DftOpset17) {
  auto r = infer({.op = "DFT",
                  .opset = 17,
                  .inputs = {T(kFloat, {"b", 10, 10, 1})},
                  .attrs = {Attribute::of_int("onesided", 1)}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"b", 6, 10, 2}));
  auto irfft = infer({.op = "DFT",
                      .opset = 17,
                      .inputs = {T(kFloat, {1, 6, 10, 2})},
                      .attrs = {Attribute::of_int("onesided", 1), Attribute::of_int("inverse", 1)}});
  ASSERT_TRUE(irfft.ok()) << irfft.errors();
  EXPECT_EQ(irfft.outputs[0], T(kFloat, {1, 10, 10, 1}));
  auto len = infer({.op = "DFT",
                    .opset = 17,
                    .inputs = {T(kFloat, {1, 10, 2}), std::nullopt},
                    .constants = {{1, scalar_int(16)}}});
  ASSERT_TRUE(len.ok()) << len.errors();
  EXPECT_EQ(len.outputs[0], T(kFloat, {1, 16, 2}));
  EXPECT_FALSE(infer({.op = "DFT", .opset = 17, .inputs = {T(kFloat, {1, 10, 3})}}).ok());
  EXPECT_FALSE(infer({.op = "DFT",
                      .opset = 17,
                      .inputs = {T(kFloat, {1, 10, 2})},
                      .attrs = {Attribute::of_int("axis", 2)}})
                   .ok());  // the complex axis
}

TEST(SignalTest, DftOpset20AxisInput) {
  auto r = infer({.op = "DFT",
                  .opset = 20,
                  .inputs = {T(kFloat, {1, 10, 8, 1}), std::nullopt, std::nullopt},
                  .attrs = {Attribute::of_int("onesided", 1)},
                  .constants = {{2, scalar_int(2)}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {1, 10, 5, 2}));
  // Default axis -2: the last signal axis.
  auto d = infer({.op = "DFT",
                  .opset = 20,
                  .inputs = {T(kFloat, {1, 10, 8, 1})},
                  .attrs = {Attribute::of_int("onesided", 1)}});
  EXPECT_EQ(d.outputs[0], T(kFloat, {1, 10, 5, 2}));
  // An unknown axis: a full transform changes no length, a onesided one might change any.
  auto u = infer({.op = "DFT", .opset = 20, .inputs = {T(kFloat, {1, 10, 1}), std::nullopt, T(kInt64, {})}});
  EXPECT_EQ(u.outputs[0], T(kFloat, {1, 10, 2}));
  auto uo = infer({.op = "DFT",
                   .opset = 20,
                   .inputs = {T(kFloat, {1, 10, 1}), std::nullopt, T(kInt64, {})},
                   .attrs = {Attribute::of_int("onesided", 1)}});
  EXPECT_EQ(S(uo.outputs[0]), "tensor(float)[?,?,2]");
  EXPECT_FALSE(
      infer({.op = "DFT", .opset = 20, .inputs = {T(kFloat, {1, 10, 1}), std::nullopt, T(kInt64, {1})}})
          .ok());
}

TEST(SignalTest, Stft) {
  auto r = infer({.op = "STFT",
                  .opset = 17,
                  .inputs = {T(kFloat, {1, 128, 1}), std::nullopt, T(kFloat, {16})},
                  .constants = {{1, scalar_int(8)}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {1, 15, 9, 2}));
  auto two = infer({.op = "STFT",
                    .opset = 17,
                    .inputs = {T(kFloat, {"b", 128, 2}), std::nullopt, std::nullopt, std::nullopt},
                    .attrs = {Attribute::of_int("onesided", 0)},
                    .constants = {{1, scalar_int(8)}, {3, scalar_int(16)}}});
  ASSERT_TRUE(two.ok()) << two.errors();
  EXPECT_EQ(two.outputs[0], T(kFloat, {"b", 15, 16, 2}));
  // Window and frame_length disagree.
  EXPECT_FALSE(infer({.op = "STFT",
                      .opset = 17,
                      .inputs = {T(kFloat, {1, 128, 1}), T(kInt64, {}), T(kFloat, {16}), std::nullopt},
                      .constants = {{3, scalar_int(32)}}})
                   .ok());
  EXPECT_FALSE(infer({.op = "STFT", .opset = 17, .inputs = {T(kFloat, {1, 128}), T(kInt64, {})}}).ok());
}

TEST(SignalTest, MelWeightMatrix) {
  auto r = infer({.op = "MelWeightMatrix",
                  .opset = 17,
                  .inputs = {std::nullopt, std::nullopt, T(kInt64, {}), T(kFloat, {}), T(kFloat, {})},
                  .constants = {{0, scalar_int(8)}, {1, scalar_int(16)}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {9, 8}));
  EXPECT_FALSE(infer({.op = "MelWeightMatrix",
                      .opset = 17,
                      .inputs = {std::nullopt, T(kInt64, {}), T(kInt64, {}), T(kFloat, {}), T(kFloat, {})},
                      .constants = {{0, scalar_int(0)}}})
                   .ok());
}

// --- strings ---

TEST(StringTest, NormalizerAndConcat) {
  auto n = infer({.op = "StringNormalizer",
                  .opset = 10,
                  .inputs = {T(kString, {1, 4})},
                  .attrs = {Attribute::of_strings("stopwords", {"a"})}});
  ASSERT_TRUE(n.ok()) << n.errors();
  EXPECT_EQ(S(n.outputs[0]), "tensor(string)[1,?]");
  auto keep = infer({.op = "StringNormalizer", .opset = 10, .inputs = {T(kString, {4})}});
  EXPECT_EQ(keep.outputs[0], T(kString, {4}));
  EXPECT_FALSE(infer({.op = "StringNormalizer", .opset = 10, .inputs = {T(kString, {2, 4})}}).ok());
  EXPECT_FALSE(infer({.op = "StringNormalizer",
                      .opset = 10,
                      .inputs = {T(kString, {4})},
                      .attrs = {Attribute::of_string("case_change_action", "TITLE")}})
                   .ok());
  auto c = infer({.op = "StringConcat", .opset = 20, .inputs = {T(kString, {2, 1}), T(kString, {3})}});
  ASSERT_TRUE(c.ok()) << c.errors();
  EXPECT_EQ(c.outputs[0], T(kString, {2, 3}));
  EXPECT_FALSE(infer({.op = "StringConcat", .opset = 20, .inputs = {T(kString, {2}), T(kString, {3})}}).ok());
}

TEST(StringTest, SplitAndRegex) {
  auto s = infer({.op = "StringSplit", .opset = 20, .inputs = {T(kString, {"n", 2})}, .num_outputs = 2});
  ASSERT_TRUE(s.ok()) << s.errors();
  EXPECT_EQ(S(s.outputs[0]), "tensor(string)[n,2,?]");
  EXPECT_EQ(s.outputs[1], T(kInt64, {"n", 2}));
  EXPECT_FALSE(infer({.op = "StringSplit",
                      .opset = 20,
                      .inputs = {T(kString, {2})},
                      .attrs = {Attribute::of_int("maxsplit", -1)},
                      .num_outputs = 2})
                   .ok());
  auto m = infer({.op = "RegexFullMatch",
                  .opset = 20,
                  .inputs = {T(kString, {3})},
                  .attrs = {Attribute::of_string("pattern", "a.*")}});
  ASSERT_TRUE(m.ok()) << m.errors();
  EXPECT_EQ(m.outputs[0], T(kBool, {3}));
}

TEST(StringTest, TfIdfVectorizer) {
  std::vector<Attribute> attrs = {Attribute::of_int("max_gram_length", 2),
                                  Attribute::of_int("min_gram_length", 2),
                                  Attribute::of_int("max_skip_count", 0),
                                  Attribute::of_string("mode", "TF"),
                                  Attribute::of_ints("ngram_counts", {0, 4}),
                                  Attribute::of_ints("ngram_indexes", {0, 1, 2, 3, 4, 5, 6}),
                                  Attribute::of_ints("pool_int64s", {2, 3, 5, 4, 5, 6, 7, 8, 6, 7})};
  auto r = infer({.op = "TfIdfVectorizer", .opset = 9, .inputs = {T(kInt32, {"n", 6})}, .attrs = attrs});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"n", 7}));
  // A string input with an integer pool.
  EXPECT_FALSE(
      infer({.op = "TfIdfVectorizer", .opset = 9, .inputs = {T(kString, {6})}, .attrs = attrs}).ok());
  auto bad_mode = attrs;
  bad_mode[3] = Attribute::of_string("mode", "BM25");
  EXPECT_FALSE(
      infer({.op = "TfIdfVectorizer", .opset = 9, .inputs = {T(kInt32, {6})}, .attrs = bad_mode}).ok());
}

// --- image ---

TEST(ImageTest, ResizeByScales) {
  auto r = infer({.op = "Resize",
                  .opset = 13,
                  .inputs = {T(kFloat, {"n", 3, 4, 6}), std::nullopt, std::nullopt},
                  .constants = {{2, floats_1d({1, 1, 0.5f, 1.5f})}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"n", 3, 2, 9}));
  auto old = infer({.op = "Resize",
                    .opset = 10,
                    .inputs = {T(kUint8, {1, 1, 2, 2}), std::nullopt},
                    .constants = {{1, floats_1d({1, 1, 2, 3})}}});
  ASSERT_TRUE(old.ok()) << old.errors();
  EXPECT_EQ(old.outputs[0], T(kUint8, {1, 1, 4, 6}));
  // Scales not known: the rank stays, the resized sizes are unknown.
  auto u =
      infer({.op = "Resize", .opset = 19, .inputs = {T(kFloat, {1, 3, 4, 4}), std::nullopt, T(kFloat, {4})}});
  ASSERT_TRUE(u.ok()) << u.errors();
  EXPECT_EQ(S(u.outputs[0]), "tensor(float)[?,?,?,?]");
  EXPECT_FALSE(infer({.op = "Resize",
                      .opset = 13,
                      .inputs = {T(kFloat, {1, 3, 4, 4}), std::nullopt, std::nullopt},
                      .constants = {{2, floats_1d({1, 2})}}})
                   .ok());
}

TEST(ImageTest, ResizeBySizesAndAxes) {
  auto r = infer({.op = "Resize",
                  .opset = 18,
                  .inputs = {T(kFloat, {"n", 3, 4, 6}), std::nullopt, std::nullopt, std::nullopt},
                  .attrs = {Attribute::of_ints("axes", {3, 2})},
                  .constants = {{3, ints_tensor({8, 5})}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"n", 3, 5, 8}));
  auto keep = infer({.op = "Resize",
                     .opset = 19,
                     .inputs = {T(kFloat, {1, 1, 2, 2}), std::nullopt, std::nullopt, std::nullopt},
                     .attrs = {Attribute::of_ints("axes", {2, 3}),
                               Attribute::of_string("keep_aspect_ratio_policy", "not_larger")},
                     .constants = {{3, ints_tensor({7, 8})}}});
  ASSERT_TRUE(keep.ok()) << keep.errors();
  EXPECT_EQ(keep.outputs[0], T(kFloat, {1, 1, 7, 7}));
  auto bigger = infer({.op = "Resize",
                       .opset = 19,
                       .inputs = {T(kFloat, {1, 1, 2, 2}), std::nullopt, std::nullopt, std::nullopt},
                       .attrs = {Attribute::of_ints("axes", {2, 3}),
                                 Attribute::of_string("keep_aspect_ratio_policy", "not_smaller")},
                       .constants = {{3, ints_tensor({7, 8})}}});
  EXPECT_EQ(bigger.outputs[0], T(kFloat, {1, 1, 8, 8}));
}

TEST(ImageTest, ResizeValidation) {
  // Both scales and sizes.
  EXPECT_FALSE(infer({.op = "Resize",
                      .opset = 13,
                      .inputs = {T(kFloat, {1, 1, 2, 2}), std::nullopt, std::nullopt, std::nullopt},
                      .constants = {{2, floats_1d({1, 1, 2, 2})}, {3, ints_tensor({1, 1, 4, 4})}}})
                   .ok());
  // Neither.
  EXPECT_FALSE(infer({.op = "Resize", .opset = 13, .inputs = {T(kFloat, {1, 1, 2, 2})}}).ok());
  // A mode of a later opset, an unknown mode, an axis twice.
  auto sizes = std::map<size_t, ir::Tensor>{{3, ints_tensor({1, 1, 4, 4})}};
  EXPECT_FALSE(
      infer({.op = "Resize",
             .opset = 18,
             .inputs = {T(kFloat, {1, 1, 2, 2}), std::nullopt, std::nullopt, std::nullopt},
             .attrs = {Attribute::of_string("coordinate_transformation_mode", "half_pixel_symmetric")},
             .constants = sizes})
          .ok());
  EXPECT_FALSE(infer({.op = "Resize",
                      .opset = 19,
                      .inputs = {T(kFloat, {1, 1, 2, 2}), std::nullopt, std::nullopt, std::nullopt},
                      .attrs = {Attribute::of_string("mode", "area")},
                      .constants = sizes})
                   .ok());
  EXPECT_FALSE(infer({.op = "Resize",
                      .opset = 19,
                      .inputs = {T(kFloat, {1, 1, 2, 2}), std::nullopt, std::nullopt, std::nullopt},
                      .attrs = {Attribute::of_ints("axes", {2, -2})},
                      .constants = {{3, ints_tensor({4, 4})}}})
                   .ok());
}

TEST(ImageTest, ResizeRankFromSizesAndRoi) {
  // X of unknown rank: four sizes mean rank 4.
  auto r =
      infer({.op = "Resize", .opset = 13, .inputs = {T(kFloat), std::nullopt, std::nullopt, T(kInt64, {4})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(S(r.outputs[0]), "tensor(float)[?,?,?,?]");
  // tf_crop_and_resize with scales: floor(size * (end - start) * scale).
  auto crop =
      infer({.op = "Resize",
             .opset = 13,
             .inputs = {T(kFloat, {1, 1, 4, 4}), std::nullopt, std::nullopt},
             .attrs = {Attribute::of_string("coordinate_transformation_mode", "tf_crop_and_resize")},
             .constants = {{1, floats_1d({0, 0, 0.5f, 0.5f, 1, 1, 1, 1})}, {2, floats_1d({1, 1, 2, 2})}}});
  ASSERT_TRUE(crop.ok()) << crop.errors();
  EXPECT_EQ(crop.outputs[0], T(kFloat, {1, 1, 4, 4}));
  EXPECT_FALSE(infer({.op = "Resize",
                      .opset = 13,
                      .inputs = {T(kFloat, {1, 1, 4, 4}), std::nullopt, std::nullopt},
                      .attrs = {Attribute::of_string("coordinate_transformation_mode", "tf_crop_and_resize")},
                      .constants = {{1, floats_1d({0, 1})}, {2, floats_1d({1, 1, 2, 2})}}})
                   .ok());
}

TEST(ImageTest, Upsample) {
  auto r = infer({.op = "Upsample",
                  .opset = 9,
                  .inputs = {T(kFloat, {"n", 1, 2, 2}), std::nullopt},
                  .constants = {{1, floats_1d({1, 1, 2, 3})}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"n", 1, 4, 6}));
  auto v7 = infer({.op = "Upsample",
                   .opset = 7,
                   .inputs = {T(kInt32, {2, 3})},
                   .attrs = {Attribute::of_floats("scales", {2, 1})}});
  ASSERT_TRUE(v7.ok()) << v7.errors();
  EXPECT_EQ(v7.outputs[0], T(kInt32, {4, 3}));
  auto v1 = infer({.op = "Upsample",
                   .opset = 1,
                   .inputs = {T(kFloat, {1, 3, 2, 2})},
                   .attrs = {Attribute::of_float("height_scale", 2), Attribute::of_float("width_scale", 2),
                             Attribute::of_string("mode", "bilinear")}});
  ASSERT_TRUE(v1.ok()) << v1.errors();
  EXPECT_EQ(v1.outputs[0], T(kFloat, {1, 3, 4, 4}));
  EXPECT_FALSE(infer({.op = "Upsample",
                      .opset = 7,
                      .inputs = {T(kFloat, {2, 3})},
                      .attrs = {Attribute::of_floats("scales", {0.5f, 1})}})
                   .ok());
  EXPECT_FALSE(infer({.op = "Upsample",
                      .opset = 7,
                      .inputs = {T(kFloat, {2, 3})},
                      .attrs = {Attribute::of_floats("scales", {2})}})
                   .ok());
}

TEST(ImageTest, GridSample) {
  auto r = infer(
      {.op = "GridSample", .opset = 16, .inputs = {T(kFloat, {"n", 3, 8, 8}), T(kFloat, {"n", 4, 5, 2})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {"n", 3, 4, 5}));
  auto vol = infer({.op = "GridSample",
                    .opset = 22,
                    .inputs = {T(kFloat, {1, 1, 3, 2, 2}), T(kFloat, {1, 2, 4, 2, 3})},
                    .attrs = {Attribute::of_string("mode", "nearest")}});
  ASSERT_TRUE(vol.ok()) << vol.errors();
  EXPECT_EQ(vol.outputs[0], T(kFloat, {1, 1, 2, 4, 2}));
  // Volumetric sampling needs opset 20; the grid's last dimension counts the spatial axes.
  EXPECT_FALSE(infer({.op = "GridSample",
                      .opset = 16,
                      .inputs = {T(kFloat, {1, 1, 3, 2, 2}), T(kFloat, {1, 2, 4, 2, 3})}})
                   .ok());
  EXPECT_FALSE(
      infer({.op = "GridSample", .opset = 20, .inputs = {T(kFloat, {1, 1, 3, 3}), T(kFloat, {1, 2, 2, 3})}})
          .ok());
  EXPECT_FALSE(
      infer({.op = "GridSample", .opset = 20, .inputs = {T(kFloat, {2, 1, 3, 3}), T(kFloat, {3, 2, 2, 2})}})
          .ok());
  EXPECT_FALSE(infer({.op = "GridSample",
                      .opset = 20,
                      .inputs = {T(kFloat, {1, 1, 3, 3}), T(kFloat, {1, 2, 2, 2})},
                      .attrs = {Attribute::of_string("padding_mode", "wrap")}})
                   .ok());
}

TEST(ImageTest, AffineGrid) {
  auto r = infer({.op = "AffineGrid",
                  .opset = 20,
                  .inputs = {T(kFloat, {2, 3, 4}), std::nullopt},
                  .constants = {{1, ints_tensor({2, 3, 4, 5, 6})}}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(r.outputs[0], T(kFloat, {2, 4, 5, 6, 3}));
  auto u = infer({.op = "AffineGrid", .opset = 20, .inputs = {T(kFloat, {"n", 2, 3}), T(kInt64, {4})}});
  ASSERT_TRUE(u.ok()) << u.errors();
  EXPECT_EQ(S(u.outputs[0]), "tensor(float)[n,?,?,2]");
  EXPECT_FALSE(infer({.op = "AffineGrid",
                      .opset = 20,
                      .inputs = {T(kFloat, {2, 2, 3}), std::nullopt},
                      .constants = {{1, ints_tensor({2, 3, 4, 5, 6})}}})
                   .ok());
}

TEST(ImageTest, ImageDecoder) {
  auto r = infer({.op = "ImageDecoder", .opset = 20, .inputs = {T(kUint8, {312})}});
  ASSERT_TRUE(r.ok()) << r.errors();
  EXPECT_EQ(S(r.outputs[0]), "tensor(uint8)[?,?,3]");
  auto g = infer({.op = "ImageDecoder",
                  .opset = 20,
                  .inputs = {T(kUint8, {312})},
                  .attrs = {Attribute::of_string("pixel_format", "Grayscale")}});
  EXPECT_EQ(S(g.outputs[0]), "tensor(uint8)[?,?,1]");
  EXPECT_FALSE(infer({.op = "ImageDecoder",
                      .opset = 20,
                      .inputs = {T(kUint8, {312})},
                      .attrs = {Attribute::of_string("pixel_format", "RGBA")}})
                   .ok());
}

}  // namespace
}  // namespace tessera::testing
