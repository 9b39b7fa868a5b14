// Reference kernels of Conv, ConvInteger and QLinearConv: im2col of each group of each image, then one
// matrix product with the group's filters (the shared blocked float GEMM for float and the 16-bit
// floats, which compute in float; a double GEMM for double; int64 accumulation for the integer forms).
// A 1x1 kernel with unit strides and no padding multiplies X directly, without the im2col copy.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ops/nn/gemm_kernel_util.h"
#include "ops/nn/window_kernel_util.h"
#include "runtime/dispatch.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Tensor;

// The sizes of one convolution: X [N, C, in...], W [M, C/group, kernel...], Y [N, M, out...].
struct ConvShape {
  int64_t n = 0, c = 0, m = 0, group = 1, cg = 0, mg = 0;
  WindowGeom g;
  int64_t k() const { return cg * g.kernel_size(); }  // columns of the filter matrix of one group
  // Whether im2col would just copy X (1x1 kernel, unit strides, no padding).
  bool direct() const {
    for (size_t i = 0; i < g.spatial(); ++i) {
      if (g.kernel[i] != 1 || g.strides[i] != 1 || g.pads[i] != 0 || g.pads[i + g.spatial()] != 0)
        return false;
    }
    return true;
  }
  rt::Shape y_shape() const {
    rt::Shape s{n, m};
    s.insert(s.end(), g.out.begin(), g.out.end());
    return s;
  }
};

ConvShape conv_shape(const Tensor& x, const Tensor& w, int64_t group, const WindowAttrs& attrs,
                     const char* xn, const char* wn) {
  if (x.rank() < 3) {
    throw rt::KernelError(
        fmt::format("input {} has shape {}; it needs batch, channel and at least one spatial "
                    "axis",
                    xn, rt::shape_str(x.shape())));
  }
  if (w.rank() != x.rank()) {
    throw rt::KernelError(
        fmt::format("input {} has shape {} but {} has {}; {} must be [M, C/group, kernel...]", wn,
                    rt::shape_str(w.shape()), xn, rt::shape_str(x.shape()), wn));
  }
  if (group < 1) throw rt::KernelError(fmt::format("group is {}; it must be at least 1", group));
  ConvShape s;
  s.n = x.dim(0);
  s.c = x.dim(1);
  s.m = w.dim(0);
  s.group = group;
  s.cg = w.dim(1);
  if (s.c != s.cg * group) {
    throw rt::KernelError(
        fmt::format("input {} has {} channels per group but {} has {} channels and group is {}", wn, s.cg, xn,
                    s.c, group));
  }
  if (s.m % group != 0) {
    throw rt::KernelError(
        fmt::format("input {} has {} output channels, which group {} does not divide", wn, s.m, group));
  }
  s.mg = s.m / group;
  std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  s.g = resolve_window(attrs, in, kernel);
  rt::shape_numel(s.y_shape());
  return s;
}

// Y = conv(X, W) + B for one element type computed in F, all buffers already in F.
template <class F>
void conv_real(rt::ThreadPool& pool, const ConvShape& s, const F* x, const F* w, const F* bias, F* y) {
  const int64_t in = s.g.in_size(), out = s.g.out_size(), k = s.k();
  const bool direct = s.direct();
  std::vector<F> col(direct ? 0 : static_cast<size_t>(rt::shape_numel(std::vector<int64_t>{k, out})));
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t g = 0; g < s.group; ++g) {
      const F* xg = x + (n * s.c + g * s.cg) * in;
      if (!direct) im2col<F>(&pool, s.g, xg, s.cg, col.data());
      const F* b = direct ? xg : col.data();
      F* yg = y + (n * s.m + g * s.mg) * out;
      gemm_real<F>(&pool, false, false, s.mg, out, k, F(1), w + g * s.mg * k, k, b, out, F(0), yg, out);
      if (!bias) continue;
      for (int64_t m = 0; m < s.mg; ++m) {
        const F v = bias[g * s.mg + m];
        F* row = yg + m * out;
        for (int64_t o = 0; o < out; ++o) row[o] += v;
      }
    }
  }
}

