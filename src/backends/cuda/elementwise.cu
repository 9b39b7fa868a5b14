#include "backends/cuda/device_types.cuh"
#include "backends/cuda/elementwise.h"

namespace tessera::cuda {

namespace {

// Accurate forms (not the fast intrinsics): expf/logf/tanhf/erff are CUDA's correctly-rounded-to-a-few-
// ulp library functions; sigmoid is written so that it does not cancel for large |x|.
template <UnaryOp Op>
__device__ float unary(float x) {
  if constexpr (Op == UnaryOp::kRelu) return x > 0.0f ? x : (x == x ? 0.0f : x);
  if constexpr (Op == UnaryOp::kSigmoid) {
    if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
  }
  if constexpr (Op == UnaryOp::kTanh) return tanhf(x);
  if constexpr (Op == UnaryOp::kExp) return expf(x);
  if constexpr (Op == UnaryOp::kLog) return logf(x);
  if constexpr (Op == UnaryOp::kNeg) return -x;
  if constexpr (Op == UnaryOp::kAbs) return fabsf(x);
  if constexpr (Op == UnaryOp::kSqrt) return sqrtf(x);
  if constexpr (Op == UnaryOp::kErf) return erff(x);
  if constexpr (Op == UnaryOp::kReciprocal) return 1.0f / x;
  return x;
}

template <BinaryOp Op>
__device__ float binary(float a, float b) {
  if constexpr (Op == BinaryOp::kAdd) return a + b;
  if constexpr (Op == BinaryOp::kSub) return a - b;
  if constexpr (Op == BinaryOp::kMul) return a * b;
  if constexpr (Op == BinaryOp::kDiv) return a / b;
  if constexpr (Op == BinaryOp::kMax) return (a != a || b != b) ? a + b : fmaxf(a, b);  // NaN propagates
  if constexpr (Op == BinaryOp::kMin) return (a != a || b != b) ? a + b : fminf(a, b);
  if constexpr (Op == BinaryOp::kPow) return powf(a, b);
  if constexpr (Op == BinaryOp::kPRelu) return a < 0.0f ? b * a : a;
  if constexpr (Op == BinaryOp::kFmod) return fmodf(a, b);
  if constexpr (Op == BinaryOp::kMod) {
    float r = fmodf(a, b);
    if (r == 0.0f) return copysignf(0.0f, b);
    return (r < 0.0f) != (b < 0.0f) ? r + b : r;
  }
  return a;
}

template <UnaryOp Op, class T>
__global__ void unary_kernel(const T* x, T* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    store(y, i, unary<Op>(load(x, i)));
}

// 16 bytes a load and a store (8 float16/bfloat16 or 4 float32 elements).
template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <class T>
constexpr int kVec = static_cast<int>(16 / sizeof(T));

template <UnaryOp Op, class T>
__global__ void unary_vec_kernel(const T* x, T* y, int64_t groups) {
  constexpr int N = kVec<T>;
  for (int64_t g = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; g < groups;
       g += int64_t{gridDim.x} * blockDim.x) {
    Pack<T, N> in = reinterpret_cast<const Pack<T, N>*>(x)[g], out;
#pragma unroll
    for (int e = 0; e < N; ++e) store(out.v, e, unary<Op>(load(in.v, e)));
    reinterpret_cast<Pack<T, N>*>(y)[g] = out;
  }
}

template <BinaryOp Op, class T>
__global__ void binary_same_kernel(const T* a, const T* b, T* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    store(y, i, binary<Op>(load(a, i), load(b, i)));
}

// One side whole, the other a row repeated along the output (len elements: the output's trailing
// dimensions; len 1: a scalar). `b_is_row` says which side is the row.
template <BinaryOp Op, class T>
__global__ void binary_row_kernel(const T* a, const T* b, T* y, int64_t n, int64_t len, bool b_is_row) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t r = i % len;
    store(y, i, b_is_row ? binary<Op>(load(a, i), load(b, r)) : binary<Op>(load(a, r), load(b, i)));
  }
}

