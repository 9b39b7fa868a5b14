// Reference kernel of DeformConv (deformable convolution v1, and v2 with a mask) over any number of
// spatial axes. Per image, a column matrix like Conv's im2col is built, but each kernel tap samples X at
// its regular position plus its learned offset, by linear interpolation along every axis (zero outside
// X; a position a full pixel or more outside gives 0, as torchvision and the ONNX reference do), scaled
// by the mask. The shared GEMM then applies the filters of each group.
//
// offset is [N, offset_group * prod(kernel) * spatial, out...] with the axis offsets of one tap adjacent
// (dy, dx for 2-D); mask is [N, offset_group * prod(kernel), out...]. Channel c uses offset group
// c / (C / offset_group).
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "ops/nn/gemm_kernel_util.h"
#include "ops/nn/window_kernel_util.h"
#include "runtime/dispatch.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Tensor;

// Multilinear interpolation of the plane at fractional position pos (spatial axes of sizes `in`).
template <class F>
F interpolate(const F* plane, const std::vector<int64_t>& in, const F* pos, std::vector<int64_t>& lo,
              std::vector<F>& frac) {
  const size_t s = in.size();
  for (size_t d = 0; d < s; ++d) {
    if (!(pos[d] > F(-1) && pos[d] < static_cast<F>(in[d]))) return F(0);
    F fl = std::floor(pos[d]);
    lo[d] = static_cast<int64_t>(fl);
    frac[d] = pos[d] - fl;
  }
  F sum = 0;
  for (uint64_t corner = 0; corner < (uint64_t{1} << s); ++corner) {
    F weight = 1;
    int64_t flat = 0;
    bool inside = true;
    for (size_t d = 0; d < s; ++d) {
      const bool hi = (corner >> (s - 1 - d)) & 1;
      const int64_t p = lo[d] + (hi ? 1 : 0);
      if (p < 0 || p >= in[d]) {
        inside = false;
        break;
      }
      weight *= hi ? frac[d] : F(1) - frac[d];
      flat = flat * in[d] + p;
    }
    if (inside && weight != F(0)) sum += weight * plane[flat];
  }
  return sum;
}

