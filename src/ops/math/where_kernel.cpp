// Reference kernel of Where: output = condition ? X : Y, all three broadcast together. Elements are only
// copied, so any element type works by its width (strings by value); X and Y must share their type.
#include <array>
#include <string>

#include "ops/math/math_kernel_util.h"

namespace {

using namespace tessera::ops::kernels;
namespace rt = tessera::rt;
namespace ir = tessera::ir;

template <size_t N>
struct Bytes {
  unsigned char b[N];
};

template <class E>
void select(KernelContext& ctx, const Tensor& cond, const Tensor& x, const Tensor& y,
            const Shape& out_shape) {
  Tensor& out = ctx.output(0, x.dtype(), out_shape);
  const auto* pc = cond.data<uint8_t>();
  const E* px = x.data<E>();
  const E* py = y.data<E>();
  E* po = out.data<E>();
  rt::for_each_broadcast<3>(
      &ctx.threads(), out_shape, {&cond.shape(), &x.shape(), &y.shape()},
      [&](int64_t i, const std::array<int64_t, 3>& o) { po[i] = pc[o[0]] != 0 ? px[o[1]] : py[o[2]]; });
}

void where(KernelContext& ctx) {
  const Tensor& cond = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  if (cond.dtype() != ir::DataType::kBool)
    ctx.fail("input condition has element type " + std::string(ir::dtype_name(cond.dtype())) +
             "; it must be bool");
  require_same_dtype(ctx, x, y, "X", "Y");
  std::array<const Shape*, 3> shapes{&cond.shape(), &x.shape(), &y.shape()};
  Shape out_shape = rt::broadcast_shapes(shapes);
  if (x.dtype() == ir::DataType::kString) return select<std::string>(ctx, cond, x, y, out_shape);
  switch (ir::dtype_bits(x.dtype())) {
    case 8:
      return select<uint8_t>(ctx, cond, x, y, out_shape);
    case 16:
      return select<uint16_t>(ctx, cond, x, y, out_shape);
    case 32:
      return select<uint32_t>(ctx, cond, x, y, out_shape);
    case 64:
      return select<uint64_t>(ctx, cond, x, y, out_shape);
    case 128:
      return select<Bytes<16>>(ctx, cond, x, y, out_shape);
    default:
      ctx.fail("element type " + std::string(ir::dtype_name(x.dtype())) + " is not supported");
  }
}

}  // namespace

TESSERA_REGISTER_KERNELS(math_where) {
  reg.add(tessera::rt::KernelDef::fn("Where", where));
}
