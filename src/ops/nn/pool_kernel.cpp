// Reference kernels of AveragePool, MaxPool (with its Indices output) and LpPool over any number of
// spatial axes. Each (batch, channel) plane is pooled independently, the planes split over threads.
//
// Window positions outside the input (padding, or past its end with ceil_mode) are skipped; the average
// divides by the positions inside the input, or with count_include_pad by those inside the explicitly
// padded extent [-pad_begin, in + pad_end) (positions past it, which only ceil_mode produces, never
// count). MaxPool keeps the first maximum in window order; its Indices are flat indices into X, with the
// spatial part in column-major order when storage_order is 1.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ops/nn/window_kernel_util.h"
#include "runtime/dispatch.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Tensor;
namespace ir = tessera::ir;

enum class PoolKind { kAverage, kMax, kLp };

// Precomputed window walk of one pooling: the offsets of each kernel position along each axis.
struct PoolPlan {
  WindowGeom g;
  int64_t planes = 0;                // N * C
  std::vector<int64_t> koff;         // kernel_size x spatial: offset (k * dilation) of each position
  std::vector<int64_t> in_strides;   // row-major strides of X's spatial axes
  std::vector<int64_t> col_strides;  // column-major strides (storage_order 1)
};

PoolPlan plan_pool(const Tensor& x, const WindowAttrs& attrs) {
  if (x.rank() < 3) {
    throw rt::KernelError(fmt::format("input X has shape {}; pooling needs batch, channel and spatial axes",
                                      rt::shape_str(x.shape())));
  }
  PoolPlan p;
  std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
  p.g = resolve_window(attrs, in, {});
  p.planes = x.dim(0) * x.dim(1);
  const size_t s = p.g.spatial();
  const int64_t ks = p.g.kernel_size();
  p.koff.resize(static_cast<size_t>(ks) * s);
  for (int64_t kp = 0; kp < ks; ++kp) {
    int64_t r = kp;
    for (size_t d = s; d-- > 0;) {
      p.koff[static_cast<size_t>(kp) * s + d] = (r % p.g.kernel[d]) * p.g.dilations[d];
      r /= p.g.kernel[d];
    }
  }
  p.in_strides.assign(s, 1);
  p.col_strides.assign(s, 1);
  for (size_t d = s; d-- > 1;) p.in_strides[d - 1] = p.in_strides[d] * in[d];
  for (size_t d = 1; d < s; ++d) p.col_strides[d] = p.col_strides[d - 1] * in[d - 1];
  return p;
}

rt::Shape out_shape(const Tensor& x, const PoolPlan& p) {
  rt::Shape y{x.dim(0), x.dim(1)};
  y.insert(y.end(), p.g.out.begin(), p.g.out.end());
  rt::shape_numel(y);
  return y;
}

// Calls fn(plane, output offset in plane, window starts) for every output position, planes split over
// threads.
template <class F>
void for_each_output(rt::ThreadPool& pool, const PoolPlan& p, F&& fn) {
  const size_t s = p.g.spatial();
  const int64_t out = p.g.out_size();
  const int64_t work = out * p.g.kernel_size();
  pool.parallel_for(p.planes, std::max<int64_t>(1, 16384 / std::max<int64_t>(work, 1)),
                    [&](int64_t c0, int64_t c1) {
                      std::vector<int64_t> idx(s), start(s);
                      for (int64_t c = c0; c < c1; ++c) {
                        std::fill(idx.begin(), idx.end(), 0);
                        for (int64_t o = 0; o < out; ++o) {
                          for (size_t d = 0; d < s; ++d) start[d] = idx[d] * p.g.strides[d] - p.g.pads[d];
                          fn(c, o, start);
                          for (size_t d = s; d-- > 0;) {
                            if (++idx[d] < p.g.out[d]) break;
                            idx[d] = 0;
                          }
                        }
                      }
                    });
}

// Calls fn(row-major spatial offset, kernel position) for each window position inside X; returns how
// many positions lie inside the padded extent (for count_include_pad).
template <class F>
int64_t for_each_in_window(const PoolPlan& p, const std::vector<int64_t>& start, F&& fn) {
  const size_t s = p.g.spatial();
  const int64_t ks = p.g.kernel_size();
  int64_t padded_count = 0;
  for (int64_t kp = 0; kp < ks; ++kp) {
    const int64_t* off = p.koff.data() + static_cast<size_t>(kp) * s;
    bool inside = true, in_padded = true;
    int64_t flat = 0;
    for (size_t d = 0; d < s; ++d) {
      int64_t pos = start[d] + off[d];
      if (pos < 0 || pos >= p.g.in[d]) inside = false;
      if (pos < -p.g.pads[d] || pos >= p.g.in[d] + p.g.pads[d + s]) in_padded = false;
      flat += pos * p.in_strides[d];
    }
    if (in_padded) ++padded_count;
    if (inside) fn(flat, kp);
  }
  return padded_count;
}

