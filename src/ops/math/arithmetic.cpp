// Add, Sub, Mul, Div. Versions 1 and 6 broadcast B onto A only when asked (`broadcast`, `axis`);
// from version 7 both inputs broadcast numpy-style. Later versions only widen the element types.
#include "ops/infer_util.h"
#include "ops/math/elementwise.h"
#include "ops/registry.h"

using namespace tessera::ops;
using namespace tessera::ops::math;

TESSERA_REGISTER_OPS(math_arithmetic) {
  struct Arith {
    const char* name;
    const char* doc;
  };
  for (Arith op : {Arith{"Add", "Elementwise sum A + B."}, Arith{"Sub", "Elementwise difference A - B."},
                   Arith{"Mul", "Elementwise product A * B."},
                   Arith{"Div", "Elementwise quotient A / B; integer division truncates toward zero."}}) {
    constexpr Category kCat = Category::kArithmetic;
    reg.add(
        with_consumed_inputs(with_legacy_broadcast(binary_schema(op.name, 1, kCat, op.doc, types::kFloat))));
    reg.add(with_legacy_broadcast(binary_schema(op.name, 6, kCat, op.doc, kHighPrecision)));
    reg.add(binary_schema(op.name, 7, kCat, op.doc, kHighPrecision));
    reg.add(binary_schema(op.name, 13, kCat, op.doc, kHighPrecisionBf16));
    reg.add(binary_schema(op.name, 14, kCat, op.doc, types::kNumericBf16));
  }
}
