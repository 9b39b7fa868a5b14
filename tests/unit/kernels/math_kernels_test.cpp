// Reference kernels of src/ops/math (and the com.microsoft GELU family) on what the ONNX conformance
// suite leaves out: integer wrap-around, element types the suite does not use, legacy broadcasting,
// float8 bit patterns and the error paths (division by zero, bad bounds, bad attributes).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/model.h"
#include "kernel_test_util.h"
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
using rt::BFloat16;
using rt::Float16;
using rt::Tensor;

// Runs one node; an undefined Tensor among `ins` leaves that input out ("").
Tensor run_op(const std::string& op, int opset, const std::vector<Tensor>& ins,
              std::vector<Attribute> attrs = {}, const std::string& domain = {}) {
  return kernel_test::run_one_node(op, opset, ins, std::move(attrs), {.domain = domain}).at(0);
}

// The message of what running the node throws ("" when nothing is thrown).
std::string error_of(const std::string& op, int opset, const std::vector<Tensor>& ins,
                     std::vector<Attribute> attrs = {}, const std::string& domain = {}) {
  return kernel_test::run_error(op, opset, ins, std::move(attrs), {.domain = domain});
}

std::vector<bool> bools(const Tensor& t) {
  std::vector<bool> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.data<bool>()[i]);
  return out;
}
template <class H>
std::vector<float> floats(const Tensor& t) {
  std::vector<float> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(static_cast<float>(t.data<H>()[i]));
  return out;
}

constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();

// --- arithmetic and one-input math ---

TEST(MathKernelsTest, IntegerArithmeticWraps) {
  auto a = vec<int32_t>(DataType::kInt32, {kMax32, kMin32, 65536});
  auto b = vec<int32_t>(DataType::kInt32, {1, 1, 65536});
  EXPECT_EQ(values<int32_t>(run_op("Add", 14, {a, b})), (std::vector<int32_t>{kMin32, kMin32 + 1, 131072}));
  EXPECT_EQ(values<int32_t>(run_op("Sub", 14, {b, a})), (std::vector<int32_t>{kMin32 + 2, kMin32 + 1, 0}));
  EXPECT_EQ(values<int32_t>(run_op("Mul", 14, {a, b}))[2], 0);  // 2^32 wraps to 0
  auto u = vec<uint16_t>(DataType::kUint16, {65535});
  EXPECT_EQ(values<uint16_t>(run_op("Mul", 14, {u, u})), (std::vector<uint16_t>{1}));
  auto m = vec<int32_t>(DataType::kInt32, {kMin32, 7});
  auto d = vec<int32_t>(DataType::kInt32, {-1, -2});
  EXPECT_EQ(values<int32_t>(run_op("Div", 14, {m, d})), (std::vector<int32_t>{kMin32, -3}));
  auto z = vec<int32_t>(DataType::kInt32, {1, 0});
  EXPECT_NE(error_of("Div", 14, {m, z}).find("division by zero"), std::string::npos);
}

TEST(MathKernelsTest, AbsAndNegWrapAtIntMin) {
  auto x = vec<int32_t>(DataType::kInt32, {kMin32, -5, 5});
  EXPECT_EQ(values<int32_t>(run_op("Abs", 13, {x})), (std::vector<int32_t>{kMin32, 5, 5}));
  EXPECT_EQ(values<int32_t>(run_op("Neg", 13, {x})), (std::vector<int32_t>{kMin32, 5, -5}));
  auto u = vec<uint8_t>(DataType::kUint8, {0, 200});
  EXPECT_EQ(values<uint8_t>(run_op("Abs", 13, {u})), (std::vector<uint8_t>{0, 200}));
}

TEST(MathKernelsTest, RoundHalvesToEven) {
  auto x = vec<double>(DataType::kDouble, {0.5, 1.5, 2.5, -2.5, -0.4, 2.6});
  EXPECT_EQ(values<double>(run_op("Round", 11, {x})), (std::vector<double>{0, 2, 2, -2, -0.0, 3}));
  auto h = vec<Float16>(DataType::kFloat16, {Float16(3.5f), Float16(4.5f)});
  EXPECT_EQ(floats<Float16>(run_op("Round", 11, {h})), (std::vector<float>{4, 4}));
}

