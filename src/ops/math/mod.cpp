// Mod: elementwise remainder. fmod=0 takes the divisor's sign (Python's %), fmod=1 the dividend's
// (C's fmod). Before opset 28 floating-point inputs required fmod=1.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/math/elementwise.h"
#include "ops/registry.h"

using namespace tessera::ops;
using namespace tessera::ops::math;

namespace {

void infer_mod(InferenceContext& ctx) {
  int64_t fmod = ctx.attr_int("fmod", 0);
  if (fmod != 0 && fmod != 1) ctx.fail(fmt::format("attribute 'fmod' is {}; it must be 0 or 1", fmod));
  tessera::ir::DataType elem = first_known_elem(ctx, {0, 1});
  if (fmod == 0 && ctx.schema().since_version() < 28 && tessera::ir::dtype_is_float(elem)) {
    ctx.fail(fmt::format("attribute 'fmod' must be 1 for {} inputs before opset 28",
                         tessera::ir::dtype_name(elem)));
  }
  infer_broadcast(ctx);
}

OpSchema mod(int since, std::vector<std::string> allowed) {
  OpSchema s = binary_schema("Mod", since, Category::kArithmetic,
                             "Elementwise remainder of A / B; fmod=0 takes B's sign, fmod=1 A's sign.",
                             std::move(allowed));
  s.attr("fmod", int64_t{0}, "0: remainder with the divisor's sign; 1: with the dividend's sign (C fmod).")
      .infer(infer_mod);
  return s;
}

}  // namespace

TESSERA_REGISTER_OPS(math_mod) {
  reg.add(mod(10, types::kNumeric));
  reg.add(mod(13, types::kNumericBf16));
  reg.add(mod(28, types::kNumericBf16));
}
