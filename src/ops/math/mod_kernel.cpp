// Reference kernel of Mod. fmod=1 is C's remainder (sign of the dividend: std::fmod, integer %);
// fmod=0 is Python's (sign of the divisor), including for floats from opset 28, where -3 mod inf is
// inf and a zero result takes the divisor's sign. Integer division by zero is an error; INT_MIN mod
// -1 is 0 instead of a trap.
#include <cmath>
#include <string>
#include <type_traits>

#include "ops/math/math_kernel_util.h"

namespace {

using namespace tessera::ops::kernels;
using tessera::rt::KernelInfo;
using tessera::rt::NumericTypes;
using tessera::rt::OpKernel;

template <class C>
C int_mod(C a, C b, bool c_fmod) {
  if (b == 0) throw tessera::rt::KernelError("Mod: integer division by zero (an element of input B is 0)");
  if constexpr (std::is_signed_v<C>) {
    if (b == -1) return C(0);  // a % -1 is 0, and INT_MIN % -1 would trap
    C r = static_cast<C>(a % b);
    if (!c_fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
    return r;
  } else {
    return static_cast<C>(a % b);
  }
}

template <class C>
C float_mod(C a, C b, bool c_fmod) {
  C r = std::fmod(a, b);
  if (c_fmod) return r;
  if (r == 0) return std::copysign(C(0), b);
  if ((r < 0) != (b < 0)) r += b;
  return r;
}

class Mod : public OpKernel {
 public:
  explicit Mod(const KernelInfo& info) {
    int64_t fmod = info.get_int("fmod", 0);
    if (fmod != 0 && fmod != 1)
      throw tessera::rt::KernelError("Mod: attribute 'fmod' is " + std::to_string(fmod) +
                                     "; it must be 0 or 1");
    c_fmod_ = fmod == 1;
  }
  void compute(KernelContext& ctx) const override {
    binary_map<NumericTypes>(ctx, [this](auto a, auto b) {
      if constexpr (std::is_integral_v<decltype(a)>)
        return int_mod(a, b, c_fmod_);
      else
        return float_mod(a, b, c_fmod_);
    });
  }

 private:
  bool c_fmod_ = false;
};

}  // namespace

TESSERA_REGISTER_KERNELS(math_mod) {
  reg.add(tessera::rt::KernelDef::of<Mod>("Mod"));
}
