// Reference kernels of Add, Sub, Mul, Div. Integer results wrap (two's complement, through unsigned
// arithmetic) as ONNX Runtime's do, instead of overflowing; integer division truncates toward zero (as
// C++ does), INT_MIN / -1 wraps to INT_MIN, and division of an integer by zero is an error rather than
// a crash.
#include <type_traits>

#include "ops/math/math_kernel_util.h"

namespace {

using namespace tessera::ops::kernels;
using tessera::rt::NumericTypes;

void add(KernelContext& ctx) {
  binary_map<NumericTypes>(ctx, [](auto a, auto b) { return wrap_add(a, b); });
}
void sub(KernelContext& ctx) {
  binary_map<NumericTypes>(ctx, [](auto a, auto b) { return wrap_sub(a, b); });
}
void mul(KernelContext& ctx) {
  binary_map<NumericTypes>(ctx, [](auto a, auto b) { return wrap_mul(a, b); });
}
void div(KernelContext& ctx) {
  binary_map<NumericTypes>(ctx, [&](auto a, auto b) {
    using C = decltype(a);
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) throw tessera::rt::KernelError("integer division by zero");
      if constexpr (std::is_signed_v<C>) {
        if (b == C(-1)) return wrap_neg(a);  // INT_MIN / -1 would trap
      }
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(math_arithmetic) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("Add", add));
  reg.add(KernelDef::fn("Sub", sub));
  reg.add(KernelDef::fn("Mul", mul));
  reg.add(KernelDef::fn("Div", div));
}