class Pool : public rt::OpKernel {
 public:
  Pool(const rt::KernelInfo& info, PoolKind kind) : kind_(kind), attrs_(read_window_attrs(info)) {
    if (kind == PoolKind::kAverage) count_include_pad_ = info.get_int("count_include_pad", 0) != 0;
    if (kind == PoolKind::kMax) {
      storage_order_ = info.get_int("storage_order", 0);
      if (storage_order_ != 0 && storage_order_ != 1)
        throw rt::KernelError(fmt::format("storage_order is {}; it must be 0 or 1", storage_order_));
    }
    if (kind == PoolKind::kLp) {
      const ir::Attribute* a = info.attr("p");
      p_ = a && a->type == ir::AttrType::kFloat ? info.get_float("p")
                                                : static_cast<double>(info.get_int("p", 2));
      if (!(p_ > 0)) throw rt::KernelError(fmt::format("p is {}; it must be positive", p_));
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    PoolPlan p = plan_pool(x, attrs_);
    rt::Shape ys = out_shape(x, p);
    if (kind_ == PoolKind::kMax) {
      using Types = rt::TypeList<float, double, rt::Float16, rt::BFloat16, int8_t, uint8_t>;
      rt::dispatch(Types{}, x.dtype(), ctx.info().op_type(), [&]<class T>() { max_pool<T>(ctx, x, p, ys); });
      return;
    }
    rt::dispatch(rt::FloatTypes{}, x.dtype(), ctx.info().op_type(), [&]<class T>() {
      using C = rt::compute_t<T>;
      Tensor& y = ctx.output(0, x.dtype(), ys);
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      const int64_t in = p.g.in_size(), out = p.g.out_size();
      for_each_output(ctx.threads(), p, [&](int64_t c, int64_t o, const std::vector<int64_t>& start) {
        const T* plane = xp + c * in;
        C sum = 0;
        int64_t count = 0;
        int64_t padded = for_each_in_window(p, start, [&](int64_t flat, int64_t) {
          C v = static_cast<C>(plane[flat]);
          if (kind_ == PoolKind::kAverage) {
            sum += v;
          } else {
            sum += static_cast<C>(std::pow(std::abs(v), static_cast<C>(p_)));
          }
          ++count;
        });
        C r;
        if (kind_ == PoolKind::kAverage) {
          int64_t div = count_include_pad_ ? padded : count;
          r = div > 0 ? sum / static_cast<C>(div) : std::numeric_limits<C>::quiet_NaN();
        } else {
          r = static_cast<C>(std::pow(sum, static_cast<C>(1.0 / p_)));
        }
        yp[c * out + o] = static_cast<T>(r);
      });
    });
  }

 private:
  template <class T>
  void max_pool(KernelContext& ctx, const Tensor& x, const PoolPlan& p, const rt::Shape& ys) const {
    using C = rt::compute_t<T>;
    Tensor& y = ctx.output(0, x.dtype(), ys);
    const bool want_indices = ctx.output_count() > 1 && ctx.wants_output(1);
    int64_t* ip = want_indices ? ctx.output(1, rt::DataType::kInt64, ys).data<int64_t>() : nullptr;
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    const int64_t in = p.g.in_size(), out = p.g.out_size();
    const size_t s = p.g.spatial();
    for_each_output(ctx.threads(), p, [&](int64_t c, int64_t o, const std::vector<int64_t>& start) {
      const T* plane = xp + c * in;
      C best = std::numeric_limits<C>::lowest();
      if constexpr (std::numeric_limits<C>::has_infinity) best = -std::numeric_limits<C>::infinity();
      int64_t best_flat = -1, best_kp = -1;
      for_each_in_window(p, start, [&](int64_t flat, int64_t kp) {
        C v = static_cast<C>(plane[flat]);
        if (best_flat < 0 || v > best) {
          best = v;
          best_flat = flat;
          best_kp = kp;
        }
      });
      yp[c * out + o] = static_cast<T>(best);
      if (!ip) return;
      int64_t index = best_flat;
      if (best_flat >= 0 && storage_order_ == 1) {
        index = 0;
        const int64_t* off = p.koff.data() + static_cast<size_t>(best_kp) * s;
        for (size_t d = 0; d < s; ++d) index += (start[d] + off[d]) * p.col_strides[d];
      }
      ip[c * out + o] = best_flat < 0 ? -1 : c * in + index;
    });
  }

  PoolKind kind_;
  WindowAttrs attrs_;
  bool count_include_pad_ = false;
  int64_t storage_order_ = 0;
  double p_ = 2;
};

struct AveragePool : Pool {
  explicit AveragePool(const rt::KernelInfo& info) : Pool(info, PoolKind::kAverage) {}
};
struct MaxPool : Pool {
  explicit MaxPool(const rt::KernelInfo& info) : Pool(info, PoolKind::kMax) {}
};
struct LpPool : Pool {
  explicit LpPool(const rt::KernelInfo& info) : Pool(info, PoolKind::kLp) {}
};

}  // namespace

TESSERA_REGISTER_KERNELS(nn_pool) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::of<AveragePool>("AveragePool"));
  reg.add(KernelDef::of<MaxPool>("MaxPool"));
  reg.add(KernelDef::of<LpPool>("LpPool"));
}
