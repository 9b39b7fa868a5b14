// The CUDA backend's pooling kernels: MaxPool (with its Indices output, and for int8/uint8 too),
// AveragePool and LpPool over 1 to 3 spatial axes (2-D float ones on the fast kernels of pool2d.cu),
// GlobalAveragePool, GlobalMaxPool and GlobalLpPool, and the channels-last com.tessera NhwcMaxPool and
// NhwcAveragePool. The
// window is resolved by the reference kernels' own code (ops/nn/window_kernel_util.h), so pads, auto_pad,
// ceil_mode and their messages are the CPU's.
#include "backends/cuda/pool_kernels.h"

#include <fmt/format.h>

#include <optional>

#include "backends/cuda/kernel_util.h"
#include "backends/cuda/pool_launch.h"
#include "ops/nn/window_kernel_util.h"

namespace tessera::cuda {

namespace {

std::optional<PoolType> pool_type(rt::DataType t, PoolKind kind) {
  switch (t) {
    case rt::DataType::kFloat:
      return PoolType::kFloat;
    case rt::DataType::kFloat16:
      return PoolType::kHalf;
    case rt::DataType::kBFloat16:
      return PoolType::kBFloat16;
    case rt::DataType::kInt8:
      return kind == PoolKind::kMax ? std::optional(PoolType::kInt8) : std::nullopt;
    case rt::DataType::kUint8:
      return kind == PoolKind::kMax ? std::optional(PoolType::kUint8) : std::nullopt;
    default:
      return std::nullopt;
  }
}

float read_p(const rt::KernelInfo& info) {
  const ir::Attribute* a = info.attr("p");
  double p =
      a && a->type == ir::AttrType::kFloat ? info.get_float("p") : static_cast<double>(info.get_int("p", 2));
  if (!(p > 0)) throw rt::KernelError(fmt::format("p is {}; it must be positive", p));
  return static_cast<float>(p);
}

// A resolved 2-D window as the fast kernels take it.
Pool2d pool2d(int64_t batch, int64_t channels, const ops::kernels::WindowGeom& w,
              bool count_include_pad = false) {
  Pool2d g;
  g.batch = batch;
  g.channels = channels;
  g.in_h = w.in[0];
  g.in_w = w.in[1];
  g.out_h = w.out[0];
  g.out_w = w.out[1];
  g.kernel_h = static_cast<int>(w.kernel[0]);
  g.kernel_w = static_cast<int>(w.kernel[1]);
  g.stride_h = w.strides[0];
  g.stride_w = w.strides[1];
  g.dilation_h = w.dilations[0];
  g.dilation_w = w.dilations[1];
  g.pad_top = w.pads[0];
  g.pad_left = w.pads[1];
  g.pad_bottom = w.pads[2];
  g.pad_right = w.pads[3];
  g.count_include_pad = count_include_pad;
  return g;
}

class PoolKernel : public rt::OpKernel {
 public:
  PoolKernel(const rt::KernelInfo& info, PoolKind kind)
      : kind_(kind), attrs_(ops::kernels::read_window_attrs(info)) {
    if (kind == PoolKind::kAverage) count_include_pad_ = info.get_int("count_include_pad", 0) != 0;
    if (kind == PoolKind::kLp) p_ = read_p(info);
    if (kind == PoolKind::kMax) {
      storage_order_ = static_cast<int>(info.get_int("storage_order", 0));
      if (storage_order_ != 0 && storage_order_ != 1)
        throw rt::KernelError(fmt::format("storage_order is {}; it must be 0 or 1", storage_order_));
    }
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    auto t = pool_type(x.dtype(), kind_);
    if (!t) ctx.fail(fmt::format("the CUDA kernel does not take {}", ir::dtype_name(x.dtype())));
    if (x.rank() < 3 || x.rank() > 2 + kMaxPoolAxes)
      ctx.fail(fmt::format("input X has shape {}; the CUDA kernel takes 1 to {} spatial axes",
                           rt::shape_str(x.shape()), kMaxPoolAxes));
    std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
    ops::kernels::WindowGeom w = ops::kernels::resolve_window(attrs_, in, {});
    PoolGeom g;
    g.spatial = static_cast<int>(in.size());
    g.planes = x.dim(0) * x.dim(1);
    g.count_include_pad = count_include_pad_;
    g.p = p_;
    g.storage_order = storage_order_;
    rt::Shape ys{x.dim(0), x.dim(1)};
    for (size_t d = 0; d < in.size(); ++d) {
      g.in[d] = w.in[d];
      g.out[d] = w.out[d];
      g.kernel[d] = w.kernel[d];
      g.stride[d] = w.strides[d];
      g.dilation[d] = w.dilations[d];
      g.pad_begin[d] = w.pads[d];
      g.pad_end[d] = w.pads[d + in.size()];
      ys.push_back(w.out[d]);
    }
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), ys);
    int64_t* indices = nullptr;
    if (kind_ == PoolKind::kMax && ctx.output_count() > 1 && ctx.wants_output(1))
      indices = static_cast<int64_t*>(ctx.output_uninitialized(1, rt::DataType::kInt64, ys).raw());
    auto ft = elem_type(x.dtype());
    if (g.spatial == 2 && ft && kind_ != PoolKind::kLp) {  // the common case, without the general decoding
      launch_pool2d_nchw(kind_, *ft, x.raw(), y.raw(), indices,
                         pool2d(x.dim(0), x.dim(1), w, count_include_pad_), storage_order_,
                         native(ctx.stream()));
    } else {
      launch_pool(kind_, *t, x.raw(), y.raw(), indices, g, native(ctx.stream()));
    }
    check_launch(ctx);
  }