class Conv : public rt::OpKernel {
 public:
  explicit Conv(const rt::KernelInfo& info)
      : attrs_(read_window_attrs(info)), group_(info.get_int("group", 1)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor* b = ctx.optional_input(2);
    if (w.dtype() != x.dtype() || (b && b->dtype() != x.dtype()))
      ctx.fail("inputs X, W and B must have the same element type");
    ConvShape s = conv_shape(x, w, group_, attrs_, "X", "W");
    if (b && (b->rank() != 1 || b->dim(0) != s.m)) {
      ctx.fail(fmt::format("input B has shape {}; it must be [{}], one value per output channel",
                           rt::shape_str(b->shape()), s.m));
    }
    rt::dispatch(rt::FloatTypes{}, x.dtype(), "Conv", [&]<class T>() {
      using F = real_t<T>;
      Tensor& y = ctx.output(0, x.dtype(), s.y_shape());
      std::vector<F> xb, wb, bb, yb;
      const F* xp = as_real<F>(x.data<T>(), x.numel(), xb);
      const F* wp = as_real<F>(w.data<T>(), w.numel(), wb);
      const F* bp = b ? as_real<F>(b->data<T>(), b->numel(), bb) : nullptr;
      if constexpr (std::is_same_v<F, T>) {
        conv_real<F>(ctx.threads(), s, xp, wp, bp, y.data<T>());
      } else {
        yb.resize(static_cast<size_t>(y.numel()));
        conv_real<F>(ctx.threads(), s, xp, wp, bp, yb.data());
        T* yp = y.data<T>();
        for (int64_t i = 0; i < y.numel(); ++i) yp[i] = static_cast<T>(yb[static_cast<size_t>(i)]);
      }
    });
  }

 private:
  WindowAttrs attrs_;
  int64_t group_;
};

// ---- Integer convolutions -------------------------------------------------------------------------

// An 8-bit tensor as int32 values minus its zero point(s): one value, or one per slice of `per` values
// along the first axis when `zp` has `slices` entries (per-output-channel weights).
std::vector<int32_t> shifted(const Tensor& t, const Tensor* zp, const char* name, int64_t slices) {
  std::vector<int32_t> zps{0};
  if (zp) {
    if (zp->dtype() != t.dtype())
      throw rt::KernelError(fmt::format("{}'s zero point has another element type", name));
    if (zp->numel() != 1 && (zp->numel() != slices || zp->rank() != 1)) {
      throw rt::KernelError(fmt::format(
          "the zero point of {} has shape {}; it must be a scalar{}", name, rt::shape_str(zp->shape()),
          slices > 1 ? fmt::format(" or have {} values, one per output channel", slices) : std::string()));
    }
    zps.resize(static_cast<size_t>(zp->numel()));
    for (int64_t i = 0; i < zp->numel(); ++i)
      zps[static_cast<size_t>(i)] = static_cast<int32_t>(zp->to_int64(i));
  }
  std::vector<int32_t> out(static_cast<size_t>(t.numel()));
  const int64_t per = slices > 0 && t.numel() > 0 ? t.numel() / std::max<int64_t>(1, t.dim(0)) : 1;
  rt::dispatch(rt::TypeList<int8_t, uint8_t>{}, t.dtype(), name, [&]<class T>() {
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      int32_t z = zps.size() == 1 ? zps[0] : zps[static_cast<size_t>(i / per)];
      out[static_cast<size_t>(i)] = static_cast<int32_t>(p[i]) - z;
    }
  });
  return out;
}

// acc[n, m, out] = sum over the window of (x - x_zp) * (w - w_zp), in int32 with wrapping.
std::vector<int32_t> conv_int(rt::ThreadPool& pool, const ConvShape& s, const std::vector<int32_t>& x,
                              const std::vector<int32_t>& w) {
  const int64_t in = s.g.in_size(), out = s.g.out_size(), k = s.k();
  std::vector<int32_t> y(static_cast<size_t>(rt::shape_numel(s.y_shape())));
  std::vector<int32_t> col(static_cast<size_t>(rt::shape_numel(std::vector<int64_t>{k, out})));
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t g = 0; g < s.group; ++g) {
      const int32_t* xg = x.data() + (n * s.c + g * s.cg) * in;
      im2col<int32_t>(&pool, s.g, xg, s.cg, col.data());
      gemm_generic<int32_t, int64_t>(&pool, false, false, s.mg, out, k, 1, w.data() + g * s.mg * k, k,
                                     col.data(), out, 0, y.data() + (n * s.m + g * s.mg) * out, out);
    }
  }
  return y;
}

