// Reference kernels of MatMul, MatMulInteger and QLinearMatMul with numpy.matmul semantics: a 1-D A is a
// row vector, a 1-D B a column vector (the unit axis is dropped from the result), leading axes broadcast.
// Each matrix of the batch goes through the shared GEMM; many small matrices are split over threads by
// batch instead.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ops/nn/gemm_kernel_util.h"
#include "runtime/broadcast.h"
#include "runtime/dispatch.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Shape;
using rt::Tensor;

// The batch of matrix products of two operands: [M, K] x [K, N] per batch entry, at element offsets
// a_off[i] and b_off[i] of the operands.
struct MatMulPlan {
  int64_t m = 0, n = 0, k = 0;
  Shape out;
  std::vector<int64_t> a_off, b_off;
  int64_t batches() const { return static_cast<int64_t>(a_off.size()); }
};

MatMulPlan plan_matmul(const Shape& a, const Shape& b, const char* an, const char* bn) {
  if (a.empty())
    throw rt::KernelError(fmt::format("input {} is a scalar; matrix products need rank 1 or more", an));
  if (b.empty())
    throw rt::KernelError(fmt::format("input {} is a scalar; matrix products need rank 1 or more", bn));
  Shape sa = a.size() == 1 ? Shape{1, a[0]} : a;
  Shape sb = b.size() == 1 ? Shape{b[0], 1} : b;
  MatMulPlan p;
  p.m = sa[sa.size() - 2];
  p.k = sa.back();
  p.n = sb.back();
  if (sb[sb.size() - 2] != p.k) {
    throw rt::KernelError(
        fmt::format("input {} {} has {} columns but input {} {} has {} rows; they must match", an,
                    rt::shape_str(a), p.k, bn, rt::shape_str(b), sb[sb.size() - 2]));
  }
  Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  Shape batch = rt::broadcast_shapes(ba, bb);
  p.out = batch;
  if (a.size() >= 2) p.out.push_back(p.m);
  if (b.size() >= 2) p.out.push_back(p.n);
  rt::shape_numel(p.out);
  const int64_t count = rt::shape_numel(batch);
  std::vector<int64_t> stra = rt::broadcast_strides(ba, batch), strb = rt::broadcast_strides(bb, batch);
  const int64_t amat = p.m * p.k, bmat = p.k * p.n;
  p.a_off.resize(static_cast<size_t>(count));
  p.b_off.resize(static_cast<size_t>(count));
  std::vector<int64_t> idx(batch.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      oa += idx[d] * stra[d];
      ob += idx[d] * strb[d];
    }
    p.a_off[static_cast<size_t>(i)] = oa * amat;
    p.b_off[static_cast<size_t>(i)] = ob * bmat;
    for (size_t d = batch.size(); d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  return p;
}

// Runs fn(batch index, pool for the product) over the batch: threads over batch entries when there are
// enough small products, else one product at a time with the threads inside it.
template <class F>
void for_each_batch(rt::ThreadPool& pool, const MatMulPlan& p, F&& fn) {
  const int64_t work = p.m * p.n * std::max<int64_t>(p.k, 1);
  if (p.batches() > 1 && work < (int64_t{1} << 21)) {
    pool.parallel_for(p.batches(), std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(work, 1)),
                      [&](int64_t b0, int64_t b1) {
                        for (int64_t i = b0; i < b1; ++i) fn(i, nullptr);
                      });
    return;
  }
  for (int64_t i = 0; i < p.batches(); ++i) fn(i, &pool);
}