 private:
  PoolKind kind_;
  ops::kernels::WindowAttrs attrs_;
  bool count_include_pad_ = false;
  float p_ = 2.f;
  int storage_order_ = 0;
};

// com.tessera NhwcMaxPool / NhwcAveragePool (ops/nhwc/nhwc.h): 2-D windows over [N, H, W, C], vectorised
// over channels; the pass turns Global*Pool into these with an H x W window.
class NhwcPoolKernel : public rt::OpKernel {
 public:
  NhwcPoolKernel(const rt::KernelInfo& info, PoolKind kind)
      : kind_(kind), attrs_(ops::kernels::read_window_attrs(info)) {
    if (kind == PoolKind::kAverage) count_include_pad_ = info.get_int("count_include_pad", 0) != 0;
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    auto t = elem_type(x.dtype());
    if (!t) ctx.fail(fmt::format("the CUDA kernel does not take {}", ir::dtype_name(x.dtype())));
    if (x.rank() != 4)
      ctx.fail(fmt::format("input X has shape {}; it must be channels-last [N, H, W, C]",
                           rt::shape_str(x.shape())));
    const std::vector<int64_t> in{x.dim(1), x.dim(2)};
    ops::kernels::WindowGeom w = ops::kernels::resolve_window(attrs_, in, {});
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), {x.dim(0), w.out[0], w.out[1], x.dim(3)});
    if (y.numel() == 0) return;
    launch_pool_nhwc(kind_, *t, x.raw(), y.raw(), pool2d(x.dim(0), x.dim(3), w, count_include_pad_),
                     native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  PoolKind kind_;
  ops::kernels::WindowAttrs attrs_;
  bool count_include_pad_ = false;
};

class GlobalPoolKernel : public rt::OpKernel {
 public:
  GlobalPoolKernel(const rt::KernelInfo& info, PoolKind kind) : kind_(kind) {
    if (kind == PoolKind::kLp) p_ = read_p(info);
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    auto t = elem_type(x.dtype());
    if (!t) ctx.fail(fmt::format("the CUDA kernel does not take {}", ir::dtype_name(x.dtype())));
    if (x.rank() < 2)
      ctx.fail(
          fmt::format("input X has shape {}; it needs batch and channel axes", rt::shape_str(x.shape())));
    rt::Shape ys = x.shape();
    for (size_t i = 2; i < ys.size(); ++i) ys[i] = 1;
    const int64_t planes = x.dim(0) * x.dim(1);
    const int64_t size = planes == 0 ? 0 : x.numel() / planes;
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), ys);
    launch_global_pool(kind_, *t, x.raw(), y.raw(), planes, size, p_, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  PoolKind kind_;
  float p_ = 2.f;
};

// One input of a type the kernel has; known ranks within the kernels' reach.
bool pool_supports(const rt::KernelInfo& info, bool global, PoolKind kind) {
  if (info.input_count() != 1 || !all_tensors(info)) return false;
  if (global ? !elem_type(info.input_dtype(0)) : !pool_type(info.input_dtype(0), kind)) return false;
  const auto& shape = info.input_type(0).shape;
  if (!shape) return true;
  const size_t rank = shape->size();
  return global ? rank >= 2 : rank >= 3 && rank <= 2 + kMaxPoolAxes;
}

bool nhwc_pool_supports(const rt::KernelInfo& info) {
  if (info.input_count() != 1 || info.output_count() != 1 || !all_tensors(info)) return false;
  if (!elem_type(info.input_dtype(0))) return false;
  const auto& shape = info.input_type(0).shape;
  return !shape || shape->size() == 4;
}

}  // namespace

void register_pool_kernels(KernelTable& t) {
  for (auto [name, kind] :
       {std::pair{"NhwcMaxPool", PoolKind::kMax}, std::pair{"NhwcAveragePool", PoolKind::kAverage}}) {
    t.add(cuda_def(name, nhwc_pool_supports, [kind](const rt::KernelInfo& i) -> rt::KernelPtr {
            return std::make_unique<NhwcPoolKernel>(i, kind);
          }).in_domain("com.tessera"));
  }
  for (auto [name, kind] :
       {std::pair{"MaxPool", PoolKind::kMax}, std::pair{"AveragePool", PoolKind::kAverage},
        std::pair{"LpPool", PoolKind::kLp}}) {
    t.add(cuda_def(
        name, [kind](const rt::KernelInfo& i) { return pool_supports(i, false, kind); },
        [kind](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<PoolKernel>(i, kind); }));
  }
  for (auto [name, kind] :
       {std::pair{"GlobalMaxPool", PoolKind::kMax}, std::pair{"GlobalAveragePool", PoolKind::kAverage},
        std::pair{"GlobalLpPool", PoolKind::kLp}}) {
    t.add(cuda_def(
        name, [kind](const rt::KernelInfo& i) { return pool_supports(i, true, kind); },
        [kind](const rt::KernelInfo& i) -> rt::KernelPtr {
          return std::make_unique<GlobalPoolKernel>(i, kind);
        }));
  }
}

}  // namespace tessera::cuda
