// Reference kernel of ConvTranspose: per image and group, the columns W_g^T * X_g (the shared GEMM) are
// folded back into the output by col2im, the adjoint of the im2col a Conv with the same window would do.
//
// Output size: output_shape when given (the pads then follow from it), in * stride with auto_pad SAME_*,
// else stride * (in - 1) + output_padding + dilation * (kernel - 1) + 1 - pads. The padding implied by
// output_shape or SAME_* is split with the odd unit at the end for SAME_UPPER, at the beginning
// otherwise, as the ONNX specification writes it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "ops/nn/gemm_kernel_util.h"
#include "ops/nn/window_kernel_util.h"
#include "runtime/dispatch.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Tensor;

struct TransposeShape {
  int64_t n = 0, c = 0, m = 0, group = 1, cg = 0, mg = 0;
  WindowGeom g;  // in: Y's spatial sizes, out: X's (the convolution Y -> X this transposes)
  rt::Shape y_shape() const {
    rt::Shape s{n, m};
    s.insert(s.end(), g.in.begin(), g.in.end());
    return s;
  }
};

class ConvTranspose : public rt::OpKernel {
 public:
  explicit ConvTranspose(const rt::KernelInfo& info)
      : attrs_(read_window_attrs(info)),
        group_(info.get_int("group", 1)),
        output_padding_(info.has_attr("output_padding") ? info.get_ints("output_padding")
                                                        : std::vector<int64_t>{}),
        output_shape_(info.has_attr("output_shape") ? info.get_ints("output_shape")
                                                    : std::vector<int64_t>{}) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor* b = ctx.optional_input(2);
    if (w.dtype() != x.dtype() || (b && b->dtype() != x.dtype()))
      ctx.fail("inputs X, W and B must have the same element type");
    TransposeShape s = shape(x, w);
    if (b && (b->rank() != 1 || b->dim(0) != s.m)) {
      ctx.fail(fmt::format("input B has shape {}; it must be [{}], one value per output channel",
                           rt::shape_str(b->shape()), s.m));
    }
    rt::dispatch(rt::FloatTypes{}, x.dtype(), "ConvTranspose", [&]<class T>() {
      using F = real_t<T>;
      Tensor& y = ctx.output(0, x.dtype(), s.y_shape());
      std::vector<F> xb, wb, bb, yb;
      const F* xp = as_real<F>(x.data<T>(), x.numel(), xb);
      const F* wp = as_real<F>(w.data<T>(), w.numel(), wb);
      const F* bp = b ? as_real<F>(b->data<T>(), b->numel(), bb) : nullptr;
      F* yp = nullptr;
      if constexpr (std::is_same_v<F, T>) {
        yp = y.data<T>();
      } else {
        yb.resize(static_cast<size_t>(y.numel()));
        yp = yb.data();
      }
      run<F>(ctx.threads(), s, xp, wp, bp, yp);
      if constexpr (!std::is_same_v<F, T>) {
        T* out = y.data<T>();
        for (int64_t i = 0; i < y.numel(); ++i) out[i] = static_cast<T>(yb[static_cast<size_t>(i)]);
      }
    });
  }

 private:
  TransposeShape shape(const Tensor& x, const Tensor& w) const {
    if (x.rank() < 3) {
      throw rt::KernelError(fmt::format("input X has shape {}; it needs batch, channel and spatial axes",
                                        rt::shape_str(x.shape())));
    }
    if (w.rank() != x.rank()) {
      throw rt::KernelError(
          fmt::format("input W has shape {} but X has {}; W must be [C, M/group, kernel...]",
                      rt::shape_str(w.shape()), rt::shape_str(x.shape())));
    }
    if (group_ < 1) throw rt::KernelError(fmt::format("group is {}; it must be at least 1", group_));
    TransposeShape s;
    s.n = x.dim(0);
    s.c = x.dim(1);
    s.group = group_;
    if (w.dim(0) != s.c) {
      throw rt::KernelError(
          fmt::format("input W is for {} input channels (its first axis) but X has {}", w.dim(0), s.c));
    }
    if (s.c % group_ != 0)
      throw rt::KernelError(fmt::format("group {} does not divide X's {} channels", group_, s.c));
    s.cg = s.c / group_;
    s.mg = w.dim(1);
    s.m = s.mg * group_;
    const size_t sp = static_cast<size_t>(x.rank() - 2);
    std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
    std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    // Resolve kernel, strides and dilations as a plain (VALID) window over a large enough input; the
    // sizes and pads are the transpose's own.
    WindowAttrs plain = attrs_;
    plain.auto_pad = "VALID";
    plain.pads.clear();
    plain.ceil_mode = false;
    std::vector<int64_t> big(sp, int64_t{1} << 30);
    WindowGeom g = resolve_window(plain, big, kernel);
    std::vector<int64_t> op = output_padding_.empty() ? std::vector<int64_t>(sp, 0) : output_padding_;
    if (op.size() != sp)
      throw rt::KernelError(fmt::format("output_padding {} must have {} entries", output_padding_, sp));
    std::vector<int64_t> pads(2 * sp, 0);
    if (attrs_.auto_pad == "NOTSET" && !attrs_.pads.empty()) {
      if (attrs_.pads.size() != 2 * sp)
        throw rt::KernelError(fmt::format("pads {} must have {} entries", attrs_.pads, 2 * sp));
      pads = attrs_.pads;
    }
    if (!output_shape_.empty() && output_shape_.size() != sp && output_shape_.size() != sp + 2)
      throw rt::KernelError(fmt::format("output_shape {} must have {} entries", output_shape_, sp));
    const bool same = attrs_.auto_pad == "SAME_UPPER" || attrs_.auto_pad == "SAME_LOWER";
    g.in.resize(sp);
    g.out = in;
    for (size_t i = 0; i < sp; ++i) {
      const int64_t effective = g.dilations[i] * (g.kernel[i] - 1) + 1;
      const int64_t full = g.strides[i] * (in[i] - 1) + op[i] + effective;  // the size without padding
      if (!output_shape_.empty() || same) {
        int64_t target =
            !output_shape_.empty() ? output_shape_[output_shape_.size() - sp + i] : in[i] * g.strides[i];
        // Split as the ONNX reference does, with floor division: a negative total (an output_shape past
        // the natural size) extends the end.
        int64_t total = full - target;
        int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
        pads[i] = attrs_.auto_pad == "SAME_UPPER" ? half : total - half;
        pads[i + sp] = total - pads[i];
        g.in[i] = target;
      } else {
        g.in[i] = full - pads[i] - pads[i + sp];
      }
      if (g.in[i] <= 0 || op[i] < 0) {
        throw rt::KernelError(
            fmt::format("the output would have size {} along spatial axis {} (pads {}, output_padding {})",
                        g.in[i], i, pads, op));
      }
    }
    g.pads = pads;
    s.g = g;
    rt::shape_numel(s.y_shape());
    return s;
  }

  template <class F>
  static void run(rt::ThreadPool& pool, const TransposeShape& s, const F* x, const F* w, const F* bias,
                  F* y) {
    const int64_t in = s.g.out_size(), out = s.g.in_size(), kmg = s.mg * s.g.kernel_size();
    std::vector<F> col(static_cast<size_t>(rt::shape_numel(std::vector<int64_t>{kmg, in})));
    for (int64_t n = 0; n < s.n; ++n) {
      for (int64_t g = 0; g < s.group; ++g) {
        const F* xg = x + (n * s.c + g * s.cg) * in;
        const F* wg = w + g * s.cg * kmg;
        gemm_real<F>(&pool, true, false, kmg, in, s.cg, F(1), wg, kmg, xg, in, F(0), col.data(), in);
        F* yg = y + (n * s.m + g * s.mg) * out;
        col2im<F>(&pool, s.g, col.data(), s.mg, yg);
        if (!bias) continue;
        for (int64_t m = 0; m < s.mg; ++m) {
          const F v = bias[g * s.mg + m];
          for (int64_t o = 0; o < out; ++o) yg[m * out + o] += v;
        }
      }
    }
  }

  WindowAttrs attrs_;
  int64_t group_;
  std::vector<int64_t> output_padding_, output_shape_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(nn_conv_transpose) {
  reg.add(tessera::rt::KernelDef::of<ConvTranspose>("ConvTranspose"));
}
