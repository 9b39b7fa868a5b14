// Reference kernels of Equal, Greater, Less, GreaterOrEqual and LessOrEqual: a bool tensor of the
// broadcast shape (the limited `broadcast`/`axis` alignment for the opset-1 versions). Float16 and
// bfloat16 compare as float, so NaN is unequal to everything and unordered.
#include <string>

#include "ops/math/math_kernel_util.h"

namespace {

using namespace tessera::ops::kernels;
using tessera::rt::NumericTypes;
using EqualTypes = tessera::rt::AllTypes;  // numbers, bool and (from opset 19) strings

void equal(KernelContext& ctx) {
  compare_map<EqualTypes>(ctx, [](const auto& a, const auto& b) { return a == b; });
}
void greater(KernelContext& ctx) {
  compare_map<NumericTypes>(ctx, [](auto a, auto b) { return a > b; });
}
void less(KernelContext& ctx) {
  compare_map<NumericTypes>(ctx, [](auto a, auto b) { return a < b; });
}
void greater_or_equal(KernelContext& ctx) {
  compare_map<NumericTypes>(ctx, [](auto a, auto b) { return a >= b; });
}
void less_or_equal(KernelContext& ctx) {
  compare_map<NumericTypes>(ctx, [](auto a, auto b) { return a <= b; });
}

}  // namespace

TESSERA_REGISTER_KERNELS(math_compare) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("Equal", equal));
  reg.add(KernelDef::fn("Greater", greater));
  reg.add(KernelDef::fn("Less", less));
  reg.add(KernelDef::fn("GreaterOrEqual", greater_or_equal));
  reg.add(KernelDef::fn("LessOrEqual", less_or_equal));
}
