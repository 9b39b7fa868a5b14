// Reference kernel of Gemm: Y = alpha * A' * B' + beta * C, with C broadcast (one way) to [M, N].
// Floats go through the shared blocked GEMM (in float for float16/bfloat16, in double for double);
// integers accumulate in 64 bits and wrap to the element type, alpha and beta applied in double when they
// are not 1.
#include <fmt/format.h>

#include <vector>

#include "ops/nn/gemm_kernel_util.h"
#include "runtime/dispatch.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Tensor;

using GemmTypes =
    rt::TypeList<float, double, rt::Float16, rt::BFloat16, int32_t, int64_t, uint32_t, uint64_t>;

// Element (i, j) of C broadcast to [M, N]: strides of 0 on its broadcast axes.
struct CView {
  int64_t si = 0, sj = 0;
};

CView c_view(const Tensor& c, int64_t m, int64_t n) {
  if (c.rank() > 2)
    throw rt::KernelError("input C has rank " + std::to_string(c.rank()) + "; it must be at most 2");
  int64_t cm = c.rank() == 2 ? c.dim(0) : 1;
  int64_t cn = c.rank() >= 1 ? c.dim(-1) : 1;
  if ((cm != 1 && cm != m) || (cn != 1 && cn != n)) {
    throw rt::KernelError(fmt::format("input C has shape {}, which does not broadcast to the result [{},{}]",
                                      rt::shape_str(c.shape()), m, n));
  }
  return {cm == 1 ? 0 : cn, cn == 1 ? 0 : 1};
}

class Gemm : public rt::OpKernel {
 public:
  explicit Gemm(const rt::KernelInfo& info)
      : alpha_(info.get_float("alpha", 1.f)),
        beta_(info.get_float("beta", 1.f)),
        trans_a_(info.get_int("transA", 0) != 0),
        trans_b_(info.get_int("transB", 0) != 0) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const Tensor* c = ctx.optional_input(2);
    if (a.rank() != 2) ctx.fail("input A has shape " + rt::shape_str(a.shape()) + "; it must be 2-D");
    if (b.rank() != 2) ctx.fail("input B has shape " + rt::shape_str(b.shape()) + "; it must be 2-D");
    if (b.dtype() != a.dtype() || (c && c->dtype() != a.dtype()))
      ctx.fail("inputs A, B and C must have the same element type");
    const int64_t m = a.dim(trans_a_ ? 1 : 0), k = a.dim(trans_a_ ? 0 : 1);
    const int64_t kb = b.dim(trans_b_ ? 1 : 0), n = b.dim(trans_b_ ? 0 : 1);
    if (k != kb) {
      ctx.fail(fmt::format("A{} {} gives K = {} but B{} {} gives K = {}; they must match",
                           trans_a_ ? "'" : "", rt::shape_str(a.shape()), k, trans_b_ ? "'" : "",
                           rt::shape_str(b.shape()), kb));
    }
    CView cv = c ? c_view(*c, m, n) : CView{};
    rt::dispatch(GemmTypes{}, a.dtype(), "Gemm", [&]<class T>() {
      Tensor& y = ctx.output(0, a.dtype(), {m, n});
      if constexpr (rt::is_float_v<T>) {
        run_real<T>(ctx, a, b, c, cv, m, n, k, y);
      } else {
        run_int<T>(ctx, a, b, c, cv, m, n, k, y);
      }
    });
  }

 private:
  template <class T>
  void run_real(KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor* c, CView cv, int64_t m,
                int64_t n, int64_t k, Tensor& y) const {
    using F = real_t<T>;
    std::vector<F> ab, bb, yb;
    const F* ap = as_real<F>(a.data<T>(), a.numel(), ab);
    const F* bp = as_real<F>(b.data<T>(), b.numel(), bb);
    F* yp = nullptr;
    if constexpr (std::is_same_v<F, T>) {
      yp = y.data<T>();
    } else {
      yb.resize(static_cast<size_t>(m * n));
      yp = yb.data();
    }
    F beta = static_cast<F>(beta_);
    if (c && beta != F(0)) {
      const T* cp = c->data<T>();
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) yp[i * n + j] = static_cast<F>(cp[i * cv.si + j * cv.sj]);
    } else {
      beta = F(0);
    }
    gemm_real<F>(&ctx.threads(), trans_a_, trans_b_, m, n, k, static_cast<F>(alpha_), ap, a.dim(1), bp,
                 b.dim(1), beta, yp, n);
    if constexpr (!std::is_same_v<F, T>) {
      T* out = y.data<T>();
      for (int64_t i = 0; i < m * n; ++i) out[i] = static_cast<T>(yb[static_cast<size_t>(i)]);
    }
  }

  template <class T>
  void run_int(KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor* c, CView cv, int64_t m,
               int64_t n, int64_t k, Tensor& y) const {
    using Acc = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    T* yp = y.data<T>();
    gemm_generic<T, Acc>(&ctx.threads(), trans_a_, trans_b_, m, n, k, Acc(1), a.data<T>(), a.dim(1),
                         b.data<T>(), b.dim(1), Acc(0), yp, n);
    const bool unit = alpha_ == 1.f && beta_ == 1.f;
    const T* cp = c ? c->data<T>() : nullptr;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        T& v = yp[i * n + j];
        T cij = cp ? cp[i * cv.si + j * cv.sj] : T(0);
        if (unit) {
          v = static_cast<T>(mul_add<Acc>(static_cast<Acc>(v), static_cast<Acc>(cij), Acc(1)));
        } else {
          v = static_cast<T>(static_cast<double>(alpha_) * static_cast<double>(v) +
                             static_cast<double>(beta_) * static_cast<double>(cij));
        }
      }
    }
  }

  float alpha_, beta_;
  bool trans_a_, trans_b_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(nn_gemm) {
  reg.add(tessera::rt::KernelDef::of<Gemm>("Gemm"));
}
