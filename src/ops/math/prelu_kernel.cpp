// Reference kernel of PRelu: y = x where x >= 0, slope * x below zero, the slope broadcast onto X's
// shape (unidirectionally: Y always has X's shape). Before opset 7 a 1-D slope with one value per
// channel (X's dimension 1) was also accepted; it is aligned with that axis.
#include <string>
#include <type_traits>

#include "ops/math/math_kernel_util.h"

namespace {

using namespace tessera::ops::kernels;
namespace rt = tessera::rt;

bool broadcasts_onto(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  size_t offset = to.size() - from.size();
  for (size_t k = 0; k < from.size(); ++k)
    if (from[k] != 1 && from[k] != to[offset + k]) return false;
  return true;
}

// The slope's shape aligned to X for the broadcast loop.
Shape slope_shape(const KernelContext& ctx, const Shape& x, const Shape& slope) {
  if (broadcasts_onto(slope, x)) return slope;
  if (ctx.info().since_version() < 7 && slope.size() == 1 && x.size() >= 2 && slope[0] == x[1]) {
    Shape s(x.size() - 1, 1);
    s[0] = slope[0];
    return s;  // [C, 1, ..., 1]: one slope per channel
  }
  ctx.fail("input slope " + rt::shape_str(slope) + " does not broadcast to input X " + rt::shape_str(x));
}

void prelu(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& slope = ctx.input(1);
  require_same_dtype(ctx, x, slope, "X", "slope");
  Shape ss = slope_shape(ctx, x.shape(), slope.shape());
  rt::dispatch(rt::NumericTypes{}, x.dtype(), "PRelu", [&]<class T>() {
    using C = rt::compute_t<T>;
    binary_loop<T, T>(ctx, x, x.shape(), slope, ss, x.dtype(), [](T xv, T sv) {
      C a = static_cast<C>(xv);
      if constexpr (std::is_unsigned_v<C>) {
        return xv;  // never negative
      } else {
        return a < C(0) ? static_cast<T>(wrap_mul(static_cast<C>(sv), a)) : xv;
      }
    });
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(math_prelu) {
  reg.add(tessera::rt::KernelDef::fn("PRelu", prelu));
}