void matmul(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype()) ctx.fail("inputs A and B must have the same element type");
  MatMulPlan p = plan_matmul(a.shape(), b.shape(), "A", "B");
  using Types = rt::TypeList<float, double, rt::Float16, rt::BFloat16, int32_t, int64_t, uint32_t, uint64_t>;
  rt::dispatch(Types{}, a.dtype(), "MatMul", [&]<class T>() {
    Tensor& y = ctx.output(0, a.dtype(), p.out);
    const int64_t ymat = p.m * p.n;
    if constexpr (rt::is_float_v<T>) {
      using F = real_t<T>;
      std::vector<F> ab, bb, yb;
      const F* ap = as_real<F>(a.data<T>(), a.numel(), ab);
      const F* bp = as_real<F>(b.data<T>(), b.numel(), bb);
      F* yp = nullptr;
      if constexpr (std::is_same_v<F, T>) {
        yp = y.data<T>();
      } else {
        yb.resize(static_cast<size_t>(y.numel()));
        yp = yb.data();
      }
      for_each_batch(ctx.threads(), p, [&](int64_t i, rt::ThreadPool* tp) {
        gemm_real<F>(tp, false, false, p.m, p.n, p.k, F(1), ap + p.a_off[i], p.k, bp + p.b_off[i], p.n, F(0),
                     yp + i * ymat, p.n);
      });
      if constexpr (!std::is_same_v<F, T>) {
        T* out = y.data<T>();
        for (int64_t i = 0; i < y.numel(); ++i) out[i] = static_cast<T>(yb[static_cast<size_t>(i)]);
      }
    } else {
      using Acc = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
      const T* ap = a.data<T>();
      const T* bp = b.data<T>();
      T* yp = y.data<T>();
      for_each_batch(ctx.threads(), p, [&](int64_t i, rt::ThreadPool* tp) {
        gemm_generic<T, Acc>(tp, false, false, p.m, p.n, p.k, Acc(1), ap + p.a_off[i], p.k, bp + p.b_off[i],
                             p.n, Acc(0), yp + i * ymat, p.n);
      });
    }
  });
}

// ---- Integer forms -------------------------------------------------------------------------------

// Zero points (or scales) of a quantized operand: one value, or one per row of A ([M] or the batch
// shape with M last) / one per column of B ([N]...). `along` is M or N; `per_row` picks the layout.
struct PerAxis {
  std::vector<double> v;
  double at(int64_t i) const { return v.size() == 1 ? v[0] : v[static_cast<size_t>(i)]; }
};

PerAxis per_axis(const Tensor& t, const char* name, int64_t along) {
  PerAxis p;
  if (t.numel() != 1 && !(t.rank() == 1 && t.dim(0) == along)) {
    throw rt::KernelError(fmt::format("{} has shape {}; it must be a scalar or have {} values (one per {})",
                                      name, rt::shape_str(t.shape()), along,
                                      along == 1 ? "value" : "row or column"));
  }
  p.v.resize(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) p.v[static_cast<size_t>(i)] = t.to_double(i);
  return p;
}

// The operand as int32 values minus its zero point (per row of A or per column of B).
std::vector<int32_t> shifted(const Tensor& t, const Tensor* zp, const char* name, const char* zp_name,
                             bool rows, int64_t m, int64_t n) {
  PerAxis z{{0.0}};
  if (zp) {
    if (zp->dtype() != t.dtype())
      throw rt::KernelError(fmt::format("{} must have the element type of {}", zp_name, name));
    z = per_axis(*zp, zp_name, rows ? m : n);
  }
  std::vector<int32_t> out(static_cast<size_t>(t.numel()));
  rt::dispatch(rt::TypeList<int8_t, uint8_t>{}, t.dtype(), name, [&]<class T>() {
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      // Position along the zero points' axis: the row (A) or the column (B) of the element.
      int64_t pos =
          rows ? (i / std::max<int64_t>(n, 1)) % std::max<int64_t>(m, 1) : i % std::max<int64_t>(n, 1);
      out[static_cast<size_t>(i)] = static_cast<int32_t>(p[i]) - static_cast<int32_t>(z.at(pos));
    }
  });
  return out;
}

