// Reference kernel of SwiGLU (ai.onnx 28): Y = A * sigmoid(alpha * A) * B, elementwise on equal shapes.
#include <fmt/format.h>

#include <cmath>

#include "runtime/dispatch.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;

class SwiGLU : public rt::OpKernel {
 public:
  explicit SwiGLU(const rt::KernelInfo& info) : alpha_(info.get_float("alpha", 1.0f)) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& a = ctx.input(0);
    const rt::Tensor& b = ctx.input(1);
    if (a.dtype() != b.dtype()) ctx.fail("A and B must have the same element type");
    if (a.shape() != b.shape())
      ctx.fail(fmt::format("A {} and B {} must have the same shape (SwiGLU does not broadcast)",
                           rt::shape_str(a.shape()), rt::shape_str(b.shape())));
    rt::Tensor& y = ctx.output(0, a.dtype(), a.shape());
    rt::dispatch(rt::FloatTypes{}, a.dtype(), "SwiGLU", [&]<class T>() {
      using C = rt::compute_t<T>;
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* py = y.data<T>();
      const C alpha = static_cast<C>(alpha_);
      ctx.threads().parallel_for(a.numel(), 16384, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const C x = static_cast<C>(pa[i]);
          py[i] = static_cast<T>(x / (C(1) + std::exp(-alpha * x)) * static_cast<C>(pb[i]));
        }
      });
    });
  }

 private:
  float alpha_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(attention_swiglu) {
  reg.add(tessera::rt::KernelDef::of<SwiGLU>("SwiGLU"));
}
