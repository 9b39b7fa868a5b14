// Reference kernel of Col2Im: the columns [N, C * prod(block_shape), L] are folded into images
// [N, C, image_shape...], each block position adding its values where its window lands (col2im, the
// adjoint of the im2col of a convolution with the same block, strides, dilations and pads).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "ops/nn/window_kernel_util.h"
#include "runtime/dispatch.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Tensor;

class Col2Im : public rt::OpKernel {
 public:
  explicit Col2Im(const rt::KernelInfo& info) : attrs_(read_window_attrs(info)) {
    attrs_.auto_pad = "NOTSET";
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() != 3)
      ctx.fail("input 'input' has shape " + rt::shape_str(x.shape()) + "; it must be [N, C*B, L]");
    std::vector<int64_t> image = shape_input(ctx, 1, "image_shape");
    std::vector<int64_t> block = shape_input(ctx, 2, "block_shape");
    if (image.size() != block.size())
      ctx.fail(fmt::format("block_shape {} and image_shape {} must have the same length", block, image));
    for (int64_t v : image) {
      if (v < 0) ctx.fail(fmt::format("image_shape {} must not be negative", image));
    }
    for (int64_t v : block) {
      if (v < 1) ctx.fail(fmt::format("block_shape {} must be positive", block));
    }
    WindowAttrs a = attrs_;
    a.kernel_shape.clear();
    WindowGeom g = resolve_window(a, image, block);
    const int64_t per = g.kernel_size();
    if (x.dim(1) % per != 0)
      ctx.fail(
          fmt::format("input has {} values per column, not a multiple of the block size {}", x.dim(1), per));
    if (x.dim(2) != g.out_size()) {
      ctx.fail(
          fmt::format("input has {} blocks (its last axis) but image_shape {} with block_shape {}, strides, "
                      "dilations and pads holds {}",
                      x.dim(2), image, block, g.out_size()));
    }
    const int64_t n = x.dim(0), c = x.dim(1) / per;
    rt::Shape ys{n, c};
    ys.insert(ys.end(), image.begin(), image.end());
    rt::shape_numel(ys);
    rt::dispatch(rt::NumericTypes{}, x.dtype(), "Col2Im", [&]<class T>() {
      Tensor& y = ctx.output(0, x.dtype(), ys);
      const int64_t in_plane = x.dim(1) * x.dim(2), out_plane = c * g.in_size();
      for (int64_t b = 0; b < n; ++b) {
        col2im<T>(&ctx.threads(), g, x.data<T>() + b * in_plane, c, y.data<T>() + b * out_plane);
      }
    });
  }

 private:
  static std::vector<int64_t> shape_input(KernelContext& ctx, size_t i, const char* name) {
    const Tensor& t = ctx.input(i);
    if (t.rank() != 1) ctx.fail(fmt::format("input {} must be 1-D, got {}", name, rt::shape_str(t.shape())));
    return t.to_int64_vector();
  }

  WindowAttrs attrs_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(nn_col2im) {
  reg.add(tessera::rt::KernelDef::of<Col2Im>("Col2Im"));
}