// The int32 products of the (shifted) operands for every batch entry: [batch, M, N].
std::vector<int32_t> matmul_int(rt::ThreadPool& pool, const MatMulPlan& p, const std::vector<int32_t>& a,
                                const std::vector<int32_t>& b) {
  std::vector<int32_t> y(static_cast<size_t>(rt::shape_numel(p.out)));
  for_each_batch(pool, p, [&](int64_t i, rt::ThreadPool* tp) {
    gemm_generic<int32_t, int64_t>(tp, false, false, p.m, p.n, p.k, 1, a.data() + p.a_off[i], p.k,
                                   b.data() + p.b_off[i], p.n, 0, y.data() + i * p.m * p.n, p.n);
  });
  return y;
}

void matmul_integer(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  MatMulPlan p = plan_matmul(a.shape(), b.shape(), "A", "B");
  std::vector<int32_t> as = shifted(a, ctx.optional_input(2), "A", "a_zero_point", true, p.m, p.k);
  std::vector<int32_t> bs = shifted(b, ctx.optional_input(3), "B", "b_zero_point", false, p.k, p.n);
  std::vector<int32_t> acc = matmul_int(ctx.threads(), p, as, bs);
  Tensor& y = ctx.output(0, rt::DataType::kInt32, p.out);
  std::copy(acc.begin(), acc.end(), y.data<int32_t>());
}

PerAxis scale(const Tensor& t, const char* name, int64_t along) {
  if ((t.dtype() != rt::DataType::kFloat && t.dtype() != rt::DataType::kFloat16 &&
       t.dtype() != rt::DataType::kBFloat16)) {
    throw rt::KernelError(fmt::format("{} must be float, float16 or bfloat16", name));
  }
  PerAxis p = per_axis(t, name, along);
  for (double v : p.v) {
    if (!std::isfinite(v) || v == 0)
      throw rt::KernelError(fmt::format("{} is {}; it must be finite and nonzero", name, v));
  }
  return p;
}

void qlinear_matmul(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(3);
  const Tensor& y_zp = ctx.input(7);
  MatMulPlan p = plan_matmul(a.shape(), b.shape(), "a", "b");
  PerAxis as = scale(ctx.input(1), "a_scale", p.m);
  PerAxis bs = scale(ctx.input(4), "b_scale", p.n);
  PerAxis ys = scale(ctx.input(6), "y_scale", 1);
  if (y_zp.numel() != 1) ctx.fail("y_zero_point must be a scalar");
  std::vector<int32_t> ai = shifted(a, &ctx.input(2), "a", "a_zero_point", true, p.m, p.k);
  std::vector<int32_t> bi = shifted(b, &ctx.input(5), "b", "b_zero_point", false, p.k, p.n);
  std::vector<int32_t> acc = matmul_int(ctx.threads(), p, ai, bi);
  const float zp = static_cast<float>(y_zp.to_int64(0));
  rt::dispatch(rt::TypeList<int8_t, uint8_t>{}, y_zp.dtype(), "QLinearMatMul", [&]<class T>() {
    Tensor& y = ctx.output(0, y_zp.dtype(), p.out);
    T* yp = y.data<T>();
    const int64_t mn = p.m * p.n;
    for (int64_t i = 0; i < y.numel(); ++i) {
      const int64_t r = (i % mn) / p.n, c = i % p.n;
      const float mult =
          static_cast<float>(as.at(r)) * static_cast<float>(bs.at(c)) / static_cast<float>(ys.at(0));
      float v = std::nearbyint(static_cast<float>(acc[static_cast<size_t>(i)]) * mult) + zp;
      v = std::min<float>(std::max<float>(v, std::numeric_limits<T>::min()), std::numeric_limits<T>::max());
      yp[i] = static_cast<T>(v);
    }
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(nn_mat_mul) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("MatMul", matmul));
  reg.add(KernelDef::fn("MatMulInteger", matmul_integer));
  reg.add(KernelDef::fn("QLinearMatMul", qlinear_matmul));
}
