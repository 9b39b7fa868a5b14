// One-input elementwise math: Abs, Neg, Ceil, Floor, Round, Sign, Reciprocal, Sqrt, Exp, Log, Erf.
// Every version gives Y the type and shape of X; the versions differ only in the element types allowed.
#include "ops/infer_util.h"
#include "ops/math/elementwise.h"
#include "ops/registry.h"

using namespace tessera::ops;
using namespace tessera::ops::math;

namespace {

struct UnaryOp {
  const char* name;
  const char* doc;
  const char* in;
  const char* out;
};

// Versions 1 (float types, consumed_inputs), 6 (`v6` types) and 13 (`v13` types).
void add_1_6_13(OpRegistry& reg, const UnaryOp& op, std::vector<std::string> v6,
                std::vector<std::string> v13) {
  reg.add(with_consumed_inputs(
      unary_schema(op.name, 1, Category::kArithmetic, op.doc, types::kFloat, op.in, op.out)));
  reg.add(unary_schema(op.name, 6, Category::kArithmetic, op.doc, std::move(v6), op.in, op.out));
  reg.add(unary_schema(op.name, 13, Category::kArithmetic, op.doc, std::move(v13), op.in, op.out));
}

}  // namespace

TESSERA_REGISTER_OPS(math_unary) {
  using types::concat;
  add_1_6_13(reg, {"Abs", "Absolute value of each element.", "X", "Y"}, types::kNumeric, types::kNumericBf16);
  add_1_6_13(reg, {"Neg", "Negates each element.", "X", "Y"}, concat({types::kFloat, types::kSignedInt}),
             concat({types::kFloatBf16, types::kSignedInt}));
  for (UnaryOp op : {UnaryOp{"Ceil", "Rounds each element up to the nearest integer.", "X", "Y"},
                     UnaryOp{"Floor", "Rounds each element down to the nearest integer.", "X", "Y"},
                     UnaryOp{"Reciprocal", "1/x of each element.", "X", "Y"},
                     UnaryOp{"Sqrt", "Square root of each element; negative inputs give NaN.", "X", "Y"},
                     UnaryOp{"Exp", "e raised to each element.", "input", "output"},
                     UnaryOp{"Log", "Natural logarithm of each element.", "input", "output"}}) {
    add_1_6_13(reg, op, types::kFloat, types::kFloatBf16);
  }

  const char* round_doc = "Rounds each element to the nearest integer, halves to even (as IEEE rint does).";
  reg.add(unary_schema("Round", 11, Category::kArithmetic, round_doc, types::kFloat));
  reg.add(unary_schema("Round", 22, Category::kArithmetic, round_doc, types::kFloatBf16));

  const char* sign_doc = "-1, 0 or 1 for each element, by its sign.";
  reg.add(unary_schema("Sign", 9, Category::kArithmetic, sign_doc, types::kNumeric, "input", "output"));
  reg.add(unary_schema("Sign", 13, Category::kArithmetic, sign_doc, types::kNumericBf16, "input", "output"));

  const char* erf_doc = "Gauss error function of each element.";
  reg.add(unary_schema("Erf", 9, Category::kArithmetic, erf_doc, types::kNumeric, "input", "output"));
  reg.add(unary_schema("Erf", 13, Category::kArithmetic, erf_doc, types::kNumericBf16, "input", "output"));
}
