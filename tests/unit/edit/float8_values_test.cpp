// float8 (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ) and float4e2m1 tensors as the studio reads and writes them:
// every code against a reference table built here from the formats' definitions (the ONNX spec's
// "Float stored in 8 bits" and "4 bit floating point" pages: sign, exponent, mantissa, bias and the
// codes set aside for NaN and infinity), rounding to nearest even between neighbours, saturation as
// Cast's default (saturate=1) and the NaN rules.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "edit_test_util.h"
#include "ir/commands/ir_json.h"

namespace tessera::ir::test {
namespace {

struct Format {
  DataType dtype;
  int exp_bits, mant_bits, bias;
  bool ieee_specials;  // E5M2: exponent all ones is infinity (mantissa 0) or NaN, as in IEEE 754
  bool uz;             // FNUZ: the negative-zero code 0x80 is the only NaN; no negative zero, no infinity
  bool fn;             // E4M3FN: S.1111.111 is NaN, no infinity
  double max, min_subnormal;  // from the spec's tables
};

// The spec's tables: largest finite value and smallest subnormal of each type.
const Format kFormats[] = {
    {DataType::kFloat8E4M3FN, 4, 3, 7, false, false, true, 448.0, 0x1p-9},
    {DataType::kFloat8E4M3FNUZ, 4, 3, 8, false, true, false, 240.0, 0x1p-10},
    {DataType::kFloat8E5M2, 5, 2, 15, true, false, false, 57344.0, 0x1p-16},
    {DataType::kFloat8E5M2FNUZ, 5, 2, 16, false, true, false, 57344.0, 0x1p-17},
    {DataType::kFloat4E2M1, 2, 1, 1, false, false, false, 6.0, 0.5},
};

int code_bits(const Format& f) {
  return 1 + f.exp_bits + f.mant_bits;
}

// The value of `code` by the definition: (-1)^S * 2^(E - bias) * 1.M for E > 0, 2^(1 - bias) * 0.M
// for E = 0, with the special codes of each type.
double reference(const Format& f, unsigned code) {
  const unsigned sign = code >> (f.exp_bits + f.mant_bits);
  const unsigned e = (code >> f.mant_bits) & ((1u << f.exp_bits) - 1);
  const unsigned m = code & ((1u << f.mant_bits) - 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (f.uz && code == 0x80) return nan;
  if (f.fn && e == (1u << f.exp_bits) - 1 && m == (1u << f.mant_bits) - 1) return nan;
  if (f.ieee_specials && e == (1u << f.exp_bits) - 1)
    return m ? nan : (sign ? -1 : 1) * std::numeric_limits<double>::infinity();
  double frac = static_cast<double>(m) / (1u << f.mant_bits);
  double v = e == 0 ? std::ldexp(frac, 1 - f.bias) : std::ldexp(1 + frac, static_cast<int>(e) - f.bias);
  return sign ? -v : v;
}

// A tensor holding every code of the type once, in order (float4 packed two to a byte, low first).
Tensor all_codes(const Format& f) {
  int n = 1 << code_bits(f);
  std::string bytes;
  if (code_bits(f) == 4) {
    for (int c = 0; c < n; c += 2) bytes.push_back(static_cast<char>(c | (c + 1) << 4));
  } else {
    for (int c = 0; c < n; ++c) bytes.push_back(static_cast<char>(c));
  }
  Tensor t;
  t.name = "codes";
  t.dtype = f.dtype;
  t.dims = {n};
  t.data = make_buffer(std::move(bytes));
  return t;
}

// The code the studio stores for `value` (a JSON number or "nan"/"inf"/"-inf").
unsigned stored(const Format& f, const json& value) {
  Tensor t = tensor_from_json(
      json{{"name", "t"}, {"dtype", std::string(dtype_name(f.dtype))}, {"shape", {1}}, {"values", {value}}});
  auto b = static_cast<unsigned>(t.bytes()[0]);
  return code_bits(f) == 4 ? b & 0x0f : b;
}

std::string name(const Format& f) {
  return std::string(dtype_name(f.dtype));
}

TEST(Float8Values, EveryCodeReadsAsTheReferenceTableSays) {
  for (const Format& f : kFormats) {
    json got = tensor_values_json(all_codes(f), SIZE_MAX);
    ASSERT_EQ(got.size(), 1u << code_bits(f)) << name(f);
    int nans = 0;
    for (unsigned c = 0; c < got.size(); ++c) {
      double want = reference(f, c);
      std::string where = fmt::format("{} code 0x{:02x}", name(f), c);
      if (std::isnan(want)) {
        EXPECT_EQ(got[c], "nan") << where;
        ++nans;
      } else if (std::isinf(want)) {
        EXPECT_EQ(got[c], want > 0 ? "inf" : "-inf") << where;
      } else {
        ASSERT_TRUE(got[c].is_number()) << where << ": " << got[c].dump();
        EXPECT_EQ(got[c].get<double>(), want) << where;
        EXPECT_EQ(std::signbit(got[c].get<double>()), std::signbit(want)) << where;
      }
    }
    // NaN codes per type: E4M3FN 2 (S.1111.111), FNUZ 1 (0x80), E5M2 6 (S.11111.{01,10,11}), E2M1 none.
    std::map<DataType, int> nan_codes{{DataType::kFloat8E4M3FN, 2},
                                      {DataType::kFloat8E4M3FNUZ, 1},
                                      {DataType::kFloat8E5M2, 6},
                                      {DataType::kFloat8E5M2FNUZ, 1},
                                      {DataType::kFloat4E2M1, 0}};
    EXPECT_EQ(nans, nan_codes[f.dtype]) << name(f);
  }
}

TEST(Float8Values, TheSpecsLargestAndSmallestValuesAreWhereTheTablesSay) {
  for (const Format& f : kFormats) {
    double largest = 0, smallest = INFINITY;
    for (unsigned c = 0; c < (1u << code_bits(f)); ++c) {
      double v = reference(f, c);
      if (!std::isfinite(v) || v <= 0) continue;
      largest = std::max(largest, v);
      smallest = std::min(smallest, v);
    }
    EXPECT_EQ(largest, f.max) << name(f);
    EXPECT_EQ(smallest, f.min_subnormal) << name(f);
  }
}

// Every value the type holds is written back as its own code: what the tensor editor relies on when it
// loads a tensor whole and applies it whole.
TEST(Float8Values, EveryValueWritesBackAsItsCode) {
  for (const Format& f : kFormats) {
    for (unsigned c = 0; c < (1u << code_bits(f)); ++c) {
      double v = reference(f, c);
      if (std::isnan(v)) continue;
      json value = std::isinf(v) ? json(v > 0 ? "inf" : "-inf") : json(v);
      EXPECT_EQ(stored(f, value), c) << name(f) << " value " << v;
    }
  }
}

// Between two neighbouring values, a value rounds to the nearer; the midpoint to the one whose code is
// even (its last mantissa bit 0); negative values alike.
TEST(Float8Values, ValuesBetweenNeighboursRoundToNearestEven) {
  for (const Format& f : kFormats) {
    std::vector<std::pair<double, unsigned>> finite;  // positive finite values and their codes
    for (unsigned c = 0; c < (1u << code_bits(f)); ++c) {
      double v = reference(f, c);
      if (std::isfinite(v) && v >= 0 && !std::signbit(v)) finite.push_back({v, c});
    }
    std::sort(finite.begin(), finite.end());
    const unsigned neg = 1u << (code_bits(f) - 1);
    for (size_t i = 0; i + 1 < finite.size(); ++i) {
      auto [a, ca] = finite[i];
      auto [b, cb] = finite[i + 1];
      double mid = (a + b) / 2, step = (b - a) / 8;
      unsigned even = ca % 2 == 0 ? ca : cb;
      std::string where = fmt::format("{} between {} and {}", name(f), a, b);
      EXPECT_EQ(stored(f, mid), even) << where;
      EXPECT_EQ(stored(f, mid - step), ca) << where;
      EXPECT_EQ(stored(f, mid + step), cb) << where;
      // FNUZ has no negative zero: what rounds to zero from below is +0.
      unsigned neg_a = a == 0 && f.uz ? 0 : ca | neg;
      EXPECT_EQ(stored(f, -(mid - step)), neg_a) << where << " (negative)";
      EXPECT_EQ(stored(f, -(mid + step)), cb | neg) << where << " (negative)";
    }
  }
}

// Beyond the largest finite value, Cast's default (saturate=1) gives the largest finite value of the
// sign; an infinity stays one where the type has it (E5M2) and saturates elsewhere.
TEST(Float8Values, ValuesBeyondTheRangeSaturate) {
  for (const Format& f : kFormats) {
    unsigned max_code = stored(f, f.max), neg = 1u << (code_bits(f) - 1);
    ASSERT_EQ(reference(f, max_code), f.max) << name(f);
    for (double x : {f.max * 1.0625, f.max * 1.5, f.max * 4, 1e30}) {
      EXPECT_EQ(stored(f, x), max_code) << name(f) << " " << x;
      EXPECT_EQ(stored(f, -x), max_code | neg) << name(f) << " " << -x;
    }
    bool inf = f.ieee_specials;
    EXPECT_EQ(reference(f, stored(f, "inf")), inf ? INFINITY : f.max) << name(f);
    EXPECT_EQ(reference(f, stored(f, "-inf")), inf ? -INFINITY : -f.max) << name(f);
  }
}

TEST(Float8Values, NanAndZerosFollowEachTypesRules) {
  for (const Format& f : kFormats) {
    if (f.dtype == DataType::kFloat4E2M1) continue;
    EXPECT_TRUE(std::isnan(reference(f, stored(f, "nan")))) << name(f);
  }
  EXPECT_EQ(stored(kFormats[0], -0.0), 0x80u);  // E4M3FN has -0
  EXPECT_EQ(stored(kFormats[1], -0.0), 0x00u);  // FNUZ: +0 (0x80 is NaN)
  EXPECT_EQ(stored(kFormats[3], -1e-30), 0x00u);
  EXPECT_EQ(stored(kFormats[2], -1e-30), 0x80u);  // E5M2: -0
  // float4e2m1 has no NaN: refused, naming the element.
  EXPECT_THROW(
      {
        try {
          tensor_from_json(
              json{{"name", "q"}, {"dtype", "float4e2m1"}, {"shape", {2}}, {"values", {1, "nan"}}});
        } catch (const JsonError& e) {
          EXPECT_STREQ(e.what(), "tensor 'q': 'values'[1] is NaN; float4e2m1 has no NaN");
          throw;
        }
      },
      JsonError);
}

// Generated values as the seed allows: zeros for every type; standard normal values only for floating
// point types of two bytes or more, random integers only for integer types of a byte or more.
TEST(Float8Values, OnlyZerosAreGeneratedForOneByteFloatsAndFourBitTypes) {
  for (const char* dtype :
       {"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "float4e2m1", "int4", "uint4"}) {
    Tensor z = tensor_from_json(
        json{{"name", "z"}, {"dtype", dtype}, {"shape", {3, 5}}, {"fill", {{"kind", "zeros"}}}});
    EXPECT_EQ(z.bytes().size(), static_cast<size_t>(*z.expected_bytes())) << dtype;
    EXPECT_TRUE(
        std::all_of(z.bytes().begin(), z.bytes().end(), [](std::byte b) { return b == std::byte{0}; }));
    for (const char* kind : {"normal", "uniform_int_pos"}) {
      try {
        tensor_from_json(json{{"name", "z"}, {"dtype", dtype}, {"shape", {3}}, {"fill", {{"kind", kind}}}});
        ADD_FAILURE() << dtype << " filled with " << kind;
      } catch (const JsonError& e) {
        EXPECT_NE(
            std::string(e.what()).find(fmt::format("'{}' cannot fill a tensor of type {}", kind, dtype)),
            std::string::npos)
            << e.what();
      }
    }
  }
}

// Edited in place like any initializer: a float8 run and a float4 run across a byte's two nibbles.
TEST(Float8Values, PartsOfAFloat8OrFloat4InitializerAreSetAndUndone) {
  Model m = small_model();
  m.graph.initializers.push_back(all_codes(kFormats[2]));  // E5M2, 256 codes
  Tensor f4 = all_codes(kFormats[4]);
  f4.name = "f4";
  m.graph.initializers.push_back(f4);
  Tensor run = tensor_from_json(
      json{{"name", "codes"}, {"dtype", "float8e5m2"}, {"shape", {2}}, {"values", {1.5, "-inf"}}});
  SetInitializerValues e5(GraphPath::main_graph(), "codes", 10, run);
  expect_round_trip(m, e5, [](const Model& after) {
    json v = tensor_values_json(*after.graph.find_initializer("codes"), 3, 9);
    EXPECT_EQ(v, json({reference(kFormats[2], 9), 1.5, "-inf"}));
  });
  Tensor half =
      tensor_from_json(json{{"name", "f4"}, {"dtype", "float4e2m1"}, {"shape", {2}}, {"values", {-6, 0.25}}});
  SetInitializerValues e2(GraphPath::main_graph(), "f4", 3, half);
  expect_round_trip(m, e2, [](const Model& after) {
    // 0.25 is the midpoint of 0 and 0.5: to even, 0.
    json v = tensor_values_json(*after.graph.find_initializer("f4"), 4, 2);
    EXPECT_EQ(v, json({1.0, -6.0, 0.0, 3.0}));
  });
}

}  // namespace
}  // namespace tessera::ir::test
