// Reference kernels of src/ops/tensor on what the ONNX conformance suite leaves out: float8 rounding
// and saturation corners, string casts, packed 4-bit tensors through the data-movement kernels, element
// types the suite does not use, and the error paths (indices out of range, bad shapes and attributes).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/model.h"
#include "kernel_test_util.h"
#include "ops/tensor/float8_kernel_util.h"
#include "runtime/half.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace tessera {
namespace {

using ir::Attribute;
using ir::DataType;
using kernel_test::make;
using kernel_test::values;
using kernel_test::vec;
using rt::Float16;
using rt::Tensor;

// Runs one node with `outputs` outputs; an undefined Tensor among `ins` leaves that input out.
std::vector<Tensor> run_node(const std::string& op, int opset, const std::vector<Tensor>& ins,
                             std::vector<Attribute> attrs = {}, size_t outputs = 1) {
  return kernel_test::run_one_node(op, opset, ins, std::move(attrs), {.outputs = outputs});
}

Tensor run_op(const std::string& op, int opset, const std::vector<Tensor>& ins,
              std::vector<Attribute> attrs = {}) {
  return run_node(op, opset, ins, std::move(attrs)).at(0);
}

std::string error_of(const std::string& op, int opset, const std::vector<Tensor>& ins,
                     std::vector<Attribute> attrs = {}, size_t outputs = 1) {
  return kernel_test::run_error(op, opset, ins, std::move(attrs), {.outputs = outputs});
}

Tensor ints(std::vector<int64_t> v) {
  return vec<int64_t>(DataType::kInt64, std::move(v));
}
Tensor floats(std::vector<float> v) {
  return vec<float>(DataType::kFloat, std::move(v));
}
// A packed 4-bit tensor from its codes.
Tensor packed4(DataType dt, rt::Shape shape, const std::vector<uint8_t>& codes) {
  Tensor t = Tensor::zeros(dt, std::move(shape));
  auto* p = static_cast<uint8_t*>(t.raw());
  for (size_t i = 0; i < codes.size(); ++i)
    p[i / 2] |= static_cast<uint8_t>((codes[i] & 0xF) << (4 * (i % 2)));
  return t;
}
std::vector<uint8_t> codes4(const Tensor& t) {
  std::vector<uint8_t> r;
  const auto* p = static_cast<const uint8_t*>(t.raw());
  for (int64_t i = 0; i < t.numel(); ++i) r.push_back((p[i / 2] >> (4 * (i % 2))) & 0xF);
  return r;
}
Attribute to(DataType dt) {
  return Attribute::of_int("to", static_cast<int64_t>(dt));
}

// ---- float8 helpers ----

TEST(TensorKernelsFloat8, E4M3FNRoundsToNearestEvenAndSaturates) {
  namespace f8 = ops::float8;
  EXPECT_EQ(f8::encode(f8::kE4M3FN, 448.0, true), 0x7E);
  EXPECT_EQ(f8::encode(f8::kE4M3FN, 464.0, true), 0x7E);   // halfway to 480: even mantissa is 448
  EXPECT_EQ(f8::encode(f8::kE4M3FN, 464.0, false), 0x7E);  // still rounds to 448
  EXPECT_EQ(f8::encode(f8::kE4M3FN, 470.0, false), 0x7F);  // rounds past max: NaN
  EXPECT_EQ(f8::encode(f8::kE4M3FN, -1e9, true), 0xFE);
  EXPECT_EQ(f8::encode(f8::kE4M3FN, std::ldexp(1.0, -9), true), 0x01);      // smallest subnormal
  EXPECT_EQ(f8::encode(f8::kE4M3FN, std::ldexp(1.0, -10), true), 0x00);     // tie to even: 0
  EXPECT_EQ(f8::encode(f8::kE4M3FN, std::ldexp(3.0, -10), true), 0x02);     // 1.5 ulp: tie to 2
  EXPECT_EQ(f8::encode(f8::kE4M3FN, -std::ldexp(1.0, -12), true), 0x80);    // -0 kept
  EXPECT_EQ(f8::encode(f8::kE4M3FNUZ, -std::ldexp(1.0, -12), true), 0x00);  // no -0 in FNUZ
  EXPECT_EQ(f8::encode(f8::kE5M2, INFINITY, false), 0x7C);
  EXPECT_EQ(f8::encode(f8::kE5M2, -INFINITY, true), 0xFB);
  EXPECT_EQ(f8::encode(f8::kE5M2FNUZ, 1e6, false), 0x80);
  EXPECT_EQ(f8::encode(f8::kE2M1, 5.0, true), 0x6);  // tie between 4 and 6: even mantissa, 4
  EXPECT_EQ(f8::encode(f8::kE2M1, -100.0, true), 0xF);
}

TEST(TensorKernelsFloat8, EveryCodeRoundTrips) {
  namespace f8 = ops::float8;
  for (const f8::MiniFloat* f : {&f8::kE4M3FN, &f8::kE4M3FNUZ, &f8::kE5M2, &f8::kE5M2FNUZ}) {
    for (int c = 0; c < 256; ++c) {
      float v = f8::decode(*f, static_cast<uint8_t>(c));
      if (std::isnan(v) || std::isinf(v)) continue;
      if (f->uz && c == 0x80) continue;
      EXPECT_EQ(f8::encode(*f, v, false), c) << "code " << c << " value " << v;
    }
  }
  for (int c = 0; c < 16; ++c) EXPECT_EQ(f8::encode(f8::kE2M1, f8::decode(f8::kE2M1, c), true), c);
}

TEST(TensorKernelsFloat8, E8M0Rounding) {
  namespace f8 = ops::float8;
  EXPECT_EQ(f8::float_to_e8m0(1.0f, true, f8::E8M0Round::kUp), 127);
  EXPECT_EQ(f8::float_to_e8m0(1.1f, true, f8::E8M0Round::kUp), 128);
  EXPECT_EQ(f8::float_to_e8m0(1.1f, true, f8::E8M0Round::kDown), 127);
  EXPECT_EQ(f8::float_to_e8m0(1.6f, true, f8::E8M0Round::kNearest), 128);
  EXPECT_EQ(f8::float_to_e8m0(INFINITY, true, f8::E8M0Round::kUp), 0xFE);
  EXPECT_EQ(f8::float_to_e8m0(INFINITY, false, f8::E8M0Round::kUp), 0xFF);
  EXPECT_EQ(f8::e8m0_to_float(130), 8.0f);
}

// ---- Cast ----

TEST(TensorKernelsCast, FloatToIntTruncatesAndNanIsZero) {
  Tensor y = run_op("Cast", 19, {floats({2.7f, -2.7f, NAN, 1e20f})}, {to(DataType::kInt32)});
  auto v = values<int32_t>(y);
  EXPECT_EQ(v[0], 2);
  EXPECT_EQ(v[1], -2);
  EXPECT_EQ(v[2], 0);
}

TEST(TensorKernelsCast, StringsToNumbers) {
  Tensor s = vec<std::string>(DataType::kString, {"1.5", "INF", "-inf", "NaN", " 1e3", "-7"});
  auto f = values<float>(run_op("Cast", 19, {s}, {to(DataType::kFloat)}));
  EXPECT_EQ(f[0], 1.5f);
  EXPECT_TRUE(std::isinf(f[1]) && f[1] > 0);
  EXPECT_TRUE(std::isinf(f[2]) && f[2] < 0);
  EXPECT_TRUE(std::isnan(f[3]));
  EXPECT_EQ(f[4], 1000.0f);
  Tensor big = vec<std::string>(DataType::kString, {"9007199254740993", "-3"});
  auto i = values<int64_t>(run_op("Cast", 19, {big}, {to(DataType::kInt64)}));
  EXPECT_EQ(i[0], 9007199254740993LL);  // exact, not through double
  EXPECT_EQ(i[1], -3);
  Tensor bad = vec<std::string>(DataType::kString, {"12abc"});
  EXPECT_NE(error_of("Cast", 19, {bad}, {to(DataType::kFloat)}).find("12abc"), std::string::npos);
}

TEST(TensorKernelsCast, NumbersToStrings) {
  auto s = values<std::string>(
      run_op("Cast", 19, {floats({1.5f, NAN, -INFINITY, 0.1f})}, {to(DataType::kString)}));
  EXPECT_EQ(s[0], "1.5");
  EXPECT_EQ(s[1], "NaN");
  EXPECT_EQ(s[2], "-INF");
  EXPECT_EQ(s[3], "0.1");
  auto t = values<std::string>(run_op("Cast", 19, {ints({-12, 0})}, {to(DataType::kString)}));
  EXPECT_EQ(t[0], "-12");
}

TEST(TensorKernelsCast, Int4PacksOddCountsAndWraps) {
  Tensor y = run_op("Cast", 21, {floats({1, -1, 7, -8, 9})}, {to(DataType::kInt4)});
  EXPECT_EQ(y.nbytes(), 3u);
  EXPECT_EQ(codes4(y), (std::vector<uint8_t>{1, 0xF, 7, 8, 9}));
  Tensor back = run_op("Cast", 21, {y}, {to(DataType::kFloat)});
  EXPECT_EQ(values<float>(back), (std::vector<float>{1, -1, 7, -8, -7}));
}

TEST(TensorKernelsCast, Float16AndBoolAndUint64) {
  Tensor y = run_op("Cast", 13, {ints({1, 2049, -3})}, {to(DataType::kFloat16)});
  auto h = values<Float16>(y);
  EXPECT_EQ(static_cast<float>(h[1]), 2048.0f);  // 2049 rounds to even in float16
  auto b = values<bool>(run_op("Cast", 13, {floats({0.0f, -0.0f, 1e-30f, NAN})}, {to(DataType::kBool)}));
  EXPECT_EQ(b, (std::vector<bool>{false, false, true, true}));
  auto u = values<uint64_t>(
      run_op("Cast", 13, {vec<double>(DataType::kDouble, {1.8e19})}, {to(DataType::kUint64)}));
  EXPECT_EQ(u[0], 18000000000000000000ULL);
  Tensor max = vec<uint64_t>(DataType::kUint64, {UINT64_MAX});
  EXPECT_EQ(values<std::string>(run_op("Cast", 13, {max}, {to(DataType::kString)}))[0],
            "18446744073709551615");
  Tensor smax = vec<std::string>(DataType::kString, {"18446744073709551615"});
  EXPECT_GT(values<float>(run_op("Cast", 13, {smax}, {to(DataType::kFloat)}))[0], 1e19f);
}

TEST(TensorKernelsCast, CastLikeUsesTheSecondInputsType) {
  Tensor like = vec<double>(DataType::kDouble, {0});
  Tensor y = run_op("CastLike", 15, {ints({3, -4}), like});
  EXPECT_EQ(y.dtype(), DataType::kDouble);
  EXPECT_EQ(values<double>(y), (std::vector<double>{3, -4}));
}

TEST(TensorKernelsCast, BitCastSharesBitsAndChecksWidths) {
  Tensor y = run_op("BitCast", 26, {floats({1.0f})}, {to(DataType::kInt32)});
  EXPECT_EQ(values<int32_t>(y)[0], 0x3f800000);
  EXPECT_FALSE(error_of("BitCast", 26, {floats({1.0f})}, {to(DataType::kInt64)}).empty());
}

// ---- shape ops ----

TEST(TensorKernelsShape, ReshapeResolvesAndRejects) {
  Tensor x = make<float>(DataType::kFloat, {2, 3, 4}, std::vector<float>(24, 1));
  EXPECT_EQ(run_op("Reshape", 14, {x, ints({0, -1})}).shape(), (rt::Shape{2, 12}));
  EXPECT_NE(error_of("Reshape", 14, {x, ints({-1, -1})}).find("more than one -1"), std::string::npos);
  EXPECT_FALSE(error_of("Reshape", 14, {x, ints({5, -1})}).empty());
  EXPECT_FALSE(error_of("Reshape", 14, {x, ints({7, 2})}).empty());
  Tensor empty = make<float>(DataType::kFloat, {0, 3}, {});
  EXPECT_EQ(run_op("Reshape", 14, {empty, ints({3, 0})}, {Attribute::of_int("allowzero", 1)}).shape(),
            (rt::Shape{3, 0}));
}

TEST(TensorKernelsShape, SqueezeAndUnsqueezeBothForms) {
  Tensor x = make<float>(DataType::kFloat, {1, 3, 1}, {1, 2, 3});
  EXPECT_EQ(run_op("Squeeze", 11, {x}, {Attribute::of_ints("axes", {-1})}).shape(), (rt::Shape{1, 3}));
  EXPECT_EQ(run_op("Squeeze", 13, {x}).shape(), (rt::Shape{3}));
  EXPECT_NE(error_of("Squeeze", 13, {x, ints({1})}).find("not 1"), std::string::npos);
  EXPECT_EQ(run_op("Unsqueeze", 11, {x}, {Attribute::of_ints("axes", {0, 4})}).shape(),
            (rt::Shape{1, 1, 3, 1, 1}));
  EXPECT_FALSE(error_of("Unsqueeze", 13, {x, ints({1, 1})}).empty());
  EXPECT_FALSE(error_of("Unsqueeze", 13, {x, ints({5})}).empty());
}

TEST(TensorKernelsShape, ShapeAndSize) {
  Tensor x = make<float>(DataType::kFloat, {2, 3, 4}, std::vector<float>(24, 0));
  EXPECT_EQ(values<int64_t>(run_op("Shape", 15, {x}, {Attribute::of_int("start", -2)})),
            (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(values<int64_t>(run_op("Size", 13, {x}))[0], 24);
}

// ---- data movement on packed and string tensors ----

TEST(TensorKernelsMove, TransposeOfInt4) {
  Tensor x = packed4(DataType::kInt4, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y = run_op("Transpose", 21, {x});
  EXPECT_EQ(y.shape(), (rt::Shape{3, 2}));
  EXPECT_EQ(codes4(y), (std::vector<uint8_t>{1, 4, 2, 5, 3, 6}));
}

TEST(TensorKernelsMove, ConcatAndSplitStrings) {
  Tensor a = make<std::string>(DataType::kString, {1, 2}, {"a", "b"});
  Tensor b = make<std::string>(DataType::kString, {1, 1}, {"c"});
  Tensor y = run_op("Concat", 13, {a, b}, {Attribute::of_int("axis", -1)});
  EXPECT_EQ(values<std::string>(y), (std::vector<std::string>{"a", "b", "c"}));
  auto parts =
      run_node("Split", 18, {y}, {Attribute::of_int("axis", 1), Attribute::of_int("num_outputs", 2)}, 2);
  EXPECT_EQ(values<std::string>(parts[0]), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(values<std::string>(parts[1]), (std::vector<std::string>{"c"}));
  EXPECT_FALSE(error_of("Concat", 13, {a, floats({1})}, {Attribute::of_int("axis", 0)}).empty());
  EXPECT_FALSE(error_of("Split", 13, {y, ints({1, 1})}, {Attribute::of_int("axis", 1)}, 2).empty());
}

TEST(TensorKernelsMove, GatherChecksIndices) {
  Tensor x = make<int64_t>(DataType::kInt64, {3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor idx = vec<int32_t>(DataType::kInt32, {-1, 0});
  EXPECT_EQ(values<int64_t>(run_op("Gather", 13, {x, idx})), (std::vector<int64_t>{5, 6, 1, 2}));
  EXPECT_NE(error_of("Gather", 13, {x, ints({3})}).find("out of range"), std::string::npos);
  EXPECT_NE(error_of("Gather", 13, {x, ints({-4})}).find("out of range"), std::string::npos);
  EXPECT_FALSE(error_of("GatherElements", 13, {x, make<int64_t>(DataType::kInt64, {1, 1}, {5})}).empty());
  EXPECT_FALSE(error_of("GatherND", 13, {x, make<int64_t>(DataType::kInt64, {1, 2}, {0, 2})}).empty());
}

TEST(TensorKernelsMove, GatherNDWithBatchDims) {
  Tensor x = make<float>(DataType::kFloat, {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor idx = make<int64_t>(DataType::kInt64, {2, 1, 1}, {1, 0});
  Tensor y = run_op("GatherND", 13, {x, idx}, {Attribute::of_int("batch_dims", 1)});
  EXPECT_EQ(y.shape(), (rt::Shape{2, 1, 2}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{2, 3, 4, 5}));
}

TEST(TensorKernelsMove, SliceStepsAndErrors) {
  Tensor x = vec<int32_t>(DataType::kInt32, {0, 1, 2, 3, 4, 5});
  Tensor y = run_op("Slice", 13,
                    {x, ints({-1}), ints({std::numeric_limits<int64_t>::min()}), ints({0}), ints({-2})});
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{5, 3, 1}));
  EXPECT_NE(error_of("Slice", 13, {x, ints({0}), ints({3}), ints({0}), ints({0})}).find("0"),
            std::string::npos);
  EXPECT_FALSE(error_of("Slice", 13, {x, ints({0}), ints({3}), ints({1})}).empty());
}

TEST(TensorKernelsMove, PadModesOnIntegers) {
  Tensor x = vec<int16_t>(DataType::kInt16, {1, 2, 3});
  auto pad = [&](const char* mode) {
    return values<int16_t>(run_op("Pad", 19, {x, ints({2, 3})}, {Attribute::of_string("mode", mode)}));
  };
  EXPECT_EQ(pad("constant"), (std::vector<int16_t>{0, 0, 1, 2, 3, 0, 0, 0}));
  EXPECT_EQ(pad("reflect"), (std::vector<int16_t>{3, 2, 1, 2, 3, 2, 1, 2}));
  EXPECT_EQ(pad("edge"), (std::vector<int16_t>{1, 1, 1, 2, 3, 3, 3, 3}));
  EXPECT_EQ(pad("wrap"), (std::vector<int16_t>{2, 3, 1, 2, 3, 1, 2, 3}));
  Tensor cv = make<int16_t>(DataType::kInt16, {}, {9});
  EXPECT_EQ(values<int16_t>(run_op("Pad", 18, {x, ints({1, -1}), cv})), (std::vector<int16_t>{9, 1, 2}));
  EXPECT_FALSE(error_of("Pad", 18, {x, ints({0, -4})}).empty());
}

TEST(TensorKernelsMove, TileExpandAndErrors) {
  Tensor x = make<uint8_t>(DataType::kUint8, {1, 2}, {1, 2});
  EXPECT_EQ(values<uint8_t>(run_op("Tile", 13, {x, ints({2, 2})})),
            (std::vector<uint8_t>{1, 2, 1, 2, 1, 2, 1, 2}));
  EXPECT_FALSE(error_of("Tile", 13, {x, ints({1, -1})}).empty());
  EXPECT_EQ(run_op("Expand", 13, {x, ints({3, 1, 1})}).shape(), (rt::Shape{3, 1, 2}));
  EXPECT_FALSE(error_of("Expand", 13, {x, ints({3})}).empty());
}

TEST(TensorKernelsMove, DepthSpaceRoundTripsInBothModes) {
  std::vector<float> v(2 * 8 * 2 * 2);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  Tensor x = make<float>(DataType::kFloat, {2, 8, 2, 2}, v);
  for (const char* mode : {"DCR", "CRD"}) {
    std::vector<Attribute> attrs = {Attribute::of_int("blocksize", 2), Attribute::of_string("mode", mode)};
    Tensor d = run_op("DepthToSpace", 28, {x}, attrs);
    EXPECT_EQ(d.shape(), (rt::Shape{2, 2, 4, 4}));
    Tensor back = run_op("SpaceToDepth", 28, {d}, attrs);
    EXPECT_EQ(values<float>(back), v) << mode;
  }
  EXPECT_FALSE(error_of("DepthToSpace", 13, {x}, {Attribute::of_int("blocksize", 3)}).empty());
  EXPECT_FALSE(error_of("SpaceToDepth", 13, {x}, {Attribute::of_int("blocksize", 0)}).empty());
}

TEST(TensorKernelsMove, CropPadCompressReverseFlatten) {
  Tensor x = make<int8_t>(DataType::kInt8, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor c = run_op("CenterCropPad", 18, {x, ints({4, 1})});
  EXPECT_EQ(c.shape(), (rt::Shape{4, 1}));
  EXPECT_EQ(values<int8_t>(c), (std::vector<int8_t>{0, 2, 5, 0}));
  Tensor cond = vec<bool>(DataType::kBool, {false, true});
  EXPECT_EQ(values<int8_t>(run_op("Compress", 11, {x, cond}, {Attribute::of_int("axis", 0)})),
            (std::vector<int8_t>{4, 5, 6}));
  Tensor far = vec<bool>(DataType::kBool, {false, false, true});
  EXPECT_FALSE(error_of("Compress", 11, {x, far}, {Attribute::of_int("axis", 0)}).empty());
  Tensor r = run_op("ReverseSequence", 10, {x, ints({3, 1})},
                    {Attribute::of_int("batch_axis", 0), Attribute::of_int("time_axis", 1)});
  EXPECT_EQ(values<int8_t>(r), (std::vector<int8_t>{3, 2, 1, 4, 5, 6}));
  EXPECT_FALSE(error_of("ReverseSequence", 10, {x, ints({4, 1})},
                        {Attribute::of_int("batch_axis", 0), Attribute::of_int("time_axis", 1)})
                   .empty());
  EXPECT_EQ(run_op("Flatten", 13, {x}, {Attribute::of_int("axis", 0)}).shape(), (rt::Shape{1, 6}));
  EXPECT_FALSE(error_of("Flatten", 13, {x}, {Attribute::of_int("axis", 3)}).empty());
}

TEST(TensorKernelsMove, Float8AndBfloat16ThroughTransposeAndSlice) {
  Tensor x = make<uint8_t>(DataType::kFloat8E4M3FN, {2, 2}, {0x38, 0x40, 0x48, 0x50});
  Tensor t = run_op("Transpose", 21, {x});
  EXPECT_EQ(t.dtype(), DataType::kFloat8E4M3FN);
  EXPECT_EQ(values<uint8_t>(t), (std::vector<uint8_t>{0x38, 0x48, 0x40, 0x50}));
  Tensor b = vec<rt::BFloat16>(DataType::kBFloat16, {1.0f, 2.0f, 3.0f});
  Tensor s = run_op("Slice", 13, {b, ints({1}), ints({3})});
  EXPECT_EQ(static_cast<float>(values<rt::BFloat16>(s)[1]), 3.0f);
}

// ---- scatter ----

TEST(TensorKernelsScatter, ElementsReductionAndRange) {
  Tensor data = vec<int32_t>(DataType::kInt32, {1, 2, 3});
  Tensor idx = ints({0, 0, -1});
  Tensor upd = vec<int32_t>(DataType::kInt32, {10, 20, 30});
  EXPECT_EQ(values<int32_t>(
                run_op("ScatterElements", 18, {data, idx, upd}, {Attribute::of_string("reduction", "add")})),
            (std::vector<int32_t>{31, 2, 33}));
  EXPECT_EQ(values<int32_t>(run_op("ScatterElements", 18, {data, idx, upd})),
            (std::vector<int32_t>{20, 2, 30}));
  EXPECT_NE(error_of("ScatterElements", 18, {data, ints({0, 3, 0}), upd}).find("out of range"),
            std::string::npos);
  EXPECT_FALSE(
      error_of("ScatterElements", 18, {data, idx, upd}, {Attribute::of_string("reduction", "avg")}).empty());
}

TEST(TensorKernelsScatter, NDAndTensorScatter) {
  Tensor data = make<float>(DataType::kFloat, {2, 2}, {1, 2, 3, 4});
  Tensor idx = make<int64_t>(DataType::kInt64, {1, 1}, {1});
  Tensor upd = make<float>(DataType::kFloat, {1, 2}, {5, 6});
  EXPECT_EQ(
      values<float>(run_op("ScatterND", 18, {data, idx, upd}, {Attribute::of_string("reduction", "mul")})),
      (std::vector<float>{1, 2, 15, 24}));
  EXPECT_FALSE(error_of("ScatterND", 18, {data, make<int64_t>(DataType::kInt64, {1, 1}, {2}), upd}).empty());
  Tensor cache = make<float>(DataType::kFloat, {1, 3, 1}, {0, 0, 0});
  Tensor u = make<float>(DataType::kFloat, {1, 2, 1}, {7, 8});
  EXPECT_EQ(values<float>(run_op("TensorScatter", 24, {cache, u, ints({1})})), (std::vector<float>{0, 7, 8}));
  EXPECT_FALSE(error_of("TensorScatter", 24, {cache, u, ints({2})}).empty());
  EXPECT_EQ(values<float>(run_op("TensorScatter", 24, {cache, u, ints({2})},
                                 {Attribute::of_string("mode", "circular")})),
            (std::vector<float>{8, 0, 7}));
}

// ---- creation ----

TEST(TensorKernelsCreate, RangeAndConstantOfShape) {
  Tensor s = make<int64_t>(DataType::kInt64, {}, {10});
  Tensor l = make<int64_t>(DataType::kInt64, {}, {1});
  Tensor d = make<int64_t>(DataType::kInt64, {}, {-4});
  EXPECT_EQ(values<int64_t>(run_op("Range", 11, {s, l, d})), (std::vector<int64_t>{10, 6, 2}));
  Tensor zero = make<int64_t>(DataType::kInt64, {}, {0});
  EXPECT_NE(error_of("Range", 11, {s, l, zero}).find("delta"), std::string::npos);
  ir::Tensor v = ir::make_tensor<int32_t>("v", DataType::kInt32, {1}, {7});
  Tensor y = run_op("ConstantOfShape", 21, {ints({2, 2})}, {Attribute::of_tensor("value", v)});
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{7, 7, 7, 7}));
  EXPECT_FALSE(error_of("ConstantOfShape", 21, {ints({2, -1})}).empty());
}

TEST(TensorKernelsCreate, ConstantDensifiesSparseValue) {
  Attribute a;
  a.name = "sparse_value";
  a.type = ir::AttrType::kSparseTensor;
  ir::SparseTensor sp;
  sp.values = ir::make_tensor<float>("values", DataType::kFloat, {2}, {5, 6});
  sp.indices = ir::make_tensor<int64_t>("indices", DataType::kInt64, {2}, {1, 3});
  sp.dims = {2, 2};
  a.sparse_tensors.push_back(sp);
  EXPECT_EQ(values<float>(run_op("Constant", 13, {}, {a})), (std::vector<float>{0, 5, 0, 6}));
  EXPECT_EQ(values<int64_t>(run_op("Constant", 13, {}, {Attribute::of_ints("value_ints", {4, 5})})),
            (std::vector<int64_t>{4, 5}));
}

TEST(TensorKernelsCreate, EyeLikeOneHotTriluNonZero) {
  Tensor x = make<int32_t>(DataType::kInt32, {2, 3}, std::vector<int32_t>(6, 5));
  EXPECT_EQ(values<int32_t>(run_op("EyeLike", 22, {x}, {Attribute::of_int("k", 1)})),
            (std::vector<int32_t>{0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(values<int32_t>(run_op("Trilu", 14, {x, make<int64_t>(DataType::kInt64, {}, {0})},
                                   {Attribute::of_int("upper", 0)})),
            (std::vector<int32_t>{5, 0, 0, 5, 5, 0}));
  Tensor oh =
      run_op("OneHot", 11, {ints({1, -1, 5}), make<int64_t>(DataType::kInt64, {}, {3}), ints({0, 1})});
  EXPECT_EQ(values<int64_t>(oh), (std::vector<int64_t>{0, 1, 0, 0, 0, 1, 0, 0, 0}));
  EXPECT_FALSE(
      error_of("OneHot", 11, {ints({1}), make<int64_t>(DataType::kInt64, {}, {0}), ints({0, 1})}).empty());
  Tensor nz = run_op("NonZero", 13, {make<float>(DataType::kFloat, {}, {3})});
  EXPECT_EQ(nz.shape(), (rt::Shape{1, 1}));
}

TEST(TensorKernelsCreate, UniqueOfStrings) {
  Tensor x = vec<std::string>(DataType::kString, {"b", "a", "b", "c"});
  auto outs = run_node("Unique", 11, {x}, {}, 4);
  EXPECT_EQ(values<std::string>(outs[0]), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(values<int64_t>(outs[1]), (std::vector<int64_t>{1, 0, 3}));
  EXPECT_EQ(values<int64_t>(outs[2]), (std::vector<int64_t>{1, 0, 1, 2}));
  EXPECT_EQ(values<int64_t>(outs[3]), (std::vector<int64_t>{1, 2, 1}));
}

TEST(TensorKernelsCreate, UniqueOfFloat8AndStringToBool) {
  // 0x38 = 1, 0x40 = 2, 0xB8 = -1 in E4M3FN: sorted numerically, not by code.
  Tensor x = make<uint8_t>(DataType::kFloat8E4M3FN, {4}, {0x40, 0x38, 0xB8, 0x40});
  auto outs = run_node("Unique", 28, {x}, {}, 4);
  EXPECT_EQ(values<uint8_t>(outs[0]), (std::vector<uint8_t>{0xB8, 0x38, 0x40}));
  EXPECT_EQ(values<int64_t>(outs[3]), (std::vector<int64_t>{1, 1, 2}));
  Tensor s = vec<std::string>(DataType::kString, {"True", "false", "0", "2"});
  auto b = values<bool>(run_op("Cast", 19, {s}, {to(DataType::kBool)}));
  EXPECT_EQ(b, (std::vector<bool>{true, false, false, true}));
}

}  // namespace
}  // namespace tessera
