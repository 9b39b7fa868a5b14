// Typed data kernels (see data_typed.h): Cast, comparisons, logic, IsNaN/IsInf, integer arithmetic,
// CumSum, OneHot, EyeLike's diagonal.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "backends/cuda/data_minifloat.cuh"
#include "backends/cuda/data_typed.h"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/type_dispatch.cuh"

namespace tessera::cuda {

namespace {

constexpr int kThreads = 256;

template <class T>
inline constexpr bool is_small_float = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <class T>
inline constexpr bool is_float_type = is_small_float<T> || std::is_floating_point_v<T>;

// The value in the type arithmetic runs in: float for the 16-bit floats, the type itself otherwise.
template <class T>
__device__ __forceinline__ auto widen(T v) {
  if constexpr (is_small_float<T>)
    return load(&v, 0);
  else
    return v;
}

template <class T>
__device__ __forceinline__ T narrow_float(float v) {
  T out;
  store(&out, 0, v);
  return out;
}

__device__ __forceinline__ int64_t double_to_int64(double d) {
  if (d != d) return 0;
  d = trunc(d);
  if (d >= 9223372036854775808.0) return INT64_MAX;
  if (d < -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(d);
}

template <class From, class To>
__device__ __forceinline__ To convert(From x) {
  if constexpr (std::is_same_v<From, To>) {
    return x;
  } else if constexpr (std::is_same_v<To, bool>) {
    return widen(x) != 0;
  } else if constexpr (is_small_float<To>) {
    return narrow_float<To>(static_cast<float>(widen(x)));
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(widen(x));
  } else if constexpr (is_float_type<From>) {
    return static_cast<To>(static_cast<uint64_t>(double_to_int64(static_cast<double>(widen(x)))));
  } else {
    return static_cast<To>(x);  // integers and bool: wrap, as C++20 defines it
  }
}

template <class From>
__global__ void to_f8_kernel(const From* x, uint8_t* y, int64_t n, MiniFloatLayout f, bool saturate) {
  TESSERA_GRID_LOOP(i, n) y[i] = encode_f8(f, static_cast<double>(widen(x[i])), saturate);
}

template <class To>
__global__ void from_f8_kernel(const uint8_t* x, To* y, int64_t n, MiniFloatLayout f) {
  TESSERA_GRID_LOOP(i, n) y[i] = convert<float, To>(decode_f8(f, x[i]));
}

template <class From, class To>
__global__ void cast_kernel(const From* x, To* y, int64_t n) {
  TESSERA_GRID_LOOP(i, n) y[i] = convert<From, To>(x[i]);
}

template <class F>
void by_int_type(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::kInt8:
      return f(Tag<int8_t>{});
    case ScalarType::kUint8:
      return f(Tag<uint8_t>{});
    case ScalarType::kInt16:
      return f(Tag<int16_t>{});
    case ScalarType::kUint16:
      return f(Tag<uint16_t>{});
    case ScalarType::kInt32:
      return f(Tag<int32_t>{});
    case ScalarType::kUint32:
      return f(Tag<uint32_t>{});
    case ScalarType::kUint64:
      return f(Tag<uint64_t>{});
    default:
      return f(Tag<int64_t>{});
  }
}

__device__ __forceinline__ void offsets2(int64_t i, const Broadcast3& b, int64_t& oa, int64_t& ob) {
  if (b.flat) {
    oa = ob = i;
    return;
  }
  int64_t rest = i;
  oa = ob = 0;
  for (int d = b.rank - 1; d >= 0; --d) {
    const int64_t c = rest % b.dims[d];
    rest /= b.dims[d];
    oa += c * b.s[0][d];
    ob += c * b.s[1][d];
  }
}

template <class T>
__global__ void compare_kernel(CompareOp op, const T* a, const T* b, bool* y, int64_t n, Broadcast3 s) {
  TESSERA_GRID_LOOP(i, n) {
    int64_t oa, ob;
    offsets2(i, s, oa, ob);
    const auto x = widen(a[oa]), z = widen(b[ob]);
    bool r = false;
    switch (op) {
      case CompareOp::kEqual:
        r = x == z;
        break;
      case CompareOp::kLess:
        r = x < z;
        break;
      case CompareOp::kLessOrEqual:
        r = x <= z;
        break;
      case CompareOp::kGreater:
        r = x > z;
        break;
      case CompareOp::kGreaterOrEqual:
        r = x >= z;
        break;
      case CompareOp::kAnd:
        r = (x != 0) && (z != 0);
        break;
      case CompareOp::kOr:
        r = (x != 0) || (z != 0);
        break;
      case CompareOp::kXor:
        r = (x != 0) != (z != 0);
        break;
    }
    y[i] = r;
  }
}

__global__ void not_kernel(const bool* x, bool* y, int64_t n) {
  TESSERA_GRID_LOOP(i, n) y[i] = !x[i];
}

template <class T>
__global__ void special_kernel(const T* x, bool* y, int64_t n, bool nan, bool pos, bool neg) {
  TESSERA_GRID_LOOP(i, n) {
    const double v = static_cast<double>(widen(x[i]));
    y[i] = nan ? v != v : ((pos && v == INFINITY) || (neg && v == -INFINITY));
  }
}

template <class T>
__device__ __forceinline__ T int_op(IntOp op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  constexpr int kBits = sizeof(T) * 8;
  switch (op) {
    case IntOp::kAdd:
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    case IntOp::kSub:
      return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
    case IntOp::kMul:
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    case IntOp::kDiv:
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return static_cast<T>(U(0) - static_cast<U>(a));  // INT_MIN / -1 wraps
      return static_cast<T>(a / b);
    case IntOp::kMod:
    case IntOp::kFmod: {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return 0;
        T r = static_cast<T>(a % b);
        if (op == IntOp::kMod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
        return r;
      } else {
        return static_cast<T>(a % b);
      }
    }
    case IntOp::kMax:
      return a > b ? a : b;
    case IntOp::kMin:
      return a < b ? a : b;
    case IntOp::kBitAnd:
      return static_cast<T>(a & b);
    case IntOp::kBitOr:
      return static_cast<T>(a | b);
    case IntOp::kBitXor:
      return static_cast<T>(a ^ b);
    case IntOp::kShl:
      if (static_cast<int64_t>(b) < 0 || static_cast<int64_t>(b) >= kBits) return 0;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) << static_cast<int>(b)));
    case IntOp::kShr:
      if (static_cast<int64_t>(b) < 0 || static_cast<int64_t>(b) >= kBits) {
        if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
        return T(0);
      }
      return static_cast<T>(a >> static_cast<int>(b));
  }
  return a;
}

