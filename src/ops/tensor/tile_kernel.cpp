// Reference kernel of Tile: the input repeated repeats[d] times along each axis d (Tile-1: 'tiles'
// times along the one axis 'axis').
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

std::vector<int64_t> repeats_of(const KernelContext& ctx, int64_t rank) {
  if (ctx.info().since_version() < 6) {
    const Tensor& tiles = ctx.input(1);
    const Tensor& axis = ctx.input(2);
    if (tiles.numel() != 1 || axis.numel() != 1) ctx.fail("inputs 'tiles' and 'axis' must be scalars");
    std::vector<int64_t> r(static_cast<size_t>(rank), 1);
    r[normalize_axis(axis.to_int64(0), rank)] = tiles.to_int64(0);
    return r;
  }
  const Tensor& t = ctx.input(1);
  if (t.rank() != 1) ctx.fail(fmt::format("input 'repeats' must be 1-D, got {}", rt::shape_str(t.shape())));
  std::vector<int64_t> r = int_input(ctx, 1, "repeats");
  if (static_cast<int64_t>(r.size()) != rank)
    ctx.fail(fmt::format("input 'repeats' has {} entries for an input of rank {}", r.size(), rank));
  return r;
}

void tile(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  std::vector<int64_t> reps = repeats_of(ctx, rank);
  Shape out;
  for (int64_t d = 0; d < rank; ++d) {
    if (reps[d] < 0) ctx.fail(fmt::format("input 'repeats' has a negative entry {} for axis {}", reps[d], d));
    int64_t n = 0;
    if (__builtin_mul_overflow(x.shape()[d], reps[d], &n))
      ctx.fail(
          fmt::format("output too large: axis {} of size {} repeated {} times", d, x.shape()[d], reps[d]));
    out.push_back(n);
  }
  Tensor& y = ctx.output(0, x.dtype(), out);
  if (y.numel() == 0) return;
  auto maps = axis_maps(out, [&](size_t d, int64_t o) { return o % x.shape()[d]; });
  dispatch_storage(x.dtype(), "Tile", [&]<class S>() {
    ElemSrc<S> src(x);
    ElemDst<S> dst(y);
    copy_axis_maps<S>(&ctx.threads(), src.data(), x.shape(), maps, dst.data(), S{});
    dst.commit();
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_tile) {
  reg.add(tessera::rt::KernelDef::fn("Tile", tile));
}
