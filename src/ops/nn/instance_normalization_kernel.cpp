// Reference kernel of InstanceNormalization: each channel of each sample is normalized over its
// spatial positions, y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c], statistics in double.
#include <fmt/format.h>

#include <cmath>

#include "ops/reduce/reduce_kernel_util.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Tensor;

void instance_norm(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2)
    ctx.fail(
        fmt::format("input 'input' must be [N, C, ...] (rank 2 or more), got {}", rt::shape_str(x.shape())));
  const int64_t batch = x.dim(0), channels = x.dim(1);
  const int64_t spatial = dims_product(x.shape(), 2, x.shape().size());
  const char* names[] = {"input", "scale", "B"};
  std::vector<double> scale, bias;
  for (size_t i = 1; i <= 2; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.numel() != channels)
      ctx.fail(fmt::format("input {} ('{}') has {} values but X {} has {} channels", i, names[i], t.numel(),
                           rt::shape_str(x.shape()), channels));
    (i == 1 ? scale : bias) = float_values(t, "InstanceNormalization");
  }
  const double eps = ctx.info().get_float("epsilon", 1e-5f);
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  rt::dispatch(rt::FloatTypes{}, x.dtype(), "InstanceNormalization", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    ctx.threads().parallel_for(batch * channels, 1, [&](int64_t b, int64_t e) {
      for (int64_t g = b; g < e; ++g) {
        const int64_t base = g * spatial;
        const auto c = static_cast<size_t>(g % channels);
        double sum = 0, sq = 0;
        for (int64_t k = 0; k < spatial; ++k) sum += load_d(in, base + k);
        const double mean = spatial > 0 ? sum / static_cast<double>(spatial) : 0;
        for (int64_t k = 0; k < spatial; ++k) {
          const double d = load_d(in, base + k) - mean;
          sq += d * d;
        }
        const double var = spatial > 0 ? sq / static_cast<double>(spatial) : 0;
        const double a = scale[c] / std::sqrt(var + eps);
        for (int64_t k = 0; k < spatial; ++k)
          store_d(out, base + k, (load_d(in, base + k) - mean) * a + bias[c]);
      }
    });
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(nn_instance_normalization) {
  reg.add(tessera::rt::KernelDef::fn("InstanceNormalization", instance_norm));
}