TEST(MathKernelsTest, SignKeepsNaNAndHandlesUnsigned) {
  auto x = vec<float>(DataType::kFloat, {-3, 0, 2, NAN});
  auto y = values<float>(run_op("Sign", 13, {x}));
  EXPECT_EQ(y[0], -1);
  EXPECT_EQ(y[1], 0);
  EXPECT_EQ(y[2], 1);
  EXPECT_TRUE(std::isnan(y[3]));
  auto u = vec<uint32_t>(DataType::kUint32, {0, 9});
  EXPECT_EQ(values<uint32_t>(run_op("Sign", 13, {u})), (std::vector<uint32_t>{0, 1}));
  auto i = vec<int64_t>(DataType::kInt64, {-7, 3});
  EXPECT_EQ(values<int64_t>(run_op("Erf", 13, {i})), (std::vector<int64_t>{-1, 0}));  // erf truncated
}

TEST(MathKernelsTest, TrigOnBFloat16) {
  auto x = vec<BFloat16>(DataType::kBFloat16, {BFloat16(0.5f), BFloat16(-1.0f)});
  auto y = floats<BFloat16>(run_op("Sin", 22, {x}));
  EXPECT_NEAR(y[0], std::sin(0.5f), 1e-2);
  EXPECT_NEAR(y[1], std::sin(-1.0f), 1e-2);
}

// --- activations ---

TEST(MathKernelsTest, ActivationsOnOtherTypes) {
  auto i8 = vec<int8_t>(DataType::kInt8, {-3, 0, 4});
  EXPECT_EQ(values<int8_t>(run_op("Relu", 14, {i8})), (std::vector<int8_t>{0, 0, 4}));
  auto d = vec<double>(DataType::kDouble, {-2, 3});
  EXPECT_EQ(values<double>(run_op("LeakyRelu", 16, {d}, {Attribute::of_float("alpha", 0.5f)})),
            (std::vector<double>{-1, 3}));
  auto big = vec<float>(DataType::kFloat, {-1000, 1000});
  EXPECT_EQ(values<float>(run_op("Sigmoid", 13, {big})), (std::vector<float>{0, 1}));
  EXPECT_EQ(values<float>(run_op("Softplus", 1, {big})), (std::vector<float>{0, 1000}));
}

TEST(MathKernelsTest, ShrinkOnIntegers) {
  auto x = vec<int32_t>(DataType::kInt32, {-5, -1, 0, 1, 5});
  auto y = run_op("Shrink", 9, {x}, {Attribute::of_float("lambd", 1.5f), Attribute::of_float("bias", 1.0f)});
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{-4, 0, 0, 0, 4}));
}

TEST(MathKernelsTest, GeluBFloat16AndBadMode) {
  auto x = vec<BFloat16>(DataType::kBFloat16, {BFloat16(1.0f), BFloat16(-1.0f)});
  auto y = floats<BFloat16>(run_op("Gelu", 20, {x}));
  EXPECT_NEAR(y[0], 0.8413f, 1e-2);
  EXPECT_NEAR(y[1], -0.1587f, 1e-2);
  auto f = vec<float>(DataType::kFloat, {1});
  EXPECT_NE(error_of("Gelu", 20, {f}, {Attribute::of_string("approximate", "fast")}).find("approximate"),
            std::string::npos);
}

// Gelu and BiasGelu of com.microsoft (FastGelu and QuickGelu have no kernel yet: see the report).
TEST(MathKernelsTest, ContribGeluAndBiasGelu) {
  auto x = make<float>(DataType::kFloat, {2, 2}, {1, -1, 0, 2});
  auto bias = vec<float>(DataType::kFloat, {0, 1});
  auto g = values<float>(run_op("Gelu", 17, {x}, {}, "com.microsoft"));
  EXPECT_NEAR(g[0], 0.841345f, 1e-5);
  auto bg = values<float>(run_op("BiasGelu", 17, {x, bias}, {}, "com.microsoft"));
  EXPECT_NEAR(bg[1], 0.0f, 1e-6);      // gelu(-1 + 1)
  EXPECT_NEAR(bg[3], 2.99595f, 1e-4);  // gelu_erf(3)
}

