// Reference kernels of Softmax, LogSoftmax and Hardmax. Before opset 13 the input is coerced to 2-D
// at `axis` ([prod(dims before axis), prod(dims from axis)]) and each row is one distribution; from
// opset 13 the distribution runs along the single axis. Arithmetic is in double, max-subtracted.
#include <fmt/format.h>

#include <cmath>

#include "ops/reduce/reduce_kernel_util.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Shape;
using rt::Tensor;

enum class Flavour { kSoftmax, kLogSoftmax, kHardmax };

// The [outer, n, inner] view that each distribution lies along.
struct SoftmaxView {
  int64_t outer, n, inner;
};

SoftmaxView softmax_view(const KernelContext& ctx, const Shape& s) {
  const auto rank = static_cast<int64_t>(s.size());
  const int v = ctx.info().since_version();
  int64_t axis = ctx.info().get_int("axis", v >= 13 ? -1 : 1);
  if (v >= 13) {
    if (rank == 0) ctx.fail("input must have rank 1 or more, got a scalar");
    axis = checked_axis(axis, rank);
    return {dims_product(s, 0, static_cast<size_t>(axis)), s[static_cast<size_t>(axis)],
            dims_product(s, static_cast<size_t>(axis) + 1, s.size())};
  }
  if (axis < -rank || axis > rank)
    ctx.fail(fmt::format("attribute 'axis' is {}, outside [{}, {}] for an input of rank {}", axis, -rank,
                         rank, rank));
  if (axis < 0) axis += rank;
  return {dims_product(s, 0, static_cast<size_t>(axis)), dims_product(s, static_cast<size_t>(axis), s.size()),
          1};
}

template <Flavour F>
void softmax(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const SoftmaxView v = softmax_view(ctx, x.shape());
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  rt::dispatch(rt::FloatTypes{}, x.dtype(), ctx.info().op_type(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    const int64_t n = v.n, inner = v.inner;
    ctx.threads().parallel_for(v.outer * inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, n)),
                               [&](int64_t b, int64_t e) {
                                 for (int64_t g = b; g < e; ++g) {
                                   const int64_t base = (g / inner) * n * inner + g % inner;
                                   if (n == 0) continue;
                                   double mx = load_d(in, base);
                                   int64_t arg = 0;
                                   for (int64_t r = 1; r < n; ++r) {
                                     double xv = load_d(in, base + r * inner);
                                     if (xv > mx) {
                                       mx = xv;
                                       arg = r;
                                     }
                                   }
                                   if constexpr (F == Flavour::kHardmax) {
                                     for (int64_t r = 0; r < n; ++r)
                                       store_d(out, base + r * inner, r == arg ? 1.0 : 0.0);
                                     continue;
                                   }
                                   double sum = 0;
                                   for (int64_t r = 0; r < n; ++r)
                                     sum += std::exp(load_d(in, base + r * inner) - mx);
                                   if constexpr (F == Flavour::kSoftmax) {
                                     for (int64_t r = 0; r < n; ++r) {
                                       const int64_t off = base + r * inner;
                                       store_d(out, off, std::exp(load_d(in, off) - mx) / sum);
                                     }
                                   } else {
                                     const double lse = mx + std::log(sum);
                                     for (int64_t r = 0; r < n; ++r) {
                                       const int64_t off = base + r * inner;
                                       store_d(out, off, load_d(in, off) - lse);
                                     }
                                   }
                                 }
                               });
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(nn_softmax) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("Softmax", softmax<Flavour::kSoftmax>));
  reg.add(KernelDef::fn("LogSoftmax", softmax<Flavour::kLogSoftmax>));
  reg.add(KernelDef::fn("Hardmax", softmax<Flavour::kHardmax>));
}
