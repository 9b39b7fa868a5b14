#include "ops/math/elementwise_kernel.h"

namespace tessera::ops::kernels {

Shape legacy_broadcast_shape(const KernelContext& ctx, const Shape& a, const Shape& b) {
  if (ctx.info().get_int("broadcast", 0) == 0) {
    if (a != b)
      ctx.fail("shapes " + rt::shape_str(a) + " and " + rt::shape_str(b) + " differ and broadcast=0");
    return b;
  }
  int64_t rank = static_cast<int64_t>(a.size());
  int64_t axis = ctx.info().get_int("axis", rank - static_cast<int64_t>(b.size()));
  if (axis < 0) axis += rank;
  if (axis < 0 || axis + static_cast<int64_t>(b.size()) > rank)
    ctx.fail("axis " + std::to_string(axis) + " does not place B " + rt::shape_str(b) + " inside A " +
             rt::shape_str(a));
  Shape out(static_cast<size_t>(axis), 1);
  out.insert(out.end(), b.begin(), b.end());
  out.resize(a.size(), 1);
  return out;
}

}  // namespace tessera::ops::kernels