template <class T>
__global__ void int_binary_kernel(IntOp op, const T* a, const T* b, T* y, int64_t n, Broadcast3 s) {
  TESSERA_GRID_LOOP(i, n) {
    int64_t oa, ob;
    offsets2(i, s, oa, ob);
    y[i] = int_op(op, a[oa], b[ob]);
  }
}

template <class T>
__global__ void bit_not_kernel(const T* x, T* y, int64_t n) {
  TESSERA_GRID_LOOP(i, n) y[i] = static_cast<T>(~x[i]);
}

// One thread per line along the axis: float types accumulate in double (as the CPU reference does) and
// round each output once; integers wrap through uint64.
template <class T>
__global__ void cumsum_kernel(const T* x, T* y, int64_t outer, int64_t len, int64_t inner, bool exclusive,
                              bool reverse, bool product) {
  using Acc = std::conditional_t<is_float_type<T>, double, uint64_t>;
  TESSERA_GRID_LOOP(line, outer * inner) {
    const int64_t o = line / inner, in = line % inner;
    const int64_t base = o * len * inner + in;
    Acc acc = product ? 1 : 0;
    for (int64_t j = 0; j < len; ++j) {
      const int64_t k = reverse ? len - 1 - j : j;
      const int64_t off = base + k * inner;
      Acc v;
      if constexpr (is_float_type<T>)
        v = static_cast<double>(widen(x[off]));
      else
        v = static_cast<uint64_t>(static_cast<int64_t>(x[off]));
      if (exclusive) {
        if constexpr (is_small_float<T>)
          y[off] = narrow_float<T>(static_cast<float>(acc));
        else
          y[off] = static_cast<T>(acc);
      }
      acc = product ? acc * v : acc + v;
      if (!exclusive) {
        if constexpr (is_small_float<T>)
          y[off] = narrow_float<T>(static_cast<float>(acc));
        else
          y[off] = static_cast<T>(acc);
      }
    }
  }
}

template <class I, class S>
__global__ void one_hot_kernel(const I* idx, const S* values, S* out, int64_t n, int64_t depth,
                               int64_t inner) {
  TESSERA_GRID_LOOP(i, n) {
    const int64_t in = i % inner, d = (i / inner) % depth, o = i / (inner * depth);
    const I v = idx[o * inner + in];
    int64_t k;
    if constexpr (std::is_floating_point_v<I>)
      k = (v != v || v >= 9.0e18 || v <= -9.0e18) ? depth : static_cast<int64_t>(v);  // truncated; NaN: none
    else
      k = static_cast<int64_t>(v);
    if (k < 0) k += depth;
    out[i] = values[k == d ? 1 : 0];
  }
}