// --- Clip ---

TEST(MathKernelsTest, ClipBoundsAsInputs) {
  auto x = vec<int32_t>(DataType::kInt32, {-10, 0, 10});
  auto lo = Tensor::scalar<int32_t>(DataType::kInt32, -1);
  EXPECT_EQ(values<int32_t>(run_op("Clip", 13, {x, lo})), (std::vector<int32_t>{-1, 0, 10}));
  auto hi = Tensor::scalar<int32_t>(DataType::kInt32, 5);
  EXPECT_EQ(values<int32_t>(run_op("Clip", 13, {x, Tensor(), hi})), (std::vector<int32_t>{-10, 0, 5}));
  auto two = vec<int32_t>(DataType::kInt32, {1, 2});
  EXPECT_NE(error_of("Clip", 13, {x, two}).find("one element"), std::string::npos);
}

TEST(MathKernelsTest, ClipKeepsNaNAndInfinityWithoutBound) {
  auto x = vec<float>(DataType::kFloat, {NAN, INFINITY, -INFINITY});
  auto y = values<float>(run_op("Clip", 13, {x}));
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], INFINITY);
  EXPECT_EQ(y[2], -INFINITY);
  // Opset 6 bounds are attributes with defaults of +-FLT_MAX.
  auto z = values<float>(run_op("Clip", 6, {x}, {Attribute::of_float("min", -2)}));
  EXPECT_EQ(z[1], std::numeric_limits<float>::max());
  EXPECT_EQ(z[2], -2);
}

// --- Mod and Pow ---

TEST(MathKernelsTest, ModIntegers) {
  auto a = vec<int32_t>(DataType::kInt32, {-7, 7, kMin32});
  auto b = vec<int32_t>(DataType::kInt32, {3, -3, -1});
  EXPECT_EQ(values<int32_t>(run_op("Mod", 13, {a, b})), (std::vector<int32_t>{2, -2, 0}));
  EXPECT_EQ(values<int32_t>(run_op("Mod", 13, {a, b}, {Attribute::of_int("fmod", 1)})),
            (std::vector<int32_t>{-1, 1, 0}));
  auto z = vec<int32_t>(DataType::kInt32, {1, 0, 1});
  EXPECT_NE(error_of("Mod", 13, {a, z}).find("division by zero"), std::string::npos);
  EXPECT_NE(error_of("Mod", 13, {a, b}, {Attribute::of_int("fmod", 2)}).find("fmod"), std::string::npos);
}

TEST(MathKernelsTest, PowIntegerExactAndMixedTypes) {
  auto base = vec<int64_t>(DataType::kInt64, {3, 2, -1, 5});
  auto e = vec<int64_t>(DataType::kInt64, {39, 64, -3, -1});
  EXPECT_EQ(values<int64_t>(run_op("Pow", 15, {base, e})),
            (std::vector<int64_t>{4052555153018976267LL, 0, -1, 0}));
  auto zero = vec<int64_t>(DataType::kInt64, {0});
  auto neg = vec<int64_t>(DataType::kInt64, {-2});
  EXPECT_NE(error_of("Pow", 15, {zero, neg}).find("negative"), std::string::npos);
  auto f = vec<float>(DataType::kFloat, {2, 4});
  auto u8 = vec<uint8_t>(DataType::kUint8, {3, 0});
  EXPECT_EQ(values<float>(run_op("Pow", 15, {f, u8})), (std::vector<float>{8, 1}));
  auto ib = vec<int32_t>(DataType::kInt32, {9, 2});
  auto half = vec<Float16>(DataType::kFloat16, {Float16(0.5f), Float16(-1.0f)});
  EXPECT_EQ(values<int32_t>(run_op("Pow", 15, {ib, half})), (std::vector<int32_t>{3, 0}));
}

// --- comparisons and logic ---

