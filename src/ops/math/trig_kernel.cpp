// Reference kernels of the trigonometric and hyperbolic functions of trig.cpp, computed in float for
// float16/bfloat16 and in the input's type otherwise.
#include <cmath>

#include "ops/math/elementwise_kernel.h"

namespace {

using namespace tessera::ops::kernels;
using tessera::rt::FloatTypes;

#define TESSERA_TRIG_KERNEL(name, fn)                         \
  void name(KernelContext& ctx) {                             \
    unary_map<FloatTypes>(ctx, [](auto x) { return fn(x); }); \
  }

TESSERA_TRIG_KERNEL(sin_kernel, std::sin)
TESSERA_TRIG_KERNEL(cos_kernel, std::cos)
TESSERA_TRIG_KERNEL(tan_kernel, std::tan)
TESSERA_TRIG_KERNEL(asin_kernel, std::asin)
TESSERA_TRIG_KERNEL(acos_kernel, std::acos)
TESSERA_TRIG_KERNEL(atan_kernel, std::atan)
TESSERA_TRIG_KERNEL(sinh_kernel, std::sinh)
TESSERA_TRIG_KERNEL(cosh_kernel, std::cosh)
TESSERA_TRIG_KERNEL(asinh_kernel, std::asinh)
TESSERA_TRIG_KERNEL(acosh_kernel, std::acosh)
TESSERA_TRIG_KERNEL(atanh_kernel, std::atanh)
#undef TESSERA_TRIG_KERNEL

}  // namespace

TESSERA_REGISTER_KERNELS(math_trig) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("Sin", sin_kernel));
  reg.add(KernelDef::fn("Cos", cos_kernel));
  reg.add(KernelDef::fn("Tan", tan_kernel));
  reg.add(KernelDef::fn("Asin", asin_kernel));
  reg.add(KernelDef::fn("Acos", acos_kernel));
  reg.add(KernelDef::fn("Atan", atan_kernel));
  reg.add(KernelDef::fn("Sinh", sinh_kernel));
  reg.add(KernelDef::fn("Cosh", cosh_kernel));
  reg.add(KernelDef::fn("Asinh", asinh_kernel));
  reg.add(KernelDef::fn("Acosh", acosh_kernel));
  reg.add(KernelDef::fn("Atanh", atanh_kernel));
}
