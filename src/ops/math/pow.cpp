// Pow: X raised to the power Y, elementwise. From opset 12 the exponent may have another numeric type
// than the base; the result always has the base's type.
#include "ops/infer_util.h"
#include "ops/math/elementwise.h"
#include "ops/registry.h"

using namespace tessera::ops;
using namespace tessera::ops::math;

namespace {

const char* kDoc = "X raised to the power Y, elementwise; the result has X's type.";

OpSchema pow_schema(int since, std::vector<std::string> base, std::vector<std::string> exponent) {
  bool mixed = !exponent.empty();
  OpSchema s("Pow", since);
  s.category(Category::kArithmetic)
      .doc(kDoc)
      .input("X", "T")
      .input("Y", mixed ? "T1" : "T")
      .output("Z", "T")
      .types("T", std::move(base));
  if (mixed) s.types("T1", std::move(exponent));
  s.infer(infer_broadcast);
  return s;
}

}  // namespace

TESSERA_REGISTER_OPS(math_pow) {
  reg.add(with_legacy_broadcast(pow_schema(1, types::kFloat, {})));
  reg.add(pow_schema(7, types::kFloat, {}));
  auto base = types::concat({types::kFloat, types::tensors({"int32", "int64"})});
  reg.add(pow_schema(12, base, types::kNumeric));
  base = types::concat({base, types::tensors({"bfloat16"})});
  reg.add(pow_schema(13, base, types::kNumeric));
  reg.add(pow_schema(15, base, types::kNumericBf16));
}
