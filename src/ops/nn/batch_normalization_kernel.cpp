// Reference kernel of BatchNormalization. At inference Y = scale * (X - mean) / sqrt(var + epsilon) + B
// per channel. In training (training_mode=1 from opset 14; before that, when the node asks for the
// statistics outputs) the batch mean and (population) variance over N and the spatial axes normalize
// X, and the running statistics are input * momentum + batch * (1 - momentum). Before opset 9,
// spatial=0 gives parameters of shape [C, D1, ...] (one per channel and position).
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

const char* kNames[] = {"X", "scale", "B", "mean", "var"};

// Writes `v` (one value per channel or position) into output `i` of the dtype of input `like`.
void write_stat(KernelContext& ctx, size_t i, const Tensor& like, const std::vector<double>& v) {
  if (!ctx.wants_output(i)) return;
  Tensor& t = ctx.output(i, like.dtype(), like.shape());
  rt::dispatch(rt::FloatTypes{}, like.dtype(), "BatchNormalization", [&]<class T>() {
    T* p = t.data<T>();
    for (size_t k = 0; k < v.size(); ++k) store_d(p, static_cast<int64_t>(k), v[k]);
  });
}

void batch_norm(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int ver = ctx.info().since_version();
  if (x.rank() < 2)
    ctx.fail(fmt::format("input 'X' must be [N, C, ...] (rank 2 or more), got {}", rt::shape_str(x.shape())));
  const Shape& s = x.shape();
  const int64_t batch = s[0], channels = s[1];
  const int64_t spatial = dims_product(s, 2, s.size());
  // Parameters per channel, or (spatial=0 before opset 9) per channel and position.
  const bool per_position = ver < 9 && ctx.info().get_int("spatial", 1) == 0;
  const int64_t groups = per_position ? channels * spatial : channels;
  std::vector<std::vector<double>> p(5);
  for (size_t i = 1; i <= 4; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.numel() != groups) {
      ctx.fail(fmt::format("input {} ('{}') has {} values, expected {} ({} of X {})", i, kNames[i], t.numel(),
                           groups, per_position ? "one per channel and position" : "one per channel",
                           rt::shape_str(s)));
    }
    p[i] = float_values(t, "BatchNormalization");
  }
  const double eps = ctx.info().get_float("epsilon", 1e-5f);
  const bool training =
      ver >= 14 ? ctx.info().get_int("training_mode", 0) != 0 : ctx.output_count() > 1 && ctx.wants_output(1);
  // Per-group element walk: group g covers channel g (or position g) over the batch.
  const int64_t inner = per_position ? 1 : spatial;
  const int64_t per_batch = channels * spatial;
  auto for_each = [&](int64_t g, auto&& fn) {
    for (int64_t nb = 0; nb < batch; ++nb) {
      const int64_t base = nb * per_batch + g * inner;
      for (int64_t k = 0; k < inner; ++k) fn(base + k);
    }
  };
  Tensor& y = ctx.output(0, x.dtype(), s);
  rt::dispatch(rt::FloatTypes{}, x.dtype(), "BatchNormalization", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    std::vector<double> mean = p[3], var = p[4];
    if (training) {
      const double count = static_cast<double>(batch * inner);
      for (int64_t g = 0; g < groups; ++g) {
        double sum = 0, sq = 0;
        for_each(g, [&](int64_t o) { sum += load_d(in, o); });
        const double m = count > 0 ? sum / count : 0;
        for_each(g, [&](int64_t o) { sq += (load_d(in, o) - m) * (load_d(in, o) - m); });
        mean[static_cast<size_t>(g)] = m;
        var[static_cast<size_t>(g)] = count > 0 ? sq / count : 0;
      }
    }
    ctx.threads().parallel_for(groups, 1, [&](int64_t b, int64_t e) {
      for (int64_t g = b; g < e; ++g) {
        const auto gi = static_cast<size_t>(g);
        const double a = p[1][gi] / std::sqrt(var[gi] + eps);
        const double c = p[2][gi] - mean[gi] * a;
        for_each(g, [&](int64_t o) { store_d(out, o, load_d(in, o) * a + c); });
      }
    });
    if (!training) {
      // Inference with the statistics outputs of opset 14+: they are the given statistics.
      for (size_t o = 1; o < ctx.output_count() && o <= 2; ++o)
        write_stat(ctx, o, ctx.input(o + 2), p[o + 2]);
      return;
    }
    const double momentum = ctx.info().get_float("momentum", 0.9f);
    std::vector<double> run_mean(mean.size()), run_var(var.size());
    for (size_t g = 0; g < mean.size(); ++g) {
      run_mean[g] = p[3][g] * momentum + mean[g] * (1 - momentum);
      run_var[g] = p[4][g] * momentum + var[g] * (1 - momentum);
    }
    write_stat(ctx, 1, ctx.input(3), run_mean);
    write_stat(ctx, 2, ctx.input(4), run_var);
    if (ver < 14) {
      write_stat(ctx, 3, ctx.input(3), mean);
      write_stat(ctx, 4, ctx.input(4), var);
    }
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(nn_batch_normalization) {
  reg.add(tessera::rt::KernelDef::fn("BatchNormalization", batch_norm));
}