template <class S>
__global__ void eye_kernel(S* y, int64_t n, int64_t cols, int64_t row0, int64_t col0, S one) {
  TESSERA_GRID_LOOP(i, n) y[(row0 + i) * cols + col0 + i] = one;
}

template <class T>
__global__ void range_kernel(T* y, int64_t n, double start, double delta, int64_t istart, int64_t idelta) {
  TESSERA_GRID_LOOP(i, n) {
    if constexpr (std::is_same_v<T, double>) {
      y[i] = __dadd_rn(start, __dmul_rn(static_cast<double>(i), delta));
    } else if constexpr (is_float_type<T>) {
      const float v =
          __fadd_rn(static_cast<float>(start), __fmul_rn(static_cast<float>(i), static_cast<float>(delta)));
      if constexpr (is_small_float<T>)
        y[i] = narrow_float<T>(v);
      else
        y[i] = v;
    } else {
      y[i] = static_cast<T>(static_cast<uint64_t>(istart) +
                            static_cast<uint64_t>(i) * static_cast<uint64_t>(idelta));
    }
  }
}

template <class T, class E>
__device__ __forceinline__ T int_pow(T x, E y) {
  if constexpr (std::is_signed_v<E>) {
    if (y < 0) {
      if (x == 1) return T(1);
      if constexpr (std::is_signed_v<T>)
        if (x == -1) return (y % 2 == 0) ? T(1) : T(-1);
      return T(0);
    }
  }
  using U = std::make_unsigned_t<T>;
  U result = 1, base = static_cast<U>(x);
  auto e = static_cast<std::make_unsigned_t<E>>(y);
  while (e != 0) {
    if (e & 1u) result = static_cast<U>(result * base);
    e >>= 1;
    if (e != 0) base = static_cast<U>(base * base);
  }
  return static_cast<T>(result);
}

// pow, exact where the result is: an integral exponent up to 64 by repeated squaring while the result stays
// below 2^53 (CUDA's pow may miss an exact integer by an ulp, which a truncation to an integer type would
// turn into an off-by-one), pow otherwise.
__device__ __forceinline__ double exact_pow(double x, double e) {
  if (e != trunc(e) || fabs(e) > 64 || x != trunc(x)) return pow(x, e);
  double r = 1, base = x;
  for (int64_t k = static_cast<int64_t>(fabs(e)); k != 0; k >>= 1) {
    if (k & 1) r *= base;
    if (fabs(r) >= 9007199254740992.0) return pow(x, e);
    if (k > 1) base *= base;
    if (fabs(base) >= 9007199254740992.0 && (k >> 1) != 0) return pow(x, e);
  }
  return e < 0 ? 1.0 / r : r;
}

template <class T, class E>
__global__ void pow_kernel(const T* a, const E* b, T* y, int64_t n, Broadcast3 s) {
  TESSERA_GRID_LOOP(i, n) {
    int64_t oa, ob;
    offsets2(i, s, oa, ob);
    if constexpr (std::is_integral_v<T> && std::is_integral_v<E>) {
      y[i] = int_pow(a[oa], b[ob]);
    } else {
      y[i] =
          convert<double, T>(exact_pow(static_cast<double>(widen(a[oa])), static_cast<double>(widen(b[ob]))));
    }
  }
}

__global__ void double_binary_kernel(DoubleOp op, const double* a, const double* b, double* y, int64_t n,
                                     Broadcast3 s) {
  TESSERA_GRID_LOOP(i, n) {
    int64_t oa, ob;
    offsets2(i, s, oa, ob);
    const double x = a[oa], z = b[ob];
    double r;
    switch (op) {
      case DoubleOp::kMax:
        r = x != x ? x : (z != z ? z : (x < z ? z : x));
        break;
      case DoubleOp::kMin:
        r = x != x ? x : (z != z ? z : (z < x ? z : x));
        break;
      case DoubleOp::kFmod:
        r = fmod(x, z);
        break;
      case DoubleOp::kAdd:
        r = __dadd_rn(x, z);
        break;
      case DoubleOp::kSub:
        r = __dsub_rn(x, z);
        break;
      case DoubleOp::kMul:
        r = __dmul_rn(x, z);
        break;
      case DoubleOp::kDiv:
        r = __ddiv_rn(x, z);
        break;
      default:
        r = fmod(x, z);
        if (r == 0)
          r = copysign(0.0, z);
        else if ((r < 0) != (z < 0))
          r += z;
        break;
    }
    y[i] = r;
  }
}

