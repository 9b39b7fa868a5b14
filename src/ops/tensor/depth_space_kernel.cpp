// Reference kernels of DepthToSpace and SpaceToDepth on [N, C, H, W]. Both are a reshape to 6-D, a
// transpose and a reshape back, done here as one strided copy. Mode DCR orders the output channels (or
// the input channels of DepthToSpace) block-row, block-column, channel; CRD channel first.
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

struct Nchw {
  int64_t n, c, h, w, b;
  bool crd;
};

Nchw read_nchw(const KernelContext& ctx, const Tensor& x, bool has_mode) {
  if (x.rank() != 4) ctx.fail(fmt::format("input must be 4-D [N,C,H,W], got {}", rt::shape_str(x.shape())));
  Nchw s{x.dim(0), x.dim(1), x.dim(2), x.dim(3), ctx.info().get_int("blocksize"), false};
  int64_t area = 0;
  if (s.b <= 0 || __builtin_mul_overflow(s.b, s.b, &area))
    ctx.fail(fmt::format("attribute 'blocksize' is {}; it must be positive and its square fit int64", s.b));
  std::string mode = has_mode ? ctx.info().get_string("mode", "DCR") : "DCR";
  if (mode != "DCR" && mode != "CRD")
    ctx.fail(fmt::format("attribute 'mode' is '{}'; expected DCR or CRD", mode));
  s.crd = mode == "CRD";
  return s;
}

void depth_to_space(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Nchw s = read_nchw(ctx, x, ctx.info().since_version() >= 11);
  const int64_t b = s.b;
  if (s.c % (b * b) != 0) ctx.fail(fmt::format("channels {} do not divide by blocksize^2 = {}", s.c, b * b));
  const int64_t c2 = s.c / (b * b), hw = s.h * s.w;
  // Output walked as [N, C', H, b1, W, b2]; the input channel of (c', b1, b2) is DCR: (b1*b + b2)*C' + c',
  // CRD: c'*b*b + b1*b + b2.
  const int64_t sc = s.crd ? b * b * hw : hw;
  const int64_t sb1 = s.crd ? b * hw : b * c2 * hw;
  const int64_t sb2 = s.crd ? hw : c2 * hw;
  std::vector<int64_t> strides = {s.c * hw, sc, s.w, sb1, 1, sb2};
  Shape walk = {s.n, c2, s.h, b, s.w, b};
  Shape out = {s.n, c2, s.h * b, s.w * b};
  Tensor& y = ctx.output(0, x.dtype(), out);
  dispatch_storage(x.dtype(), "DepthToSpace", [&]<class S>() {
    ElemSrc<S> src(x);
    ElemDst<S> dst(y);
    copy_strided<S>(&ctx.threads(), src.data(), 0, strides, dst.data(), walk);
    dst.commit();
  });
}

void space_to_depth(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Nchw s = read_nchw(ctx, x, ctx.info().since_version() >= 28);
  const int64_t b = s.b;
  if (s.h % b != 0 || s.w % b != 0)
    ctx.fail(fmt::format("height {} and width {} must divide by blocksize {}", s.h, s.w, b));
  const int64_t h2 = s.h / b, w2 = s.w / b, hw = s.h * s.w;
  // Input element (n, c, h'*b + b1, w'*b + b2); output channel DCR: (b1*b + b2)*C + c, CRD: c*b*b + b1*b +
  // b2.
  Shape walk;
  std::vector<int64_t> strides;
  if (s.crd) {
    walk = {s.n, s.c, b, b, h2, w2};
    strides = {s.c * hw, hw, s.w, 1, b * s.w, b};
  } else {
    walk = {s.n, b, b, s.c, h2, w2};
    strides = {s.c * hw, s.w, 1, hw, b * s.w, b};
  }
  Tensor& y = ctx.output(0, x.dtype(), {s.n, s.c * b * b, h2, w2});
  dispatch_storage(x.dtype(), "SpaceToDepth", [&]<class S>() {
    ElemSrc<S> src(x);
    ElemDst<S> dst(y);
    copy_strided<S>(&ctx.threads(), src.data(), 0, strides, dst.data(), walk);
    dst.commit();
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_depth_space) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("DepthToSpace", depth_to_space));
  reg.add(KernelDef::fn("SpaceToDepth", space_to_depth));
}
