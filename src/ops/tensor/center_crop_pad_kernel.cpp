// Reference kernel of CenterCropPad: axes larger than the requested size are cropped around their centre,
// smaller ones zero-padded around it (the extra element of an odd difference goes to the end).
#include <fmt/format.h>

#include "ops/tensor/tensor_kernel_util.h"

namespace {

using namespace tessera::ops::tensor_kernels;
namespace rt = tessera::rt;

void center_crop_pad(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  std::vector<int64_t> sizes = int_input(ctx, 1, "shape");
  std::vector<int64_t> axes;
  if (ctx.info().has_attr("axes")) {
    axes = normalize_axes(ctx.info().get_ints("axes"), rank);
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (sizes.size() != axes.size())
    ctx.fail(fmt::format("input 'shape' has {} entries for {} axes", sizes.size(), axes.size()));
  Shape out = x.shape();
  std::vector<int64_t> shift(static_cast<size_t>(rank), 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t d = axes[k], dim = x.shape()[d], size = sizes[k];
    if (size < 0) ctx.fail(fmt::format("input 'shape' has a negative size {} for axis {}", size, d));
    out[d] = size;
    // Crop: skip (dim - size) / 2 in front. Pad: (size - dim) / 2 fill in front.
    shift[d] = size <= dim ? (dim - size) / 2 : -((size - dim) / 2);
  }
  Tensor& y = ctx.output(0, x.dtype(), out);
  if (y.numel() == 0) return;
  auto maps = axis_maps(out, [&](size_t d, int64_t o) {
    int64_t i = o + shift[d];
    return i >= 0 && i < x.shape()[d] ? i : int64_t{-1};
  });
  dispatch_storage(x.dtype(), "CenterCropPad", [&]<class S>() {
    ElemSrc<S> src(x);
    ElemDst<S> dst(y);
    copy_axis_maps<S>(&ctx.threads(), src.data(), x.shape(), maps, dst.data(), S{});
    dst.commit();
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(tensor_center_crop_pad) {
  reg.add(tessera::rt::KernelDef::fn("CenterCropPad", center_crop_pad));
}