template <class T>
__global__ void window_kernel(T* y, int64_t size, double denom, double a0, double a1, double a2) {
  TESSERA_GRID_LOOP(i, size) {
    double w = 1.0;
    if (denom > 0) {
      // Unfused, as the reference's host arithmetic.
      const double x = __ddiv_rn(__dmul_rn(2.0 * 3.141592653589793116, static_cast<double>(i)), denom);
      w = __dadd_rn(__dsub_rn(a0, __dmul_rn(a1, cos(x))), __dmul_rn(a2, cos(__dmul_rn(2.0, x))));
    }
    y[i] = convert<double, T>(w);
  }
}

template <class T>
__global__ void int_clip_kernel(const T* x, T* y, int64_t n, bool has_lo, T lo, bool has_hi, T hi) {
  TESSERA_GRID_LOOP(i, n) {
    T v = x[i];
    if (has_lo && v < lo) v = lo;
    if (has_hi && hi < v) v = hi;
    y[i] = v;
  }
}

}  // namespace

void launch_cast(ScalarType from, ScalarType to, const void* x, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  by_scalar_type<bool>(from, [&](auto tag_F) {
    using F = typename decltype(tag_F)::type;
    by_scalar_type<bool>(to, [&](auto tag_T) {
      using T = typename decltype(tag_T)::type;
      cast_kernel<F, T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const F*>(x), static_cast<T*>(y), n);
    });
  });
}

void launch_cast_to_float8(ScalarType from, const void* x, uint8_t* y, int64_t n, MiniFloatLayout f,
                           bool saturate, cudaStream_t s) {
  if (n == 0) return;
  by_scalar_type<bool>(from, [&](auto tag_F) {
    using F = typename decltype(tag_F)::type;
    to_f8_kernel<F><<<grid_for(n), kThreads, 0, s>>>(static_cast<const F*>(x), y, n, f, saturate);
  });
}

void launch_cast_from_float8(const uint8_t* x, ScalarType to, void* y, int64_t n, MiniFloatLayout f,
                             cudaStream_t s) {
  if (n == 0) return;
  by_scalar_type<bool>(to, [&](auto tag_T) {
    using T = typename decltype(tag_T)::type;
    from_f8_kernel<T><<<grid_for(n), kThreads, 0, s>>>(x, static_cast<T*>(y), n, f);
  });
}

void launch_compare(CompareOp op, ScalarType t, const void* a, const void* b, bool* y, int64_t n,
                    const Broadcast3& shape, cudaStream_t s) {
  if (n == 0) return;
  by_scalar_type<bool>(t, [&](auto tag_T) {
    using T = typename decltype(tag_T)::type;
    compare_kernel<T><<<grid_for(n), kThreads, 0, s>>>(op, static_cast<const T*>(a), static_cast<const T*>(b),
                                                       y, n, shape);
  });
}

void launch_not(const bool* x, bool* y, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  not_kernel<<<grid_for(n), kThreads, 0, s>>>(x, y, n);
}

void launch_is_special(ScalarType t, bool nan, bool pos, bool neg, const void* x, bool* y, int64_t n,
                       cudaStream_t s) {
  if (n == 0) return;
  by_scalar_type<bool>(t, [&](auto tag_T) {
    using T = typename decltype(tag_T)::type;
    special_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), y, n, nan, pos, neg);
  });
}

void launch_int_binary(IntOp op, ScalarType t, const void* a, const void* b, void* y, int64_t n,
                       const Broadcast3& shape, cudaStream_t s) {
  if (n == 0) return;
  by_int_type(t, [&](auto tag_T) {
    using T = typename decltype(tag_T)::type;
    int_binary_kernel<T><<<grid_for(n), kThreads, 0, s>>>(
        op, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(y), n, shape);
  });
}

void launch_bit_not(ScalarType t, const void* x, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  by_int_type(t, [&](auto tag_T) {
    using T = typename decltype(tag_T)::type;
    bit_not_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), n);
  });
}

void launch_cumsum(ScalarType t, const void* x, void* y, int64_t outer, int64_t len, int64_t inner,
                   bool exclusive, bool reverse, bool product, cudaStream_t s) {
  if (outer * len * inner == 0) return;
  by_scalar_type<bool>(t, [&](auto tag_T) {
    using T = typename decltype(tag_T)::type;
    if constexpr (!std::is_same_v<T, bool>)
      cumsum_kernel<T><<<grid_for(outer * inner), kThreads, 0, s>>>(
          static_cast<const T*>(x), static_cast<T*>(y), outer, len, inner, exclusive, reverse, product);
  });
}

