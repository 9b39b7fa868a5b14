// float8e8m0 tensors as the studio reads and writes them: every code against a reference table built here
// from the format's definition (ONNX's float8e8m0, the OCP MX scale type: eight exponent bits, bias 127,
// no sign, no mantissa, so no zero; 0xFF is NaN), and typed values rounded as ONNX's Cast to it does with
// its defaults (round_mode "up", saturate=1). Zero and negative values, which the type cannot hold, are
// refused with a message naming the element.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "edit_test_util.h"
#include "ir/commands/ir_json.h"

namespace tessera::ir::test {
namespace {

// The value of `code` by the definition: 2^(code - 127), NaN for 0xFF.
double reference(unsigned code) {
  return code == 0xFF ? std::numeric_limits<double>::quiet_NaN()
                      : std::ldexp(1.0, static_cast<int>(code) - 127);
}

Tensor all_codes() {
  std::string bytes;
  for (int c = 0; c < 256; ++c) bytes.push_back(static_cast<char>(c));
  Tensor t;
  t.name = "codes";
  t.dtype = DataType::kFloat8E8M0;
  t.dims = {256};
  t.data = make_buffer(std::move(bytes));
  return t;
}

// The code the studio stores for `value` (a JSON number or "nan"/"inf").
unsigned stored(const json& value) {
  Tensor t =
      tensor_from_json(json{{"name", "t"}, {"dtype", "float8e8m0"}, {"shape", {1}}, {"values", {value}}});
  return static_cast<unsigned>(t.bytes()[0]);
}

std::string refusal(const json& values) {
  try {
    tensor_from_json(
        json{{"name", "s"}, {"dtype", "float8e8m0"}, {"shape", {values.size()}}, {"values", values}});
  } catch (const JsonError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(E8M0Values, EveryCodeReadsAsTheReferenceTableSays) {
  json got = tensor_values_json(all_codes(), SIZE_MAX);
  ASSERT_EQ(got.size(), 256u);
  for (unsigned c = 0; c < 256; ++c) {
    std::string where = fmt::format("code 0x{:02x}", c);
    if (c == 0xFF) {
      EXPECT_EQ(got[c], "nan") << where;
      continue;
    }
    ASSERT_TRUE(got[c].is_number()) << where << ": " << got[c].dump();
    EXPECT_EQ(got[c].get<double>(), reference(c)) << where;
  }
  // The spec's range: 2^-127 (code 0, a float subnormal) to 2^127 (0xFE).
  EXPECT_EQ(got[0].get<double>(), 0x1p-127);
  EXPECT_EQ(got[0xFE].get<double>(), 0x1p127);
  EXPECT_EQ(got[127].get<double>(), 1.0);
}

// Every value the type holds is written back as its own code (the editor applies what it loaded).
TEST(E8M0Values, EveryValueWritesBackAsItsCode) {
  for (unsigned c = 0; c < 0xFF; ++c) EXPECT_EQ(stored(reference(c)), c) << "value 2^" << int(c) - 127;
  EXPECT_EQ(stored("nan"), 0xFFu);
  EXPECT_EQ(stored("NaN"), 0xFFu);
}

// round_mode "up": a value between two powers of two is stored as the larger, however close to the
// smaller it lies.
TEST(E8M0Values, ValuesBetweenPowersOfTwoRoundUp) {
  for (unsigned c = 0; c + 1 < 0xFF; ++c) {
    double a = reference(c), b = reference(c + 1);
    std::string where = fmt::format("between 2^{} and 2^{}", int(c) - 127, int(c) - 126);
    EXPECT_EQ(stored(std::nextafter(a, b)), c + 1) << where;
    EXPECT_EQ(stored((a + b) / 2), c + 1) << where;
    EXPECT_EQ(stored(std::nextafter(b, a)), c + 1) << where;
  }
  EXPECT_EQ(stored(3), 129u);
  EXPECT_EQ(stored(0.3), 126u);  // 0.25 < 0.3 <= 0.5
  EXPECT_EQ(stored(1.0000001), 128u);
}

// saturate=1: past 2^127 (infinity included) the largest value; below 2^-127 "up" gives the smallest.
TEST(E8M0Values, ValuesBeyondTheRangeSaturate) {
  for (double x : {0x1p127 * 1.0001, 0x1p128, 1e300}) EXPECT_EQ(stored(x), 0xFEu) << x;
  EXPECT_EQ(stored("inf"), 0xFEu);
  for (double x : {0x1p-128, 1e-40, 1e-300, 5e-324}) EXPECT_EQ(stored(x), 0u) << x;
}

TEST(E8M0Values, ZeroAndNegativeValuesAreRefusedNamingTheElement) {
  EXPECT_EQ(
      refusal({1, 0}),
      "tensor 's': 'values'[1] is 0; float8e8m0 has no zero (its smallest value is 2^-127, about 5.9e-39)");
  EXPECT_EQ(
      refusal({-2}),
      "tensor 's': 'values'[0] (-2) is negative; float8e8m0 has no sign (its values are the powers of two "
      "2^-127 to 2^127)");
  EXPECT_NE(refusal({2, -0.0}).find("'values'[1] (-0) is negative"), std::string::npos);
  EXPECT_NE(refusal({"-inf"}).find("is negative"), std::string::npos);
  EXPECT_NE(refusal({"big"}).find("'values'[0] must be a number"), std::string::npos);
}

// No generated values: zeros are not in the type, the seed's random fills are for other types.
TEST(E8M0Values, NothingIsGenerated) {
  for (const char* kind : {"zeros", "normal", "uniform_int_pos"}) {
    try {
      tensor_from_json(
          json{{"name", "z"}, {"dtype", "float8e8m0"}, {"shape", {3}}, {"fill", {{"kind", kind}}}});
      ADD_FAILURE() << "filled with " << kind;
    } catch (const JsonError& e) {
      EXPECT_NE(std::string(e.what()).find("float8e8m0 has no zero and no generator"), std::string::npos)
          << e.what();
    }
  }
}

// Edited in place like any initializer, and undone; a preview carries the values as numbers.
TEST(E8M0Values, PartsOfAnE8M0InitializerAreSetAndUndone) {
  Model m = small_model();
  m.graph.initializers.push_back(all_codes());
  Tensor run = tensor_from_json(
      json{{"name", "codes"}, {"dtype", "float8e8m0"}, {"shape", {3}}, {"values", {3, "nan", 0.5}}});
  SetInitializerValues e(GraphPath::main_graph(), "codes", 200, run);
  expect_round_trip(m, e, [](const Model& after) {
    json v = tensor_values_json(*after.graph.find_initializer("codes"), 4, 199);
    EXPECT_EQ(v, json({reference(199), 4.0, "nan", 0.5}));
  });
  Tensor small;
  small.name = "s";
  small.dtype = DataType::kFloat8E8M0;
  small.dims = {2};
  small.data = make_buffer(std::string("\x7f\x80", 2));
  json preview = tensor_to_json(small, 64);
  EXPECT_EQ(preview["values"], json({1.0, 2.0}));
}

}  // namespace
}  // namespace tessera::ir::test
