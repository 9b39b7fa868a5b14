// Reference kernel of Pow. From opset 12 the exponent may have another numeric type than the base; Z
// has the base's type. Integer base with integer exponent is exact repeated squaring that wraps on
// overflow (as numpy.power); every other combination computes std::pow in double and converts back,
// truncating toward zero for an integer base (as ONNX Runtime's static_cast of std::pow).
#include <cmath>
#include <type_traits>

#include "ops/math/math_kernel_util.h"

namespace {

using namespace tessera::ops::kernels;
namespace rt = tessera::rt;
using BaseTypes = rt::TypeList<float, double, rt::Float16, rt::BFloat16, int32_t, int64_t>;

// x**y for integers. Negative exponents give 1/x**|y| truncated: 0 unless |x| is 1; 0 to a negative
// power is a division by zero.
template <class T, class E>
T int_pow(T x, E y) {
  if constexpr (std::is_signed_v<E>) {
    if (y < 0) {
      if (x == 0) throw rt::KernelError("Pow: 0 raised to a negative integer power (division by zero)");
      if (x == 1) return T(1);
      if (x == -1) return (y % 2 == 0) ? T(1) : T(-1);
      return T(0);
    }
  }
  T result = 1;
  T base = x;
  auto e = static_cast<std::make_unsigned_t<E>>(y);
  while (e != 0) {
    if (e & 1u) result = wrap_mul(result, base);
    e >>= 1;
    if (e != 0) base = wrap_mul(base, base);
  }
  return result;
}

template <class T, class E>
T pow_elem(T x, E y) {
  if constexpr (std::is_integral_v<T> && std::is_integral_v<E>) {
    return int_pow(x, y);
  } else {
    double r = std::pow(static_cast<double>(static_cast<rt::compute_t<T>>(x)),
                        static_cast<double>(static_cast<rt::compute_t<E>>(y)));
    return from_double<T>(r);
  }
}

void pow_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  if (ctx.info().since_version() < 12) require_same_dtype(ctx, x, y, "X", "Y");
  Shape ys = second_operand_shape(ctx, x, y);
  rt::dispatch(BaseTypes{}, x.dtype(), "Pow (base X)", [&]<class T>() {
    rt::dispatch(rt::NumericTypes{}, y.dtype(), "Pow (exponent Y)", [&]<class E>() {
      Shape out_shape = rt::broadcast_shapes(x.shape(), ys);
      Tensor& z = ctx.output(0, x.dtype(), out_shape);
      const T* px = x.data<T>();
      const E* py = y.data<E>();
      T* pz = z.data<T>();
      rt::for_each_broadcast<2>(
          &ctx.threads(), out_shape, {&x.shape(), &ys},
          [&](int64_t i, const std::array<int64_t, 2>& o) { pz[i] = pow_elem(px[o[0]], py[o[1]]); });
    });
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(math_pow) {
  reg.add(tessera::rt::KernelDef::fn("Pow", pow_kernel));
}