void launch_one_hot(ScalarType idx_type, const void* idx, int elem_bytes, const void* values, void* out,
                    int64_t outer, int64_t depth, int64_t inner, cudaStream_t s) {
  const int64_t n = outer * depth * inner;
  if (n == 0) return;
  by_size(elem_bytes, [&](auto tag_S) {
    using S = typename decltype(tag_S)::type;
    auto* v = static_cast<const S*>(values);
    auto* o = static_cast<S*>(out);
    switch (idx_type) {
      case ScalarType::kInt32:
        return one_hot_kernel<int32_t, S>
            <<<grid_for(n), kThreads, 0, s>>>(static_cast<const int32_t*>(idx), v, o, n, depth, inner);
      case ScalarType::kFloat:
        return one_hot_kernel<float, S>
            <<<grid_for(n), kThreads, 0, s>>>(static_cast<const float*>(idx), v, o, n, depth, inner);
      case ScalarType::kDouble:
        return one_hot_kernel<double, S>
            <<<grid_for(n), kThreads, 0, s>>>(static_cast<const double*>(idx), v, o, n, depth, inner);
      default:
        return one_hot_kernel<int64_t, S>
            <<<grid_for(n), kThreads, 0, s>>>(static_cast<const int64_t*>(idx), v, o, n, depth, inner);
    }
  });
}

void launch_range(ScalarType t, double start, double delta, int64_t istart, int64_t idelta, void* y,
                  int64_t n, cudaStream_t s) {
  if (n == 0) return;
  by_scalar_type<bool>(t, [&](auto tag_T) {
    using T = typename decltype(tag_T)::type;
    if constexpr (!std::is_same_v<T, bool>)
      range_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<T*>(y), n, start, delta, istart, idelta);
  });
}

void launch_pow_mixed(ScalarType base, ScalarType exponent, const void* a, const void* b, void* y, int64_t n,
                      const Broadcast3& shape, cudaStream_t s) {
  if (n == 0) return;
  by_scalar_type<bool>(base, [&](auto tag_T) {
    using T = typename decltype(tag_T)::type;
    by_scalar_type<bool>(exponent, [&](auto tag_E) {
      using E = typename decltype(tag_E)::type;
      if constexpr (!std::is_same_v<T, bool> && !std::is_same_v<E, bool>)
        pow_kernel<T, E><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(a), static_cast<const E*>(b),
                                                          static_cast<T*>(y), n, shape);
    });
  });
}

void launch_double_binary(DoubleOp op, const double* a, const double* b, double* y, int64_t n,
                          const Broadcast3& shape, cudaStream_t s) {
  if (n == 0) return;
  double_binary_kernel<<<grid_for(n), kThreads, 0, s>>>(op, a, b, y, n, shape);
}

void launch_window(ScalarType t, void* y, int64_t size, double denom, double a0, double a1, double a2,
                   cudaStream_t s) {
  if (size == 0) return;
  by_scalar_type<bool>(t, [&](auto tag_T) {
    using T = typename decltype(tag_T)::type;
    window_kernel<T><<<grid_for(size), kThreads, 0, s>>>(static_cast<T*>(y), size, denom, a0, a1, a2);
  });
}

void launch_int_clip(ScalarType t, const void* x, void* y, int64_t n, bool has_lo, uint64_t lo, bool has_hi,
                     uint64_t hi, cudaStream_t s) {
  if (n == 0) return;
  by_int_type(t, [&](auto tag_T) {
    using T = typename decltype(tag_T)::type;
    int_clip_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), n,
                                                        has_lo, static_cast<T>(lo), has_hi,
                                                        static_cast<T>(hi));
  });
}

void launch_eye_diagonal(int elem_bytes, void* y, int64_t rows, int64_t cols, int64_t k, uint64_t one,
                         cudaStream_t s) {
  const int64_t row0 = k >= 0 ? 0 : -k, col0 = k >= 0 ? k : 0;
  const int64_t n = std::min(rows - row0, cols - col0);
  if (n <= 0) return;
  by_size(elem_bytes, [&](auto tag_S) {
    using S = typename decltype(tag_S)::type;
    eye_kernel<S>
        <<<grid_for(n), kThreads, 0, s>>>(static_cast<S*>(y), n, cols, row0, col0, static_cast<S>(one));
  });
}

}  // namespace tessera::cuda
