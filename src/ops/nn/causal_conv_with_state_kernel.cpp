// Reference kernel of CausalConvWithState: a depthwise causal 1-D convolution over the input preceded by
// the carried state, y[n, c, t] = bias[c] + sum_j w[c, 0, j] * ext[n, c, t + j] where ext is past_state
// (zeros when absent) followed by the input; present_state is the last K-1 positions of ext. The
// optional activation silu/swish is x * sigmoid(x), applied after the bias.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "runtime/dispatch.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using rt::KernelContext;
using rt::Tensor;

class CausalConvWithState : public rt::OpKernel {
 public:
  explicit CausalConvWithState(const rt::KernelInfo& info) {
    std::string act = info.get_string("activation", "none");
    if (act != "none" && act != "silu" && act != "swish")
      throw rt::KernelError("activation is '" + act + "'; it must be 'none', 'silu' or 'swish'");
    silu_ = act != "none";
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor* b = ctx.optional_input(2);
    const Tensor* past = ctx.optional_input(3);
    if (x.rank() != 3)
      ctx.fail("input 'input' has shape " + rt::shape_str(x.shape()) + "; it must be [N, C, L]");
    const int64_t n = x.dim(0), c = x.dim(1), l = x.dim(2);
    if (w.rank() != 3 || w.dim(0) != c || w.dim(1) != 1 || w.dim(2) < 1)
      ctx.fail(fmt::format("input weight has shape {}; it must be [{}, 1, K] with K >= 1",
                           rt::shape_str(w.shape()), c));
    const int64_t k = w.dim(2), s = k - 1;
    if (b && (b->rank() != 1 || b->dim(0) != c))
      ctx.fail(fmt::format("input bias has shape {}; it must be [{}]", rt::shape_str(b->shape()), c));
    if (past && (past->rank() != 3 || past->dim(0) != n || past->dim(1) != c || past->dim(2) != s))
      ctx.fail(fmt::format("input past_state has shape {}; it must be [{}, {}, {}]",
                           rt::shape_str(past->shape()), n, c, s));
    for (const Tensor* t : {&w, b, past}) {
      if (t && t->dtype() != x.dtype()) ctx.fail("all inputs must have the element type of 'input'");
    }
    rt::dispatch(rt::FloatTypes{}, x.dtype(), "CausalConvWithState", [&]<class T>() {
      using C = rt::compute_t<T>;
      Tensor& y = ctx.output(0, x.dtype(), {n, c, l});
      T* state = nullptr;
      if (ctx.output_count() > 1 && ctx.wants_output(1))
        state = ctx.output(1, x.dtype(), {n, c, s}).data<T>();
      const T* xp = x.data<T>();
      const T* wp = w.data<T>();
      T* yp = y.data<T>();
      ctx.threads().parallel_for(n * c, 1, [&](int64_t q0, int64_t q1) {
        std::vector<C> ext(static_cast<size_t>(s + l));
        for (int64_t q = q0; q < q1; ++q) {
          const int64_t ch = q % c;
          for (int64_t i = 0; i < s; ++i) ext[i] = past ? static_cast<C>(past->data<T>()[q * s + i]) : C(0);
          for (int64_t t = 0; t < l; ++t) ext[s + t] = static_cast<C>(xp[q * l + t]);
          const C bias = b ? static_cast<C>(b->data<T>()[ch]) : C(0);
          for (int64_t t = 0; t < l; ++t) {
            C acc = bias;
            for (int64_t j = 0; j < k; ++j) acc += static_cast<C>(wp[ch * k + j]) * ext[t + j];
            if (silu_) acc = acc / (C(1) + std::exp(-acc));
            yp[q * l + t] = static_cast<T>(acc);
          }
          if (state) {
            for (int64_t i = 0; i < s; ++i) state[q * s + i] = static_cast<T>(ext[l + i]);
          }
        }
      });
    });
  }

 private:
  bool silu_ = false;
};

}  // namespace

TESSERA_REGISTER_KERNELS(nn_causal_conv_with_state) {
  reg.add(tessera::rt::KernelDef::of<CausalConvWithState>("CausalConvWithState"));
}
