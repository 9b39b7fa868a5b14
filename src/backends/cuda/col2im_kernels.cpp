// The CUDA backend's Col2Im (ai.onnx 18): image_shape and block_shape read on the host, strides,
// dilations and pads as attributes, checked as the CPU reference does (ops/nn/col2im_kernel.cpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/cuda/col2im_ops.h"
#include "backends/cuda/data_util.h"
#include "backends/cuda/kernel_util.h"

namespace tessera::cuda {

namespace {

using rt::DataType;

bool col2im_supported(const rt::KernelInfo& info) {
  if (!all_tensors(info) || !info.has_input(0) || !info.has_input(1) || !info.has_input(2)) return false;
  const DataType t = info.input_dtype(0);
  return scalar_type(t) && t != DataType::kBool;
}

class Col2Im : public rt::OpKernel {
 public:
  explicit Col2Im(const rt::KernelInfo& info)
      : strides_(info.get_ints("strides", {})),
        dilations_(info.get_ints("dilations", {})),
        pads_(info.get_ints("pads", {})) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    if (x.rank() != 3)
      ctx.fail("input 'input' has shape " + rt::shape_str(x.shape()) + "; it must be [N, C*B, L]");
    const std::vector<int64_t> image = ctx.input(1).to_int64_vector();
    const std::vector<int64_t> block = ctx.input(2).to_int64_vector();
    if (image.size() != block.size())
      ctx.fail(fmt::format("block_shape {} and image_shape {} must have the same length", block, image));
    const size_t k = image.size();
    if (k == 0 || k > static_cast<size_t>(kCol2ImRank))
      ctx.fail(fmt::format("the CUDA Col2Im takes 1 to {} spatial axes, got {}", kCol2ImRank, k));
    for (int64_t v : image)
      if (v < 0) ctx.fail(fmt::format("image_shape {} must not be negative", image));
    for (int64_t v : block)
      if (v < 1) ctx.fail(fmt::format("block_shape {} must be positive", block));
    auto list = [&](const std::vector<int64_t>& v, size_t n, int64_t fallback, const char* name) {
      if (v.empty()) return std::vector<int64_t>(n, fallback);
      if (v.size() != n)
        ctx.fail(fmt::format("attribute '{}' has {} values, expected {}", name, v.size(), n));
      return v;
    };
    const auto strides = list(strides_, k, 1, "strides"), dilations = list(dilations_, k, 1, "dilations");
    const auto pads = list(pads_, 2 * k, 0, "pads");
    Col2ImSpec s;
    s.rank = static_cast<int>(k);
    int64_t per = 1, blocks = 1;
    for (size_t d = 0; d < k; ++d) {
      if (strides[d] < 1 || dilations[d] < 1)
        ctx.fail(fmt::format("strides {} and dilations {} must be positive", strides, dilations));
      s.image[d] = image[d];
      s.block[d] = block[d];
      s.stride[d] = strides[d];
      s.dilation[d] = dilations[d];
      s.pad[d] = pads[d];
      const int64_t span = dilations[d] * (block[d] - 1) + 1;
      const int64_t room = image[d] + pads[d] + pads[d + k] - span;
      s.blocks[d] = room < 0 ? 0 : room / strides[d] + 1;
      per *= block[d];
      blocks *= s.blocks[d];
    }
    if (x.dim(1) % per != 0)
      ctx.fail(
          fmt::format("input has {} values per column, not a multiple of the block size {}", x.dim(1), per));
    if (x.dim(2) != blocks)
      ctx.fail(
          fmt::format("input has {} blocks (its last axis) but image_shape {} with block_shape {}, strides, "
                      "dilations and pads holds {}",
                      x.dim(2), image, block, blocks));
    s.batch = x.dim(0);
    s.channels = x.dim(1) / per;
    rt::Shape ys{s.batch, s.channels};
    ys.insert(ys.end(), image.begin(), image.end());
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), ys);
    launch_col2im(*scalar_type(x.dtype()), x.raw(), y.raw(), s, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  std::vector<int64_t> strides_, dilations_, pads_;
};

}  // namespace

void register_col2im_kernels(KernelTable& t) {
  t.add(cuda_def(
            "Col2Im", col2im_supported,
            [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<Col2Im>(i); }, 18),
        HostIo{{1, 2}, {}});
}

}  // namespace tessera::cuda
