// Reference kernels of the Reduce* operators. Axes come from the attribute (before opset 13 for
// ReduceSum, 18 for the others) or from the optional second input; an empty set reduces every axis,
// or none with noop_with_empty_axes (each element is then "reduced" on its own: ReduceSumSquare squares
// it, as the ONNX reference does). Reducing an empty set gives the identity of the reduction (0, 1,
// -inf for ReduceMax and ReduceLogSum...). Floating-point data accumulates in double; integers wrap.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <set>

#include "ops/reduce/reduce_kernel_util.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;
using rt::KernelContext;
using rt::Shape;
using rt::Tensor;

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// The accumulator of reduction K over elements of type T: double for floating point, for the
// logarithmic/root reductions of integers too; 64-bit two's complement (wrapping) for other integers.
template <Kind K, class T>
struct Reducer {
  static constexpr bool kFloatAcc =
      rt::is_float_v<T> || K == Kind::kL2 || K == Kind::kLogSum || K == Kind::kLogSumExp;
  using Acc =
      std::conditional_t<kFloatAcc, double, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
  // The running state; `m` is the running maximum of ReduceLogSumExp (online log-sum-exp).
  struct State {
    Acc acc;
    double m;
  };

  static State init() {
    if constexpr (K == Kind::kProd) return {Acc(1), 0};
    if constexpr (K == Kind::kMax) {
      if constexpr (kFloatAcc)
        return {-std::numeric_limits<double>::infinity(), 0};
      else if constexpr (std::is_same_v<T, bool>)
        return {Acc(0), 0};
      else
        return {static_cast<Acc>(std::numeric_limits<T>::lowest()), 0};
    }
    if constexpr (K == Kind::kMin) {
      if constexpr (kFloatAcc)
        return {std::numeric_limits<double>::infinity(), 0};
      else if constexpr (std::is_same_v<T, bool>)
        return {Acc(1), 0};
      else
        return {static_cast<Acc>(std::numeric_limits<T>::max()), 0};
    }
    if constexpr (K == Kind::kLogSumExp) return {0.0, -std::numeric_limits<double>::infinity()};
    return {Acc(0), 0};
  }

  static Acc load(T v) {
    if constexpr (kFloatAcc)
      return static_cast<double>(static_cast<rt::compute_t<T>>(v));
    else
      return static_cast<Acc>(v);
  }

  // Integer adds and multiplies go through uint64 so that overflow wraps instead of being undefined.
  static Acc add(Acc a, Acc b) {
    if constexpr (kFloatAcc)
      return a + b;
    else
      return static_cast<Acc>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  }
  static Acc mul(Acc a, Acc b) {
    if constexpr (kFloatAcc)
      return a * b;
    else
      return static_cast<Acc>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  }

  static void update(State& s, T raw) {
    Acc x = load(raw);
    if constexpr (K == Kind::kSum || K == Kind::kMean || K == Kind::kLogSum) {
      s.acc = add(s.acc, x);
    } else if constexpr (K == Kind::kProd) {
      s.acc = mul(s.acc, x);
    } else if constexpr (K == Kind::kSumSquare || K == Kind::kL2) {
      s.acc = add(s.acc, mul(x, x));
    } else if constexpr (K == Kind::kL1) {
      if constexpr (std::is_signed_v<Acc>)
        s.acc = add(s.acc, x < 0 ? mul(x, Acc(-1)) : x);
      else
        s.acc = add(s.acc, x);
    } else if constexpr (K == Kind::kMax) {
      if (x > s.acc || x != x) s.acc = s.acc != s.acc ? s.acc : x;  // NaN propagates
    } else if constexpr (K == Kind::kMin) {
      if (x < s.acc || x != x) s.acc = s.acc != s.acc ? s.acc : x;
    } else if constexpr (K == Kind::kLogSumExp) {
      // Online log-sum-exp: acc is sum(exp(x - m)) for the running maximum m.
      if (std::isnan(x)) {
        s.m = x;
        s.acc = x;
      } else if (x == -std::numeric_limits<double>::infinity()) {
        return;  // exp(-inf) adds nothing
      } else if (x > s.m) {
        s.acc = s.acc * std::exp(s.m - x) + 1.0;
        s.m = x;
      } else if (x == s.m) {
        s.acc += 1.0;
      } else {
        s.acc += std::exp(x - s.m);
      }
    }
  }

