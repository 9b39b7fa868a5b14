// Reference kernels of GlobalAveragePool, GlobalMaxPool and GlobalLpPool: one value per (batch, channel)
// plane over all its spatial positions; Y keeps the spatial axes with size 1.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "runtime/dispatch.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using rt::KernelContext;
using rt::Tensor;

enum class Kind { kAverage, kMax, kLp };

template <Kind K>
class GlobalPool : public rt::OpKernel {
 public:
  explicit GlobalPool(const rt::KernelInfo& info) {
    if constexpr (K == Kind::kLp) {
      const ir::Attribute* a = info.attr("p");
      p_ = a && a->type == ir::AttrType::kFloat ? info.get_float("p")
                                                : static_cast<double>(info.get_int("p", 2));
      if (!(p_ > 0)) throw rt::KernelError(fmt::format("p is {}; it must be positive", p_));
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() < 2) {
      ctx.fail(
          fmt::format("input X has shape {}; it needs batch and channel axes", rt::shape_str(x.shape())));
    }
    rt::Shape ys = x.shape();
    for (size_t i = 2; i < ys.size(); ++i) ys[i] = 1;
    const int64_t planes = x.dim(0) * x.dim(1);
    const int64_t size = planes == 0 ? 0 : x.numel() / planes;
    rt::dispatch(rt::FloatTypes{}, x.dtype(), ctx.info().op_type(), [&]<class T>() {
      using C = rt::compute_t<T>;
      Tensor& y = ctx.output(0, x.dtype(), ys);
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      ctx.threads().parallel_for(planes, std::max<int64_t>(1, 16384 / std::max<int64_t>(size, 1)),
                                 [&](int64_t c0, int64_t c1) {
                                   for (int64_t c = c0; c < c1; ++c)
                                     yp[c] = static_cast<T>(reduce<T, C>(xp + c * size, size));
                                 });
    });
  }

 private:
  template <class T, class C>
  C reduce(const T* v, int64_t n) const {
    if constexpr (K == Kind::kMax) {
      C best = -std::numeric_limits<C>::infinity();
      for (int64_t i = 0; i < n; ++i) best = std::max(best, static_cast<C>(v[i]));
      return best;
    } else if constexpr (K == Kind::kAverage) {
      C sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += static_cast<C>(v[i]);
      return n > 0 ? sum / static_cast<C>(n) : std::numeric_limits<C>::quiet_NaN();
    } else {
      C sum = 0;
      for (int64_t i = 0; i < n; ++i)
        sum += static_cast<C>(std::pow(std::abs(static_cast<C>(v[i])), static_cast<C>(p_)));
      return static_cast<C>(std::pow(sum, static_cast<C>(1.0 / p_)));
    }
  }

  double p_ = 2;
};

}  // namespace

TESSERA_REGISTER_KERNELS(nn_global_pool) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::of<GlobalPool<Kind::kAverage>>("GlobalAveragePool"));
  reg.add(KernelDef::of<GlobalPool<Kind::kMax>>("GlobalMaxPool"));
  reg.add(KernelDef::of<GlobalPool<Kind::kLp>>("GlobalLpPool"));
}
