// Reference kernel of GroupNormalization: the channels of each sample split into num_groups groups,
// each normalized over its channels and spatial positions, then scaled and shifted. Opset 18 takes
// scale and bias per group ([num_groups]); opset 21 per channel ([C]). Statistics in double.
#include <fmt/format.h>

#include <cmath>

#include "ops/reduce/reduce_kernel_util.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Tensor;

void group_norm(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2)
    ctx.fail(fmt::format("input 'X' must be [N, C, ...] (rank 2 or more), got {}", rt::shape_str(x.shape())));
  const int64_t batch = x.dim(0), channels = x.dim(1);
  const int64_t spatial = dims_product(x.shape(), 2, x.shape().size());
  const int64_t groups = ctx.info().get_int("num_groups");
  if (groups < 1) ctx.fail(fmt::format("attribute 'num_groups' is {}; it must be at least 1", groups));
  if (channels % groups != 0)
    ctx.fail(fmt::format("X {} has {} channels, which num_groups {} does not divide",
                         rt::shape_str(x.shape()), channels, groups));
  const bool per_group = ctx.info().since_version() < 21;
  const int64_t want = per_group ? groups : channels;
  const char* names[] = {"X", "scale", "bias"};
  std::vector<double> scale, bias;
  for (size_t i = 1; i <= 2; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.numel() != want)
      ctx.fail(fmt::format("input {} ('{}') has {} values, expected {} (one per {})", i, names[i], t.numel(),
                           want, per_group ? "group" : "channel"));
    (i == 1 ? scale : bias) = float_values(t, "GroupNormalization");
  }
  const double eps = ctx.info().get_float("epsilon", 1e-5f);
  const int64_t per_group_ch = channels / groups;
  const int64_t size = per_group_ch * spatial;  // elements of one group of one sample
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  rt::dispatch(rt::FloatTypes{}, x.dtype(), "GroupNormalization", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    ctx.threads().parallel_for(batch * groups, 1, [&](int64_t b, int64_t e) {
      for (int64_t ng = b; ng < e; ++ng) {
        const int64_t base = ng * size;
        const int64_t g = ng % groups;
        double sum = 0, sq = 0;
        for (int64_t k = 0; k < size; ++k) sum += load_d(in, base + k);
        const double mean = size > 0 ? sum / static_cast<double>(size) : 0;
        for (int64_t k = 0; k < size; ++k) {
          const double d = load_d(in, base + k) - mean;
          sq += d * d;
        }
        const double inv = 1.0 / std::sqrt((size > 0 ? sq / static_cast<double>(size) : 0) + eps);
        for (int64_t c = 0; c < per_group_ch; ++c) {
          const auto p = static_cast<size_t>(per_group ? g : g * per_group_ch + c);
          const int64_t cb = base + c * spatial;
          for (int64_t k = 0; k < spatial; ++k)
            store_d(out, cb + k, (load_d(in, cb + k) - mean) * inv * scale[p] + bias[p]);
        }
      }
    });
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(nn_group_normalization) {
  reg.add(tessera::rt::KernelDef::fn("GroupNormalization", group_norm));
}