  static T finish(const State& s, int64_t count) {
    double d = 0;
    if constexpr (K == Kind::kMean) {
      if constexpr (kFloatAcc) {
        d = s.acc / static_cast<double>(count);
      } else {
        if (count == 0) return T(0);
        return static_cast<T>(s.acc / static_cast<Acc>(count));
      }
    } else if constexpr (K == Kind::kL2) {
      d = std::sqrt(s.acc);
    } else if constexpr (K == Kind::kLogSum) {
      d = std::log(s.acc);
    } else if constexpr (K == Kind::kLogSumExp) {
      d = std::isnan(s.m) ? s.m
                          : (s.acc == 0 ? -std::numeric_limits<double>::infinity() : std::log(s.acc) + s.m);
    } else if constexpr (kFloatAcc) {
      d = s.acc;
    } else {
      if constexpr (std::is_same_v<T, bool>)
        return s.acc != 0;
      else
        return static_cast<T>(s.acc);
    }
    if constexpr (rt::is_float_v<T>) {
      T out;
      store_d(&out, 0, d);
      return out;
    } else {
      // Integer data through a logarithmic reduction: truncate, saturating on overflow and NaN.
      if (std::isnan(d)) return T(0);
      if (d <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
      if (d >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
      return static_cast<T>(d);
    }
  }
};

// The axes to reduce as a mask; `noop` when the set is empty and noop_with_empty_axes is set.
std::vector<bool> reduce_mask(const KernelContext& ctx, int input_axes_at, int64_t rank, bool& noop) {
  std::vector<int64_t> axes;
  bool from_input = ctx.info().since_version() >= input_axes_at;
  if (from_input) {
    if (const Tensor* a = ctx.optional_input(1)) {
      if (a->rank() > 1)
        ctx.fail(fmt::format("input 'axes' must be 1-D, got shape {}", rt::shape_str(a->shape())));
      axes = a->to_int64_vector();
    }
  } else if (ctx.info().has_attr("axes")) {
    axes = ctx.info().get_ints("axes");
  }
  noop = false;
  if (axes.empty()) {
    noop = from_input && ctx.info().get_int("noop_with_empty_axes", 0) != 0;
    return std::vector<bool>(static_cast<size_t>(rank), !noop);
  }
  std::vector<bool> mask(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    int64_t k = checked_axis(a, rank, "axes value");
    if (mask[static_cast<size_t>(k)]) ctx.fail(fmt::format("axis {} is listed twice in 'axes'", a));
    mask[static_cast<size_t>(k)] = true;
  }
  return mask;
}

template <Kind K, class T>
void reduce_typed(KernelContext& ctx, const Tensor& x, const std::vector<bool>& mask, bool keepdims) {
  using R = Reducer<K, T>;
  Shape out_shape;
  for (size_t i = 0; i < mask.size(); ++i) {
    if (!mask[i])
      out_shape.push_back(x.shape()[i]);
    else if (keepdims)
      out_shape.push_back(1);
  }
  Tensor& y = ctx.output(0, x.dtype(), out_shape);
  ReduceView view(x.shape(), mask);
  const T* in = x.data<T>();
  T* out = y.data<T>();
  const int64_t n = view.reduced;
  if (view.contiguous && view.inner > 1) {
    // [outer, n, inner]: walk rows of the reduced axis, updating `inner` accumulators at a time.
    const int64_t inner = view.inner;
    ctx.threads().parallel_for(view.outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n * inner)),
                               [&](int64_t b, int64_t e) {
                                 std::vector<typename R::State> st(static_cast<size_t>(inner));
                                 for (int64_t o = b; o < e; ++o) {
                                   for (auto& s : st) s = R::init();
                                   const T* base = in + o * n * inner;
                                   for (int64_t r = 0; r < n; ++r)
                                     for (int64_t i = 0; i < inner; ++i)
                                       R::update(st[static_cast<size_t>(i)], base[r * inner + i]);
                                   for (int64_t i = 0; i < inner; ++i)
                                     out[o * inner + i] = R::finish(st[static_cast<size_t>(i)], n);
                                 }
                               });
    return;
  }
  ctx.threads().parallel_for(view.groups, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n)),
                             [&](int64_t b, int64_t e) {
                               for (int64_t g = b; g < e; ++g) {
                                 auto s = R::init();
                                 view.for_each_in_group(g, [&](int64_t off) { R::update(s, in[off]); });
                                 out[g] = R::finish(s, n);
                               }
                             });
}

template <Kind K>
void reduce(KernelContext& ctx, int input_axes_at) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  bool noop = false;
  std::vector<bool> mask = reduce_mask(ctx, input_axes_at, rank, noop);
  bool keepdims = ctx.info().get_int("keepdims", 1) != 0;
  auto run = [&]<class T>() { reduce_typed<K, T>(ctx, x, mask, keepdims || noop); };
  if constexpr (K == Kind::kMax || K == Kind::kMin) {
    rt::dispatch(rt::NumericBoolTypes{}, x.dtype(), ctx.info().op_type(), run);
  } else {
    rt::dispatch(rt::NumericTypes{}, x.dtype(), ctx.info().op_type(), run);
  }
}

void reduce_sum(KernelContext& ctx) {
  reduce<Kind::kSum>(ctx, 13);
}
void reduce_mean(KernelContext& ctx) {
  reduce<Kind::kMean>(ctx, 18);
}
void reduce_max(KernelContext& ctx) {
  reduce<Kind::kMax>(ctx, 18);
}
void reduce_min(KernelContext& ctx) {
  reduce<Kind::kMin>(ctx, 18);
}
void reduce_prod(KernelContext& ctx) {
  reduce<Kind::kProd>(ctx, 18);
}
void reduce_l1(KernelContext& ctx) {
  reduce<Kind::kL1>(ctx, 18);
}
void reduce_l2(KernelContext& ctx) {
  reduce<Kind::kL2>(ctx, 18);
}
void reduce_log_sum(KernelContext& ctx) {
  reduce<Kind::kLogSum>(ctx, 18);
}
void reduce_log_sum_exp(KernelContext& ctx) {
  reduce<Kind::kLogSumExp>(ctx, 18);
}
void reduce_sum_square(KernelContext& ctx) {
  reduce<Kind::kSumSquare>(ctx, 18);
}

}  // namespace

TESSERA_REGISTER_KERNELS(reduce_reduce) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("ReduceSum", reduce_sum));
  reg.add(KernelDef::fn("ReduceMean", reduce_mean));
  reg.add(KernelDef::fn("ReduceMax", reduce_max));
  reg.add(KernelDef::fn("ReduceMin", reduce_min));
  reg.add(KernelDef::fn("ReduceProd", reduce_prod));
  reg.add(KernelDef::fn("ReduceL1", reduce_l1));
  reg.add(KernelDef::fn("ReduceL2", reduce_l2));
  reg.add(KernelDef::fn("ReduceLogSum", reduce_log_sum));
  reg.add(KernelDef::fn("ReduceLogSumExp", reduce_log_sum_exp));
  reg.add(KernelDef::fn("ReduceSumSquare", reduce_sum_square));
}
