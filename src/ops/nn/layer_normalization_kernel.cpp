// Reference kernels of LayerNormalization and RMSNormalization. Both normalize X over the axes from
// `axis` to the end (each leading position is one row); Scale (and B) broadcast onto those trailing
// axes. Statistics are computed in double, which is at least as precise as any stash_type; the Mean
// and InvStdDev outputs of LayerNormalization have X's leading dims, ones after, in stash_type.
#include <fmt/format.h>

#include <cmath>

#include "ops/reduce/reduce_kernel_util.h"
#include "runtime/broadcast.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Shape;
using rt::Tensor;

// Input i broadcast onto the normalized (trailing) shape, as `inner` doubles.
std::vector<double> expand_trailing(const KernelContext& ctx, size_t i, const char* name, const Shape& norm) {
  const Tensor& t = ctx.input(i);
  const Shape& ts = t.shape();
  bool ok = ts.size() <= norm.size();
  for (size_t k = 0; ok && k < ts.size(); ++k) {
    const int64_t d = ts[ts.size() - 1 - k], nd = norm[norm.size() - 1 - k];
    ok = d == nd || d == 1;
  }
  if (!ok)
    ctx.fail(fmt::format("input {} ('{}') {} does not broadcast to the normalized axes {} of X", i, name,
                         rt::shape_str(ts), rt::shape_str(norm)));
  std::vector<double> src = float_values(t, ctx.info().op_type());
  const int64_t inner = rt::shape_numel(norm);
  std::vector<double> out(static_cast<size_t>(inner));
  if (t.numel() == inner) return src;
  std::vector<int64_t> strides = rt::broadcast_strides(ts, norm);
  for (int64_t e = 0; e < inner; ++e) {
    int64_t rem = e, off = 0;
    for (size_t d = norm.size(); d-- > 0;) {
      off += (rem % norm[d]) * strides[d];
      rem /= norm[d];
    }
    out[static_cast<size_t>(e)] = src[static_cast<size_t>(off)];
  }
  return out;
}

struct Rows {
  int64_t axis, rows, inner;
  Shape norm;
};

Rows rows_of(const KernelContext& ctx, const Tensor& x) {
  const int64_t rank = x.rank();
  if (rank == 0) ctx.fail("input 'X' must have rank 1 or more, got a scalar");
  const int64_t axis = checked_axis(ctx.info().get_int("axis", -1), rank);
  const Shape& s = x.shape();
  return {axis, dims_product(s, 0, static_cast<size_t>(axis)),
          dims_product(s, static_cast<size_t>(axis), s.size()), Shape(s.begin() + axis, s.end())};
}

rt::DataType stash_dtype(const KernelContext& ctx) {
  const int64_t t = ctx.info().get_int("stash_type", 1);
  const auto dt = static_cast<rt::DataType>(t);
  if (dt != rt::DataType::kFloat && dt != rt::DataType::kDouble && dt != rt::DataType::kFloat16 &&
      dt != rt::DataType::kBFloat16)
    ctx.fail(fmt::format("attribute 'stash_type' {} is not a floating-point data type", t));
  return dt;
}

void layer_norm(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Rows r = rows_of(ctx, x);
  const rt::DataType stash = stash_dtype(ctx);
  const std::vector<double> scale = expand_trailing(ctx, 1, "Scale", r.norm);
  std::vector<double> bias;
  if (ctx.optional_input(2)) bias = expand_trailing(ctx, 2, "B", r.norm);
  const double eps = ctx.info().get_float("epsilon", 1e-5f);
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  Shape stat_shape(x.shape().begin(), x.shape().begin() + r.axis);
  stat_shape.resize(x.shape().size(), 1);
  std::vector<double> means(static_cast<size_t>(r.rows)), inv(static_cast<size_t>(r.rows));
  rt::dispatch(rt::FloatTypes{}, x.dtype(), "LayerNormalization", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    const int64_t inner = r.inner;
    ctx.threads().parallel_for(r.rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, inner)),
                               [&](int64_t b, int64_t e) {
                                 for (int64_t row = b; row < e; ++row) {
                                   const int64_t base = row * inner;
                                   double sum = 0, sq = 0;
                                   for (int64_t k = 0; k < inner; ++k) sum += load_d(in, base + k);
                                   const double mean = inner > 0 ? sum / static_cast<double>(inner) : 0;
                                   for (int64_t k = 0; k < inner; ++k) {
                                     const double d = load_d(in, base + k) - mean;
                                     sq += d * d;
                                   }
                                   const double var = inner > 0 ? sq / static_cast<double>(inner) : 0;
                                   const double is = 1.0 / std::sqrt(var + eps);
                                   means[static_cast<size_t>(row)] = mean;
                                   inv[static_cast<size_t>(row)] = is;
                                   for (int64_t k = 0; k < inner; ++k) {
                                     const auto ks = static_cast<size_t>(k);
                                     double v = (load_d(in, base + k) - mean) * is * scale[ks];
                                     if (!bias.empty()) v += bias[ks];
                                     store_d(out, base + k, v);
                                   }
                                 }
                               });
  });
  for (size_t o = 1; o <= 2; ++o) {
    if (o >= ctx.output_count() || !ctx.wants_output(o)) continue;
    Tensor& t = ctx.output(o, stash, stat_shape);
    const std::vector<double>& v = o == 1 ? means : inv;
    rt::dispatch(rt::FloatTypes{}, stash, "LayerNormalization", [&]<class U>() {
      U* p = t.data<U>();
      for (size_t k = 0; k < v.size(); ++k) store_d(p, static_cast<int64_t>(k), v[k]);
    });
  }
}

void rms_norm(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Rows r = rows_of(ctx, x);
  stash_dtype(ctx);
  const std::vector<double> scale = expand_trailing(ctx, 1, "scale", r.norm);
  const double eps = ctx.info().get_float("epsilon", 1e-5f);
  const rt::DataType out_dt = ctx.input(1).dtype();
  Tensor& y = ctx.output(0, out_dt, x.shape());
  rt::dispatch(rt::FloatTypes{}, x.dtype(), "RMSNormalization", [&]<class T>() {
    rt::dispatch(rt::FloatTypes{}, out_dt, "RMSNormalization", [&]<class V>() {
      const T* in = x.data<T>();
      V* out = y.data<V>();
      const int64_t inner = r.inner;
      ctx.threads().parallel_for(
          r.rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, inner)), [&](int64_t b, int64_t e) {
            for (int64_t row = b; row < e; ++row) {
              const int64_t base = row * inner;
              double sq = 0;
              for (int64_t k = 0; k < inner; ++k) {
                const double v = load_d(in, base + k);
                sq += v * v;
              }
              const double ms = inner > 0 ? sq / static_cast<double>(inner) : 0;
              const double is = 1.0 / std::sqrt(ms + eps);
              for (int64_t k = 0; k < inner; ++k)
                store_d(out, base + k, load_d(in, base + k) * is * scale[static_cast<size_t>(k)]);
            }
          });
    });
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(nn_layer_normalization) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("LayerNormalization", layer_norm));
  reg.add(KernelDef::fn("RMSNormalization", rms_norm));
}