TEST(MathKernelsTest, CompareTypes) {
  auto s1 = vec<std::string>(DataType::kString, {"a", "b"});
  auto s2 = vec<std::string>(DataType::kString, {"a", "c"});
  EXPECT_EQ(bools(run_op("Equal", 19, {s1, s2})), (std::vector<bool>{true, false}));
  auto h1 = vec<Float16>(DataType::kFloat16, {Float16(1.0f), Float16(NAN)});
  auto h2 = vec<Float16>(DataType::kFloat16, {Float16(0.5f), Float16(NAN)});
  EXPECT_EQ(bools(run_op("Greater", 13, {h1, h2})), (std::vector<bool>{true, false}));
  EXPECT_EQ(bools(run_op("Equal", 13, {h1, h2})), (std::vector<bool>{false, false}));
  auto b1 = vec<BFloat16>(DataType::kBFloat16, {BFloat16(1.0f)});
  auto b2 = vec<BFloat16>(DataType::kBFloat16, {BFloat16(2.0f)});
  EXPECT_EQ(bools(run_op("LessOrEqual", 16, {b1, b2})), (std::vector<bool>{true}));
}

TEST(MathKernelsTest, LegacyBroadcastWithAxis) {
  // Opset 1: B [3] lines up with A's dimension 0 (axis=0) of A [3, 2].
  auto a = make<int32_t>(DataType::kInt32, {3, 2}, {1, 2, 3, 4, 5, 6});
  auto b = vec<int32_t>(DataType::kInt32, {1, 4, 0});
  auto y = run_op("Equal", 1, {a, b}, {Attribute::of_int("broadcast", 1), Attribute::of_int("axis", 0)});
  EXPECT_EQ(bools(y), (std::vector<bool>{true, false, false, true, false, false}));
  auto p = make<bool>(DataType::kBool, {2, 2}, {true, true, false, true});
  auto q = vec<bool>(DataType::kBool, {true, false});
  EXPECT_EQ(bools(run_op("And", 1, {p, q}, {Attribute::of_int("broadcast", 1)})),
            (std::vector<bool>{true, false, false, false}));
  // broadcast=0 needs equal shapes.
  EXPECT_FALSE(error_of("Or", 1, {p, q}).empty());
}

TEST(MathKernelsTest, BitwiseAndShifts) {
  auto x = vec<uint8_t>(DataType::kUint8, {0xF0, 1, 0x80});
  auto s = vec<uint8_t>(DataType::kUint8, {4, 8, 7});
  EXPECT_EQ(values<uint8_t>(run_op("BitShift", 11, {x, s}, {Attribute::of_string("direction", "RIGHT")})),
            (std::vector<uint8_t>{0x0F, 0, 1}));
  EXPECT_EQ(values<uint8_t>(run_op("BitShift", 11, {x, s}, {Attribute::of_string("direction", "LEFT")})),
            (std::vector<uint8_t>{0, 0, 0}));
  auto i = vec<int64_t>(DataType::kInt64, {0, -1});
  EXPECT_EQ(values<int64_t>(run_op("BitwiseNot", 18, {i})), (std::vector<int64_t>{-1, 0}));
  EXPECT_FALSE(error_of("BitShift", 11, {x, s}, {Attribute::of_string("direction", "UP")}).empty());
}

