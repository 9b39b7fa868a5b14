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

template <BinaryOp Op, class T>
__global__ void binary_same_kernel(const T* a, const T* b, T* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    store(y, i, binary<Op>(load(a, i), load(b, i)));
}

template <BinaryOp Op, class T>
__global__ void binary_broadcast_kernel(const T* a, const T* b, T* y, int64_t n, BroadcastShape s) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rest = i, ia = 0, ib = 0;
    for (int d = s.rank - 1; d >= 0; --d) {
      int64_t idx = rest % s.out_dims[d];
      rest /= s.out_dims[d];
      ia += idx * s.a_strides[d];
      ib += idx * s.b_strides[d];
    }
    store(y, i, binary<Op>(load(a, ia), load(b, ib)));
  }
}

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 32 ? (b > 0 ? b : 1) : 65535 * 32);
}

template <class T>
void unary_typed(UnaryOp op, const void* x, void* y, int64_t n, cudaStream_t s) {
  auto* in = static_cast<const T*>(x);
  auto* out = static_cast<T*>(y);
  unsigned g = blocks_for(n);
  switch (op) {
#define TESSERA_UNARY(E) \
  case UnaryOp::E:       \
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
  if (same) return binary_same_kernel<Op, T><<<blocks_for(n), kThreads, 0, s>>>(pa, pb, py, n);
  binary_broadcast_kernel<Op, T><<<blocks_for(n), kThreads, 0, s>>>(pa, pb, py, n, shape);
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