// The same with 16-byte accesses: n and len multiples of the vector width (or len 1), aligned pointers.
template <BinaryOp Op, class T, bool BRow>
__global__ void binary_row_vec_kernel(const T* a, const T* b, T* y, int64_t groups, int64_t len) {
  constexpr int N = kVec<T>;
  using P = Pack<T, N>;
  const T* whole = BRow ? a : b;
  const T* row = BRow ? b : a;
  for (int64_t g = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; g < groups;
       g += int64_t{gridDim.x} * blockDim.x) {
    P w = reinterpret_cast<const P*>(whole)[g], r, out;
    const bool scalar = len == 1;
    if (scalar) {
#pragma unroll
      for (int e = 0; e < N; ++e) r.v[e] = row[0];
    } else {
      r = *reinterpret_cast<const P*>(row + (g * N) % len);
    }
#pragma unroll
    for (int e = 0; e < N; ++e) {
      float x = load(w.v, e), z = load(r.v, e);
      store(out.v, e, BRow ? binary<Op>(x, z) : binary<Op>(z, x));
    }
    reinterpret_cast<P*>(y)[g] = out;
  }
}

template <BinaryOp Op, class T>
__global__ void binary_same_vec_kernel(const T* a, const T* b, T* y, int64_t groups) {
  constexpr int N = kVec<T>;
  using P = Pack<T, N>;
  for (int64_t g = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; g < groups;
       g += int64_t{gridDim.x} * blockDim.x) {
    P x = reinterpret_cast<const P*>(a)[g], z = reinterpret_cast<const P*>(b)[g], out;
#pragma unroll
    for (int e = 0; e < N; ++e) store(out.v, e, binary<Op>(load(x.v, e), load(z.v, e)));
    reinterpret_cast<P*>(y)[g] = out;
  }
}

// The offsets of output element i in a and b (int32 arithmetic where the sizes allow: 64-bit division
// costs several times more, and this kernel is bound by it rather than by memory).
template <class I>
__device__ __forceinline__ void broadcast_offsets(const BroadcastShape& s, I i, I& ia, I& ib) {
  I rest = i;
  ia = 0;
  ib = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    I dim = static_cast<I>(s.out_dims[d]);
    I idx = rest % dim;
    rest /= dim;
    ia += idx * static_cast<I>(s.a_strides[d]);
    ib += idx * static_cast<I>(s.b_strides[d]);
  }
}

template <BinaryOp Op, class T>
__global__ void binary_broadcast_kernel(const T* a, const T* b, T* y, int64_t n, BroadcastShape s,
                                        bool small) {
  if (small) {
    for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
      int32_t ia, ib;
      broadcast_offsets<int32_t>(s, i, ia, ib);
      store(y, i, binary<Op>(load(a, ia), load(b, ib)));
    }
    return;
  }
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t ia, ib;
    broadcast_offsets<int64_t>(s, i, ia, ib);
    store(y, i, binary<Op>(load(a, ia), load(b, ib)));
  }
}

// Any broadcast whose last dimension is a multiple of the vector width and along which each side is
// contiguous (AVec/BVec: 16-byte loads) or broadcast (one value for the vector): an attention mask
// [B,1,1,S] added to scores [B,H,S,S]. The offsets are computed once per vector.
template <BinaryOp Op, class T, bool AVec, bool BVec>
__global__ void binary_broadcast_vec_kernel(const T* a, const T* b, T* y, int64_t groups, BroadcastShape s,
                                            bool small) {
  constexpr int N = kVec<T>;
  using P = Pack<T, N>;
  for (int64_t g = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; g < groups;
       g += int64_t{gridDim.x} * blockDim.x) {
    int64_t ia, ib;
    if (small) {
      int32_t a32, b32;
      broadcast_offsets<int32_t>(s, static_cast<int32_t>(g * N), a32, b32);
      ia = a32;
      ib = b32;
    } else {
      broadcast_offsets<int64_t>(s, g * N, ia, ib);
    }
    P x, z, out;
    if constexpr (AVec) x = *reinterpret_cast<const P*>(a + ia);
    if constexpr (BVec) z = *reinterpret_cast<const P*>(b + ib);
    const float xa = AVec ? 0.0f : load(a, ia), zb = BVec ? 0.0f : load(b, ib);
#pragma unroll
    for (int e = 0; e < N; ++e)
      store(out.v, e, binary<Op>(AVec ? load(x.v, e) : xa, BVec ? load(z.v, e) : zb));
    reinterpret_cast<P*>(y)[g] = out;
  }
}

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 32 ? (b > 0 ? b : 1) : 65535 * 32);
}

bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// Whether `strides` (aligned to s.out_dims) read a row of the output's trailing dimensions: 0 along
// leading dimensions, row-major contiguous along the rest. Sets `len` to the row's length (1: scalar).
bool is_row(const BroadcastShape& s, const int64_t* strides, int64_t& len) {
  len = 1;
  bool in_row = true;  // walking from the last dimension while the side is contiguous
  for (int d = s.rank - 1; d >= 0; --d) {
    if (s.out_dims[d] == 1) continue;
    if (in_row && strides[d] == len) {
      len *= s.out_dims[d];
      continue;
    }
    in_row = false;
    if (strides[d] != 0) return false;
  }
  return true;
}

template <class T>
void unary_typed(UnaryOp op, const void* x, void* y, int64_t n, cudaStream_t s) {
  auto* in = static_cast<const T*>(x);
  auto* out = static_cast<T*>(y);
  const bool vec = n % kVec<T> == 0 && aligned16(x) && aligned16(y);
  const int64_t groups = n / kVec<T>;
  unsigned g = blocks_for(vec ? groups : n);
  switch (op) {
#define TESSERA_UNARY(E)                                                                     \
  case UnaryOp::E:                                                                           \
    if (vec) return unary_vec_kernel<UnaryOp::E, T><<<g, kThreads, 0, s>>>(in, out, groups); \
    return unary_kernel<UnaryOp::E, T><<<g, kThreads, 0, s>>>(in, out, n);
    TESSERA_UNARY(kRelu)
    TESSERA_UNARY(kSigmoid)
    TESSERA_UNARY(kTanh)
    TESSERA_UNARY(kExp)
    TESSERA_UNARY(kLog)
    TESSERA_UNARY(kNeg)
    TESSERA_UNARY(kAbs)
    TESSERA_UNARY(kSqrt)
    TESSERA_UNARY(kErf)
    TESSERA_UNARY(kReciprocal)
#undef TESSERA_UNARY
  }
}

template <class T, BinaryOp Op>
void binary_op(const void* a, const void* b, void* y, int64_t n, bool same, const BroadcastShape& shape,
               cudaStream_t s) {
  auto* pa = static_cast<const T*>(a);
  auto* pb = static_cast<const T*>(b);
  auto* py = static_cast<T*>(y);
  constexpr int N = kVec<T>;
  if (same) {
    if (aligned16(a) && aligned16(b) && aligned16(y) && n % N == 0)
      return binary_same_vec_kernel<Op, T><<<blocks_for(n / N), kThreads, 0, s>>>(pa, pb, py, n / N);
    return binary_same_kernel<Op, T><<<blocks_for(n), kThreads, 0, s>>>(pa, pb, py, n);
  }
  // One side whole and the other a row or a scalar: a bias, a scale, a residual's broadcast.
  int64_t la = 0, lb = 0;
  const bool a_row = is_row(shape, shape.a_strides, la), b_row = is_row(shape, shape.b_strides, lb);
  if (a_row && b_row && (la == n || lb == n)) {
    const bool b_is_row = la == n;
    const int64_t len = b_is_row ? lb : la;
    const void* row = b_is_row ? b : a;
    const bool whole_aligned = aligned16(b_is_row ? a : b) && aligned16(y) && n % N == 0;
    if (whole_aligned && (len == 1 || (len % N == 0 && aligned16(row)))) {
      if (b_is_row)
        return binary_row_vec_kernel<Op, T, true>
            <<<blocks_for(n / N), kThreads, 0, s>>>(pa, pb, py, n / N, len);
      return binary_row_vec_kernel<Op, T, false>
          <<<blocks_for(n / N), kThreads, 0, s>>>(pa, pb, py, n / N, len);
    }
    return binary_row_kernel<Op, T><<<blocks_for(n), kThreads, 0, s>>>(pa, pb, py, n, len, b_is_row);
  }
  // int32 offsets when every index plus a grid's stride (at most 2^29 threads) stays below 2^31.
  const bool small = n <= (int64_t{1} << 30);
  const int r = shape.rank - 1;
  constexpr bool kVecOp =
      Op == BinaryOp::kAdd || Op == BinaryOp::kSub || Op == BinaryOp::kMul || Op == BinaryOp::kDiv;
  if constexpr (kVecOp) {
    if (r >= 0 && shape.out_dims[r] % N == 0 && aligned16(y) && n % N == 0) {
      const int64_t sa = shape.a_strides[r], sb = shape.b_strides[r];
      const bool av = sa == 1 && aligned16(a), bv = sb == 1 && aligned16(b);
      const unsigned g = blocks_for(n / N);
      if (av && bv)
        return binary_broadcast_vec_kernel<Op, T, true, true>
            <<<g, kThreads, 0, s>>>(pa, pb, py, n / N, shape, small);
      if (av && sb == 0)
        return binary_broadcast_vec_kernel<Op, T, true, false>
            <<<g, kThreads, 0, s>>>(pa, pb, py, n / N, shape, small);
      if (sa == 0 && bv)
        return binary_broadcast_vec_kernel<Op, T, false, true>
            <<<g, kThreads, 0, s>>>(pa, pb, py, n / N, shape, small);
    }
  }
  binary_broadcast_kernel<Op, T><<<blocks_for(n), kThreads, 0, s>>>(pa, pb, py, n, shape, small);
}