class DeformConv : public rt::OpKernel {
 public:
  explicit DeformConv(const rt::KernelInfo& info)
      : attrs_(read_window_attrs(info)),
        group_(info.get_int("group", 1)),
        offset_group_(info.get_int("offset_group", 1)) {
    attrs_.auto_pad = "NOTSET";
    if (group_ < 1) throw rt::KernelError(fmt::format("group is {}; it must be at least 1", group_));
    if (offset_group_ < 1)
      throw rt::KernelError(fmt::format("offset_group is {}; it must be at least 1", offset_group_));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor& off = ctx.input(2);
    const Tensor* b = ctx.optional_input(3);
    const Tensor* mask = ctx.optional_input(4);
    for (const Tensor* t : {&w, &off, b, mask}) {
      if (t && t->dtype() != x.dtype()) ctx.fail("all inputs must have the element type of X");
    }
    if (x.rank() < 3 || w.rank() != x.rank())
      ctx.fail(fmt::format("inputs X {} and W {} must have the same rank, at least 3",
                           rt::shape_str(x.shape()), rt::shape_str(w.shape())));
    const int64_t n = x.dim(0), c = x.dim(1), m = w.dim(0), cg = w.dim(1);
    if (cg * group_ != c || m % group_ != 0) {
      ctx.fail(fmt::format("W {} does not fit X {} with group {}", rt::shape_str(w.shape()),
                           rt::shape_str(x.shape()), group_));
    }
    if (c % offset_group_ != 0)
      ctx.fail(fmt::format("offset_group {} does not divide X's {} channels", offset_group_, c));
    std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
    std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    WindowGeom g = resolve_window(attrs_, in, kernel);
    const size_t s = g.spatial();
    const int64_t ks = g.kernel_size(), out = g.out_size();
    rt::Shape ys{n, m};
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    rt::shape_numel(ys);
    auto expect = [&](const Tensor& t, const char* name, int64_t channels) {
      rt::Shape want{n, channels};
      want.insert(want.end(), g.out.begin(), g.out.end());
      if (t.shape() != want)
        ctx.fail(fmt::format("input {} has shape {}; it must be {}", name, rt::shape_str(t.shape()),
                             rt::shape_str(want)));
    };
    expect(off, "offset", offset_group_ * ks * static_cast<int64_t>(s));
    if (mask) expect(*mask, "mask", offset_group_ * ks);
    if (b && (b->rank() != 1 || b->dim(0) != m))
      ctx.fail(fmt::format("input B has shape {}; it must be [{}]", rt::shape_str(b->shape()), m));
    rt::dispatch(rt::FloatTypes{}, x.dtype(), "DeformConv", [&]<class T>() {
      using F = real_t<T>;
      Tensor& y = ctx.output(0, x.dtype(), ys);
      std::vector<F> xb, wb, ob, mb, bb, yb(static_cast<size_t>(y.numel()));
      const F* xp = as_real<F>(x.data<T>(), x.numel(), xb);
      const F* wp = as_real<F>(w.data<T>(), w.numel(), wb);
      const F* op = as_real<F>(off.data<T>(), off.numel(), ob);
      const F* mp = mask ? as_real<F>(mask->data<T>(), mask->numel(), mb) : nullptr;
      const F* bp = b ? as_real<F>(b->data<T>(), b->numel(), bb) : nullptr;
      const int64_t in_size = g.in_size(), k = cg * ks, mg = m / group_;
      std::vector<F> col(static_cast<size_t>(rt::shape_numel(std::vector<int64_t>{c * ks, out})));
      for (int64_t img = 0; img < n; ++img) {
        build_columns<F>(ctx.threads(), g, xp + img * c * in_size, c, op + img * offset_group_ * ks * s * out,
                         mp ? mp + img * offset_group_ * ks * out : nullptr, col.data());
        for (int64_t gr = 0; gr < group_; ++gr) {
          F* yg = yb.data() + (img * m + gr * mg) * out;
          gemm_real<F>(&ctx.threads(), false, false, mg, out, k, F(1), wp + gr * mg * k, k,
                       col.data() + gr * k * out, out, F(0), yg, out);
          if (!bp) continue;
          for (int64_t j = 0; j < mg; ++j)
            for (int64_t o = 0; o < out; ++o) yg[j * out + o] += bp[gr * mg + j];
        }
      }
      T* yo = y.data<T>();
      for (int64_t i = 0; i < y.numel(); ++i) yo[i] = static_cast<T>(yb[static_cast<size_t>(i)]);
    });
  }

 private:
  // col[(ch * K + kp) * out + o] = mask * X[ch] sampled at o * stride - pad + kp * dilation + offset.
  template <class F>
  void build_columns(rt::ThreadPool& pool, const WindowGeom& g, const F* x, int64_t c, const F* off,
                     const F* mask, F* col) const {
    const size_t s = g.spatial();
    const int64_t ks = g.kernel_size(), out = g.out_size(), in_size = g.in_size();
    const int64_t per_group = c / offset_group_;
    pool.parallel_for(c * ks, 1, [&](int64_t r0, int64_t r1) {
      std::vector<int64_t> koff(s), oidx(s), lo(s);
      std::vector<F> pos(s), frac(s);
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t ch = r / ks, kp = r % ks, og = ch / per_group;
        int64_t rem = kp;
        for (size_t d = s; d-- > 0;) {
          koff[d] = rem % g.kernel[d];
          rem /= g.kernel[d];
        }
        const F* plane = x + ch * in_size;
        const F* offs = off + (og * ks + kp) * static_cast<int64_t>(s) * out;
        const F* mk = mask ? mask + (og * ks + kp) * out : nullptr;
        F* dst = col + r * out;
        std::fill(oidx.begin(), oidx.end(), 0);
        for (int64_t o = 0; o < out; ++o) {
          for (size_t d = 0; d < s; ++d) {
            pos[d] = static_cast<F>(oidx[d] * g.strides[d] - g.pads[d] + koff[d] * g.dilations[d]) +
                     offs[static_cast<int64_t>(d) * out + o];
          }
          F v = interpolate<F>(plane, g.in, pos.data(), lo, frac);
          dst[o] = mk ? v * mk[o] : v;
          for (size_t d = s; d-- > 0;) {
            if (++oidx[d] < g.out[d]) break;
            oidx[d] = 0;
          }
        }
      }
    });
  }

  WindowAttrs attrs_;
  int64_t group_, offset_group_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(nn_deform_conv) {
  reg.add(tessera::rt::KernelDef::of<DeformConv>("DeformConv"));
}
