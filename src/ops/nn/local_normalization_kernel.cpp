// Reference kernels of LRN, LpNormalization and MeanVarianceNormalization.
//  - LRN: y = x / (bias + alpha / size * sum of x^2 over the `size` channels around c)^beta, the window
//    running from c - floor((size-1)/2) to c + ceil((size-1)/2), clipped to [0, C).
//  - LpNormalization: x divided by its L1 or L2 norm along `axis`; a zero norm gives 0 rather than NaN.
//  - MeanVarianceNormalization: (x - mean) / (std + 1e-9) over `axes`, as ONNX's function body does.
#include <fmt/format.h>

#include <cmath>

#include "ops/reduce/reduce_kernel_util.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Tensor;

void lrn(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2)
    ctx.fail(fmt::format("input 'X' must be [N, C, ...] (rank 2 or more), got {}", rt::shape_str(x.shape())));
  const int64_t size = ctx.info().get_int("size");
  if (size < 1) ctx.fail(fmt::format("attribute 'size' is {}; it must be at least 1", size));
  const double alpha = ctx.info().get_float("alpha", 1e-4f);
  const double beta = ctx.info().get_float("beta", 0.75f);
  const double bias = ctx.info().get_float("bias", 1.0f);
  const int64_t batch = x.dim(0), channels = x.dim(1);
  const int64_t spatial = dims_product(x.shape(), 2, x.shape().size());
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  rt::dispatch(rt::FloatTypes{}, x.dtype(), "LRN", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    ctx.threads().parallel_for(batch * channels, 1, [&](int64_t b, int64_t e) {
      for (int64_t nc = b; nc < e; ++nc) {
        const int64_t n = nc / channels, c = nc % channels;
        const int64_t lo = std::max<int64_t>(0, c - before), hi = std::min<int64_t>(channels - 1, c + after);
        for (int64_t s = 0; s < spatial; ++s) {
          double sq = 0;
          for (int64_t k = lo; k <= hi; ++k) {
            const double v = load_d(in, (n * channels + k) * spatial + s);
            sq += v * v;
          }
          const int64_t off = nc * spatial + s;
          store_d(out, off, load_d(in, off) / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
        }
      }
    });
  });
}

void lp_norm(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t p = ctx.info().get_int("p", 2);
  if (p != 1 && p != 2) ctx.fail(fmt::format("attribute 'p' is {}; only 1 and 2 are supported", p));
  if (x.rank() == 0) ctx.fail("input must have rank 1 or more, got a scalar");
  const int64_t axis = checked_axis(ctx.info().get_int("axis", -1), x.rank());
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  const int64_t n = x.dim(static_cast<int>(axis));
  const int64_t inner = dims_product(x.shape(), static_cast<size_t>(axis) + 1, x.shape().size());
  const int64_t outer = dims_product(x.shape(), 0, static_cast<size_t>(axis));
  rt::dispatch(rt::FloatTypes{}, x.dtype(), "LpNormalization", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    ctx.threads().parallel_for(outer * inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, n)),
                               [&](int64_t b, int64_t e) {
                                 for (int64_t g = b; g < e; ++g) {
                                   const int64_t base = (g / inner) * n * inner + g % inner;
                                   double norm = 0;
                                   for (int64_t r = 0; r < n; ++r) {
                                     const double v = load_d(in, base + r * inner);
                                     norm += p == 1 ? std::abs(v) : v * v;
                                   }
                                   if (p == 2) norm = std::sqrt(norm);
                                   for (int64_t r = 0; r < n; ++r) {
                                     const int64_t off = base + r * inner;
                                     store_d(out, off, norm == 0 ? 0.0 : load_d(in, off) / norm);
                                   }
                                 }
                               });
  });
}

void mvn(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  std::vector<bool> mask(static_cast<size_t>(rank), false);
  for (int64_t a : ctx.info().get_ints("axes", {0, 2, 3})) {
    const int64_t k = checked_axis(a, rank, "axes value");
    if (mask[static_cast<size_t>(k)]) ctx.fail(fmt::format("axis {} is listed twice in 'axes'", a));
    mask[static_cast<size_t>(k)] = true;
  }
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  const ReduceView view(x.shape(), mask);
  rt::dispatch(rt::FloatTypes{}, x.dtype(), "MeanVarianceNormalization", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    const auto count = static_cast<double>(view.reduced);
    ctx.threads().parallel_for(view.groups, 1, [&](int64_t b, int64_t e) {
      for (int64_t g = b; g < e; ++g) {
        double sum = 0, sq = 0;
        view.for_each_in_group(g, [&](int64_t o) { sum += load_d(in, o); });
        const double mean = count > 0 ? sum / count : 0;
        view.for_each_in_group(g, [&](int64_t o) {
          const double d = load_d(in, o) - mean;
          sq += d * d;
        });
        const double sd = std::sqrt(count > 0 ? sq / count : 0) + 1e-9;
        view.for_each_in_group(g, [&](int64_t o) { store_d(out, o, (load_d(in, o) - mean) / sd); });
      }
    });
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(nn_local_normalization) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("LRN", lrn));
  reg.add(KernelDef::fn("LpNormalization", lp_norm));
  reg.add(KernelDef::fn("MeanVarianceNormalization", mvn));
}