template <class T>
void binary_typed(BinaryOp op, const void* a, const void* b, void* y, int64_t n, bool same,
                  const BroadcastShape& shape, cudaStream_t s) {
  switch (op) {
    case BinaryOp::kAdd:
      return binary_op<T, BinaryOp::kAdd>(a, b, y, n, same, shape, s);
    case BinaryOp::kSub:
      return binary_op<T, BinaryOp::kSub>(a, b, y, n, same, shape, s);
    case BinaryOp::kMul:
      return binary_op<T, BinaryOp::kMul>(a, b, y, n, same, shape, s);
    case BinaryOp::kDiv:
      return binary_op<T, BinaryOp::kDiv>(a, b, y, n, same, shape, s);
    case BinaryOp::kMax:
      return binary_op<T, BinaryOp::kMax>(a, b, y, n, same, shape, s);
    case BinaryOp::kMin:
      return binary_op<T, BinaryOp::kMin>(a, b, y, n, same, shape, s);
    case BinaryOp::kPow:
      return binary_op<T, BinaryOp::kPow>(a, b, y, n, same, shape, s);
    case BinaryOp::kPRelu:
      return binary_op<T, BinaryOp::kPRelu>(a, b, y, n, same, shape, s);
    case BinaryOp::kFmod:
      return binary_op<T, BinaryOp::kFmod>(a, b, y, n, same, shape, s);
    case BinaryOp::kMod:
      return binary_op<T, BinaryOp::kMod>(a, b, y, n, same, shape, s);
  }
}

}  // namespace

void launch_unary(UnaryOp op, ElemType t, const void* x, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  switch (t) {
    case ElemType::kFloat:
      return unary_typed<float>(op, x, y, n, s);
    case ElemType::kHalf:
      return unary_typed<__half>(op, x, y, n, s);
    case ElemType::kBFloat16:
      return unary_typed<__nv_bfloat16>(op, x, y, n, s);
  }
}

void launch_binary(BinaryOp op, ElemType t, const void* a, const void* b, void* y, int64_t n, bool same,
                   const BroadcastShape& shape, cudaStream_t s) {
  if (n == 0) return;
  switch (t) {
    case ElemType::kFloat:
      return binary_typed<float>(op, a, b, y, n, same, shape, s);
    case ElemType::kHalf:
      return binary_typed<__half>(op, a, b, y, n, same, shape, s);
    case ElemType::kBFloat16:
      return binary_typed<__nv_bfloat16>(op, a, b, y, n, same, shape, s);
  }
}

}  // namespace tessera::cuda