class ConvInteger : public rt::OpKernel {
 public:
  explicit ConvInteger(const rt::KernelInfo& info)
      : attrs_(read_window_attrs(info)), group_(info.get_int("group", 1)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    ConvShape s = conv_shape(x, w, group_, attrs_, "x", "w");
    std::vector<int32_t> xs = shifted(x, ctx.optional_input(2), "x", 1);
    std::vector<int32_t> ws = shifted(w, ctx.optional_input(3), "w", s.m);
    std::vector<int32_t> acc = conv_int(ctx.threads(), s, xs, ws);
    Tensor& y = ctx.output(0, rt::DataType::kInt32, s.y_shape());
    std::copy(acc.begin(), acc.end(), y.data<int32_t>());
  }

 private:
  WindowAttrs attrs_;
  int64_t group_;
};

// A scale input: a positive finite float scalar, or (for w_scale) one per output channel.
std::vector<float> scales(const Tensor& t, const char* name, int64_t per_channel) {
  if (t.dtype() != rt::DataType::kFloat) throw rt::KernelError(fmt::format("{} must be float", name));
  if (t.numel() != 1 && (per_channel <= 1 || t.numel() != per_channel || t.rank() != 1)) {
    throw rt::KernelError(fmt::format("{} has shape {}; it must be a scalar{}", name,
                                      rt::shape_str(t.shape()),
                                      per_channel > 1 ? " or have one value per output channel" : ""));
  }
  std::vector<float> v(t.data<float>(), t.data<float>() + t.numel());
  for (float f : v) {
    if (!std::isfinite(f) || f == 0.f)
      throw rt::KernelError(fmt::format("{} is {}; it must be finite and nonzero", name, f));
  }
  return v;
}

class QLinearConv : public rt::OpKernel {
 public:
  explicit QLinearConv(const rt::KernelInfo& info)
      : attrs_(read_window_attrs(info)), group_(info.get_int("group", 1)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(3);
    const Tensor& y_zp = ctx.input(7);
    ConvShape s = conv_shape(x, w, group_, attrs_, "x", "w");
    std::vector<float> xsc = scales(ctx.input(1), "x_scale", 1);
    std::vector<float> wsc = scales(ctx.input(4), "w_scale", s.m);
    std::vector<float> ysc = scales(ctx.input(6), "y_scale", 1);
    if (y_zp.numel() != 1) ctx.fail("y_zero_point must be a scalar");
    std::vector<int32_t> xs = shifted(x, &ctx.input(2), "x", 1);
    std::vector<int32_t> ws = shifted(w, &ctx.input(5), "w", s.m);
    std::vector<int32_t> acc = conv_int(ctx.threads(), s, xs, ws);
    const Tensor* b = ctx.optional_input(8);
    if (b && (b->dtype() != rt::DataType::kInt32 || b->rank() != 1 || b->dim(0) != s.m)) {
      ctx.fail(fmt::format("input B has shape {}; it must be int32 [{}], one value per output channel",
                           rt::shape_str(b->shape()), s.m));
    }
    const int64_t out = s.g.out_size();
    const int32_t zp = static_cast<int32_t>(y_zp.to_int64(0));
    rt::dispatch(rt::TypeList<int8_t, uint8_t>{}, y_zp.dtype(), "QLinearConv", [&]<class T>() {
      Tensor& y = ctx.output(0, y_zp.dtype(), s.y_shape());
      T* yp = y.data<T>();
      for (int64_t n = 0; n < s.n; ++n) {
        for (int64_t m = 0; m < s.m; ++m) {
          const float scale = xsc[0] * wsc[wsc.size() == 1 ? 0 : static_cast<size_t>(m)] / ysc[0];
          const int32_t bias = b ? b->data<int32_t>()[m] : 0;
          const size_t base = static_cast<size_t>((n * s.m + m) * out);
          for (int64_t o = 0; o < out; ++o) {
            int32_t a =
                static_cast<int32_t>(static_cast<uint32_t>(acc[base + o]) + static_cast<uint32_t>(bias));
            float v = std::nearbyint(static_cast<float>(a) * scale) + static_cast<float>(zp);
            v = std::min<float>(std::max<float>(v, std::numeric_limits<T>::min()),
                                std::numeric_limits<T>::max());
            yp[base + o] = static_cast<T>(v);
          }
        }
      }
    });
  }

 private:
  WindowAttrs attrs_;
  int64_t group_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(nn_conv) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::of<Conv>("Conv"));
  reg.add(KernelDef::of<ConvInteger>("ConvInteger"));
  reg.add(KernelDef::of<QLinearConv>("QLinearConv"));
}
