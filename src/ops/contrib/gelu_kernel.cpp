// Reference kernels of ONNX Runtime's contrib GELUs (com.microsoft 1): Gelu, x * 0.5 * (1 + erf(x /
// sqrt(2))); BiasGelu, the same of A + B with B along the last axis; FastGelu, the tanh approximation
// (optional bias); QuickGelu, x * sigmoid(alpha * x).
#include <fmt/format.h>

#include <cmath>

#include "runtime/dispatch.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

using tessera::rt::KernelContext;
using tessera::rt::Tensor;
namespace rt = tessera::rt;

// Computed in double for every floating type and rounded once (these are the oracle of the fast
// kernels); x Phi(x) through erfc, as 1 + erf(x / sqrt 2) cancels for negative x.
template <class C>
C gelu(C x) {
  return x * C(0.5) * std::erfc(x * C(-0.70710678118654752440));
}

template <class C>
C gelu_tanh(C x) {
  const C k = static_cast<C>(0.79788456080286535588);  // sqrt(2 / pi)
  // x (1 + tanh z) / 2 = x sigmoid(2 z): 1 + tanh z cancels for negative x.
  return x / (C(1) + std::exp(C(-2) * k * (x + C(0.044715) * x * x * x)));
}

// y[i] = f(a[i] + b[i % len(b)]); without b, f(a[i]).
template <bool kTanh = false>
void gelu_with_bias(KernelContext& ctx, const Tensor* bias) {
  const Tensor& a = ctx.input(0);
  int64_t n = bias ? bias->numel() : 1;
  if (bias && (a.rank() < 1 || bias->rank() != 1 || a.dim(-1) != n || bias->dtype() != a.dtype())) {
    ctx.fail(fmt::format("bias {} must be 1-D along the last axis of the input {}",
                         rt::shape_str(bias->shape()), rt::shape_str(a.shape())));
  }
  rt::dispatch(rt::FloatTypes{}, a.dtype(), ctx.info().op_type(), [&]<class T>() {
    using C = rt::compute_t<T>;
    Tensor& y = ctx.output(0, a.dtype(), a.shape());
    const T* pa = a.data<T>();
    const T* pb = bias ? bias->data<T>() : nullptr;
    T* py = y.data<T>();
    ctx.threads().parallel_for(a.numel(), 16384, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        C v = static_cast<C>(pa[i]);
        if (pb) v += static_cast<C>(pb[i % n]);  // the bias add rounds in the element type's compute type
        double d = static_cast<double>(v);
        py[i] = static_cast<T>(static_cast<C>(kTanh ? gelu_tanh<double>(d) : gelu<double>(d)));
      }
    });
  });
}

void gelu_kernel(KernelContext& ctx) {
  gelu_with_bias(ctx, nullptr);
}
void bias_gelu_kernel(KernelContext& ctx) {
  gelu_with_bias(ctx, &ctx.input(1));
}
void fast_gelu_kernel(KernelContext& ctx) {
  gelu_with_bias<true>(ctx, ctx.optional_input(1));
}

class QuickGelu : public rt::OpKernel {
 public:
  explicit QuickGelu(const rt::KernelInfo& info) : alpha_(info.get_float("alpha", 1.702f)) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    rt::dispatch(rt::FloatTypes{}, x.dtype(), "QuickGelu", [&]<class T>() {
      using C = rt::compute_t<T>;
      Tensor& y = ctx.output(0, x.dtype(), x.shape());
      const T* in = x.data<T>();
      T* out = y.data<T>();
      const double a = static_cast<double>(alpha_);
      ctx.threads().parallel_for(x.numel(), 16384, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          // In double, rounded once: alpha x rounded to float would cost |alpha x| ulps in exp.
          double v = static_cast<double>(static_cast<C>(in[i]));
          double z = a * v;
          // The two-branch sigmoid never overflows exp.
          double sig = z >= 0 ? 1 / (1 + std::exp(-z)) : std::exp(z) / (1 + std::exp(z));
          out[i] = static_cast<T>(static_cast<C>(v * sig));
        }
      });
    });
  }

 private:
  float alpha_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(contrib_gelu) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("Gelu", gelu_kernel).in_domain("com.microsoft"));
  reg.add(KernelDef::fn("BiasGelu", bias_gelu_kernel).in_domain("com.microsoft"));
  reg.add(KernelDef::fn("FastGelu", fast_gelu_kernel).in_domain("com.microsoft"));
  reg.add(KernelDef::of<QuickGelu>("QuickGelu").in_domain("com.microsoft"));
}