TEST(MathKernelsTest, IsInfIsNaNFloat8AndBFloat16) {
  // float8e5m2: 0x7c +inf, 0xfc -inf, 0x7e NaN, 0x3c 1.0.
  auto e5 = vec<uint8_t>(DataType::kFloat8E5M2, {0x7c, 0xfc, 0x7e, 0x3c});
  EXPECT_EQ(bools(run_op("IsInf", 20, {e5})), (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(bools(run_op("IsInf", 20, {e5}, {Attribute::of_int("detect_negative", 0)})),
            (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(bools(run_op("IsNaN", 20, {e5})), (std::vector<bool>{false, false, true, false}));
  // float8e4m3fn: 0x7f and 0xff are NaN; there is no infinity.
  auto e4 = vec<uint8_t>(DataType::kFloat8E4M3FN, {0x7f, 0xff, 0x7e});
  EXPECT_EQ(bools(run_op("IsNaN", 20, {e4})), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(bools(run_op("IsInf", 20, {e4})), (std::vector<bool>{false, false, false}));
  auto bf = vec<BFloat16>(DataType::kBFloat16, {BFloat16(-INFINITY), BFloat16(NAN), BFloat16(1.0f)});
  EXPECT_EQ(bools(run_op("IsInf", 20, {bf})), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(bools(run_op("IsNaN", 20, {bf})), (std::vector<bool>{false, true, false}));
}

// --- variadic, PRelu, Where ---

TEST(MathKernelsTest, VariadicOps) {
  auto a = vec<float>(DataType::kFloat, {1, NAN, 3});
  auto b = make<float>(DataType::kFloat, {2, 1}, {2, 0});
  auto y = values<float>(run_op("Max", 13, {a, b}));
  ASSERT_EQ(y.size(), 6u);
  EXPECT_EQ(y[0], 2);
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_EQ(y[5], 3);
  auto i = vec<uint64_t>(DataType::kUint64, {5, 1});
  auto j = vec<uint64_t>(DataType::kUint64, {3, 9});
  EXPECT_EQ(values<uint64_t>(run_op("Min", 13, {i, j})), (std::vector<uint64_t>{3, 1}));
  // float16 sums accumulate in float and round once: 2048 + 1 + 1 is 2050, not 2048.
  auto h1 = vec<Float16>(DataType::kFloat16, {Float16(2048.0f)});
  auto h2 = vec<Float16>(DataType::kFloat16, {Float16(1.0f)});
  EXPECT_EQ(floats<Float16>(run_op("Sum", 13, {h1, h2, h2})), (std::vector<float>{2050}));
  EXPECT_EQ(values<float>(run_op("Mean", 13, {b, b, b})), (std::vector<float>{2, 0}));
  // Before opset 8 the shapes must match.
  EXPECT_NE(error_of("Max", 6, {a, b}).find("one shape"), std::string::npos);
}

TEST(MathKernelsTest, PReluSlopes) {
  auto x = make<int32_t>(DataType::kInt32, {2, 2}, {-2, 3, -4, 5});
  auto slope = vec<int32_t>(DataType::kInt32, {2, 3});
  EXPECT_EQ(values<int32_t>(run_op("PRelu", 16, {x, slope})), (std::vector<int32_t>{-4, 3, -8, 5}));
  auto bad = vec<int32_t>(DataType::kInt32, {1, 2, 3});
  EXPECT_NE(error_of("PRelu", 16, {x, bad}).find("does not broadcast"), std::string::npos);
  // Opset 6: a slope that does not broadcast numpy-style but has one value per channel (dimension 1
  // of X [1, 2, 3]) is aligned with that dimension.
  auto x3 = make<float>(DataType::kFloat, {1, 2, 3}, {-1, -1, -1, -1, 1, -1});
  auto ch = vec<float>(DataType::kFloat, {0.5f, 2});
  EXPECT_EQ(values<float>(run_op("PRelu", 6, {x3, ch})),
            (std::vector<float>{-0.5f, -0.5f, -0.5f, -2, 1, -2}));
}

TEST(MathKernelsTest, WhereOnStringsAndDoubles) {
  auto c = make<bool>(DataType::kBool, {2, 1}, {true, false});
  auto x = vec<std::string>(DataType::kString, {"x0", "x1"});
  auto y = vec<std::string>(DataType::kString, {"y0", "y1"});
  EXPECT_EQ(values<std::string>(run_op("Where", 16, {c, x, y})),
            (std::vector<std::string>{"x0", "x1", "y0", "y1"}));
  auto dx = Tensor::scalar<double>(DataType::kDouble, 1.5);
  auto dy = vec<double>(DataType::kDouble, {7, 8});
  EXPECT_EQ(values<double>(run_op("Where", 16, {c, dx, dy})), (std::vector<double>{1.5, 1.5, 7, 8}));
}

}  // namespace
}  // namespace tessera
