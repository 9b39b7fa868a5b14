#include <climits>
#include <type_traits>

#include "backends/cuda/reduce_ops.h"
#include "backends/cuda/reduce_team.cuh"

namespace tessera::cuda {

namespace {

// Offset of index i of a row-major index space given by dims/strides (the outermost dim needs no
// modulo: i is below the space's size).
__device__ __forceinline__ int64_t decode(int64_t i, int rank, const int64_t* dims, const int64_t* strides) {
  int64_t off = 0;
  for (int d = rank - 1; d > 0; --d) {
    off += (i % dims[d]) * strides[d];
    i /= dims[d];
  }
  return rank > 0 ? off + i * strides[0] : 0;
}

template <class T>
struct IsInt : std::false_type {};
template <>
struct IsInt<int32_t> : std::true_type {};
template <>
struct IsInt<int64_t> : std::true_type {};
template <>
struct IsInt<bool> : std::true_type {};

// The accumulator: long long for integers and bool, double for double, float for the other floats.
template <class T>
using AccOf = std::conditional_t<IsInt<T>::value, long long,
                                 std::conditional_t<std::is_same_v<T, double>, double, float>>;

// Element loads as the accumulator type: float for the float types, long long for integers.
template <class T>
__device__ __forceinline__ auto load_acc(const T* p, int64_t i) {
  if constexpr (IsInt<T>::value)
    return static_cast<long long>(p[i]);
  else if constexpr (std::is_same_v<T, double>)
    return p[i];
  else
    return load(p, i);
}

template <class T>
__device__ __forceinline__ void store_acc(T* p, int64_t i, long long v) {
  p[i] = static_cast<T>(v);
}
template <class T>
__device__ __forceinline__ void store_acc(T* p, int64_t i, float v) {
  store(p, i, v);
}
__device__ __forceinline__ void store_acc(double* p, int64_t i, double v) {
  p[i] = v;
}
__device__ __forceinline__ void store_acc(bool* p, int64_t i, long long v) {
  p[i] = v != 0;
}

// Integer adds and multiplies through unsigned 64-bit so that overflow wraps (not undefined).
__device__ __forceinline__ long long wrap_add(long long a, long long b) {
  return static_cast<long long>(static_cast<unsigned long long>(a) + static_cast<unsigned long long>(b));
}
__device__ __forceinline__ long long wrap_mul(long long a, long long b) {
  return static_cast<long long>(static_cast<unsigned long long>(a) * static_cast<unsigned long long>(b));
}

__host__ __device__ constexpr bool additive(ReduceKind k) {
  return k == ReduceKind::kSum || k == ReduceKind::kMean || k == ReduceKind::kL1 || k == ReduceKind::kL2 ||
         k == ReduceKind::kLogSum || k == ReduceKind::kSumSquare;
}

// What one element contributes: x, |x| or x*x.
template <ReduceKind K, class A>
__device__ __forceinline__ A contribution(A x) {
  if constexpr (K == ReduceKind::kL1) {
    if constexpr (std::is_same_v<A, long long>)
      return x < 0 ? wrap_mul(x, -1) : x;
    else
      return x < A(0) ? -x : x;
  }
  if constexpr (K == ReduceKind::kL2 || K == ReduceKind::kSumSquare) {
    if constexpr (std::is_same_v<A, long long>)
      return wrap_mul(x, x);
    else
      return x * x;
  }
  return x;
}

template <ReduceKind K, class A>
struct Combine {
  __device__ A operator()(A a, A b) const {
    if constexpr (std::is_same_v<A, long long>) {
      if constexpr (K == ReduceKind::kMax) return a > b ? a : b;
      if constexpr (K == ReduceKind::kMin) return a < b ? a : b;
      if constexpr (K == ReduceKind::kProd) return wrap_mul(a, b);
      return wrap_add(a, b);
    } else {
      if constexpr (K == ReduceKind::kMax || K == ReduceKind::kLogSumExp) return nan_max(a, b);
      if constexpr (K == ReduceKind::kMin) return nan_min(a, b);
      if constexpr (K == ReduceKind::kProd) return a * b;
      return a + b;
    }
  }
};

template <ReduceKind K, class T, class A>
__device__ __forceinline__ A identity() {
  if constexpr (K == ReduceKind::kProd) return A(1);
  if constexpr (K == ReduceKind::kMax || K == ReduceKind::kLogSumExp) {
    if constexpr (std::is_same_v<T, int32_t>) return INT_MIN;
    if constexpr (std::is_same_v<T, int64_t>) return LLONG_MIN;
    if constexpr (!std::is_same_v<A, long long>) return A(-INFINITY);
  }
  if constexpr (K == ReduceKind::kMin) {
    if constexpr (std::is_same_v<T, int32_t>) return INT_MAX;
    if constexpr (std::is_same_v<T, int64_t>) return LLONG_MAX;
    if constexpr (std::is_same_v<T, bool>) return 1;
    if constexpr (!std::is_same_v<A, long long>) return A(INFINITY);
  }
  return A(0);
}

// The team's reduction of group g's elements mapped by `contribution`.
template <ReduceKind K, int Team, class T, class A>
__device__ A reduce_group(const T* x, int64_t base, int lane, const ReduceGeom& geom) {
  using C = Combine<K, A>;
  if constexpr (additive(K) && std::is_same_v<A, float>) {
    KahanSum acc;
    for (int64_t r = lane; r < geom.n; r += Team)
      acc.add(contribution<K>(load_acc(x, base + decode(r, geom.red_rank, geom.red_dims, geom.red_strides))));
    return team_reduce<Team>(acc.value(), C{});
  } else {
    A acc = identity<K, T, A>();
    for (int64_t r = lane; r < geom.n; r += Team)
      acc =
          C{}(acc,
              contribution<K>(load_acc(x, base + decode(r, geom.red_rank, geom.red_dims, geom.red_strides))));
    return team_reduce<Team>(acc, C{});
  }
}

// ReduceLogSumExp: the maximum, then the sum of exp(x - max) (the maximum itself when it is not finite).
template <int Team, class T, class A>
__device__ A log_sum_exp_group(const T* x, int64_t base, int lane, const ReduceGeom& geom) {
  const A mx = reduce_group<ReduceKind::kMax, Team, T, A>(x, base, lane, geom);
  A sum;
  if constexpr (std::is_same_v<A, float>) {
    KahanSum acc;
    for (int64_t r = lane; r < geom.n; r += Team)
      acc.add(expf(load(x, base + decode(r, geom.red_rank, geom.red_dims, geom.red_strides)) - mx));
    sum = acc.value();
  } else {
    sum = 0;
    for (int64_t r = lane; r < geom.n; r += Team)
      sum += exp(load_acc(x, base + decode(r, geom.red_rank, geom.red_dims, geom.red_strides)) - mx);
  }
  sum = team_reduce<Team>(sum, Combine<ReduceKind::kSum, A>{});
  return isfinite(mx) ? mx + log(sum) : mx;
}

template <ReduceKind K, class A>
__device__ __forceinline__ A finish(A acc, int64_t n) {
  if constexpr (K == ReduceKind::kMean) {
    if constexpr (std::is_same_v<A, long long>)
      return n == 0 ? 0 : acc / n;
    else
      return acc / static_cast<A>(n);
  }
  if constexpr (K == ReduceKind::kL2) return sqrt(acc);
  if constexpr (K == ReduceKind::kLogSum) return log(acc);
  return acc;
}

template <ReduceKind K, int Team, class T>
__global__ void reduce_kernel(const T* x, T* y, ReduceGeom geom) {
  using A = AccOf<T>;
  TeamIndex<Team> ti;
  for (int64_t g = ti.team; g < geom.groups; g += ti.teams) {
    const int64_t base = decode(g, geom.kept_rank, geom.kept_dims, geom.kept_strides);
    A v;
    if constexpr (K == ReduceKind::kLogSumExp)
      v = log_sum_exp_group<Team, T, A>(x, base, ti.lane, geom);
    else
      v = finish<K>(reduce_group<K, Team, T, A>(x, base, ti.lane, geom), geom.n);
    if (ti.lane == 0) store_acc(y, g, v);
  }
}

// The innermost reduced dim is not contiguous but the innermost kept one is (see team_for).
bool strided(const ReduceGeom& g) {
  return g.red_rank > 0 && g.red_strides[g.red_rank - 1] != 1 && g.kept_rank > 0 &&
         g.kept_strides[g.kept_rank - 1] == 1;
}

template <ReduceKind K, class T>
void reduce_typed(const void* x, void* y, const ReduceGeom& geom, cudaStream_t s) {
  auto* in = static_cast<const T*>(x);
  auto* out = static_cast<T*>(y);
  const int team = team_for(geom.groups, geom.n, strided(geom));
  const unsigned b = blocks_for_teams(geom.groups, team);
  if (team == 1) return reduce_kernel<K, 1, T><<<b, kBlock, 0, s>>>(in, out, geom);
  if (team == 32) return reduce_kernel<K, 32, T><<<b, kBlock, 0, s>>>(in, out, geom);
  reduce_kernel<K, kBlock, T><<<b, kBlock, 0, s>>>(in, out, geom);
}

template <ReduceKind K>
void reduce_kind(NumType t, const void* x, void* y, const ReduceGeom& geom, cudaStream_t s) {
  switch (t) {
    case NumType::kFloat:
      return reduce_typed<K, float>(x, y, geom, s);
    case NumType::kHalf:
      return reduce_typed<K, __half>(x, y, geom, s);
    case NumType::kBFloat16:
      return reduce_typed<K, __nv_bfloat16>(x, y, geom, s);
    case NumType::kInt32:
      if constexpr (K != ReduceKind::kL2 && K != ReduceKind::kLogSum && K != ReduceKind::kLogSumExp)
        return reduce_typed<K, int32_t>(x, y, geom, s);
      return;
    case NumType::kInt64:
      if constexpr (K != ReduceKind::kL2 && K != ReduceKind::kLogSum && K != ReduceKind::kLogSumExp)
        return reduce_typed<K, int64_t>(x, y, geom, s);
      return;
    case NumType::kDouble:
      return reduce_typed<K, double>(x, y, geom, s);
    case NumType::kBool:
      if constexpr (K == ReduceKind::kMax || K == ReduceKind::kMin)
        return reduce_typed<K, bool>(x, y, geom, s);
      return;
  }
}

// ArgMax/ArgMin candidates: a value and its index (-1: none yet). The winner of two is order-free
// (NaN first, then the larger/smaller value, then the smaller/larger index), so the tree gives what a
// sequential scan gives.
template <class A>
struct Cand {
  A v;
  long long i;
};
template <class A>
__device__ __forceinline__ Cand<A> shfl_xor(Cand<A> c, int o) {
  return {cuda::shfl_xor(c.v, o), cuda::shfl_xor(c.i, o)};
}

template <bool Max, bool Last, class A>
struct Better {
  __device__ Cand<A> operator()(Cand<A> a, Cand<A> b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool an = a.v != a.v, bn = b.v != b.v;
    if (an != bn) return an ? a : b;
    if (!an && a.v != b.v) return (Max ? a.v > b.v : a.v < b.v) ? a : b;
    return (Last ? a.i > b.i : a.i < b.i) ? a : b;
  }
};

template <bool Max, bool Last, int Team, class T>
__global__ void arg_kernel(const T* x, int64_t* y, ReduceGeom geom) {
  using A = std::conditional_t<IsInt<T>::value, long long, float>;
  TeamIndex<Team> ti;
  const int64_t stride = geom.red_rank > 0 ? geom.red_strides[0] : 0;
  for (int64_t g = ti.team; g < geom.groups; g += ti.teams) {
    const int64_t base = decode(g, geom.kept_rank, geom.kept_dims, geom.kept_strides);
    Cand<A> best{A(0), -1};
    for (int64_t r = ti.lane; r < geom.n; r += Team)
      best = Better<Max, Last, A>{}(best, {load_acc(x, base + r * stride), r});
    best = team_reduce<Team>(best, Better<Max, Last, A>{});
    if (ti.lane == 0) y[g] = best.i < 0 ? 0 : best.i;
  }
}

template <bool Max, bool Last, class T>
void arg_typed(const void* x, int64_t* y, const ReduceGeom& geom, cudaStream_t s) {
  auto* in = static_cast<const T*>(x);
  const int team = team_for(geom.groups, geom.n, strided(geom));
  const unsigned b = blocks_for_teams(geom.groups, team);
  if (team == 1) return arg_kernel<Max, Last, 1, T><<<b, kBlock, 0, s>>>(in, y, geom);
  if (team == 32) return arg_kernel<Max, Last, 32, T><<<b, kBlock, 0, s>>>(in, y, geom);
  arg_kernel<Max, Last, kBlock, T><<<b, kBlock, 0, s>>>(in, y, geom);
}

template <bool Max, bool Last>
void arg_flags(NumType t, const void* x, int64_t* y, const ReduceGeom& geom, cudaStream_t s) {
  switch (t) {
    case NumType::kFloat:
      return arg_typed<Max, Last, float>(x, y, geom, s);
    case NumType::kHalf:
      return arg_typed<Max, Last, __half>(x, y, geom, s);
    case NumType::kBFloat16:
      return arg_typed<Max, Last, __nv_bfloat16>(x, y, geom, s);
    case NumType::kInt32:
      return arg_typed<Max, Last, int32_t>(x, y, geom, s);
    case NumType::kInt64:
      return arg_typed<Max, Last, int64_t>(x, y, geom, s);
    case NumType::kDouble:
    case NumType::kBool:
      return;  // not offered (arg_supported)
  }
}

}  // namespace

void launch_reduce(ReduceKind k, NumType t, const void* x, void* y, const ReduceGeom& geom, cudaStream_t s) {
  if (geom.groups == 0) return;
  switch (k) {
#define TESSERA_REDUCE(E) \
  case ReduceKind::E:     \
    return reduce_kind<ReduceKind::E>(t, x, y, geom, s);
    TESSERA_REDUCE(kSum)
    TESSERA_REDUCE(kMean)
    TESSERA_REDUCE(kMax)
    TESSERA_REDUCE(kMin)
    TESSERA_REDUCE(kProd)
    TESSERA_REDUCE(kL1)
    TESSERA_REDUCE(kL2)
    TESSERA_REDUCE(kLogSum)
    TESSERA_REDUCE(kLogSumExp)
    TESSERA_REDUCE(kSumSquare)
#undef TESSERA_REDUCE
  }
}

void launch_arg_reduce(bool max, bool last, NumType t, const void* x, int64_t* y, const ReduceGeom& geom,
                       cudaStream_t s) {
  if (geom.groups == 0) return;
  if (max) return last ? arg_flags<true, true>(t, x, y, geom, s) : arg_flags<true, false>(t, x, y, geom, s);
  last ? arg_flags<false, true>(t, x, y, geom, s) : arg_flags<false, false>(t, x, y, geom, s);
}

}  // namespace tessera::cuda
