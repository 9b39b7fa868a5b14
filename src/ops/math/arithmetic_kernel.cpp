// Reference kernels of Add, Sub, Mul, Div. Integer division truncates toward zero (as C++ does);
// division of an integer by zero is an error rather than a crash.
#include "ops/math/elementwise_kernel.h"

namespace {

using namespace tessera::ops::kernels;
using tessera::rt::NumericTypes;

void add(KernelContext& ctx) {
  binary_map<NumericTypes>(ctx, [](auto a, auto b) { return a + b; });
}
void sub(KernelContext& ctx) {
  binary_map<NumericTypes>(ctx, [](auto a, auto b) { return a - b; });
}
void mul(KernelContext& ctx) {
  binary_map<NumericTypes>(ctx, [](auto a, auto b) { return a * b; });
}
void div(KernelContext& ctx) {
  binary_map<NumericTypes>(ctx, [&](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(b)>) {
      if (b == 0) throw tessera::rt::KernelError("integer division by zero");
    }
    return a / b;
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
