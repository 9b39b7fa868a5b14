// The kernels of elementwise_math.h.
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/elementwise_math.h"

namespace tessera::cuda {

namespace {

constexpr int kThreads = 256;

// log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)): no overflow, no cancellation.
__device__ __forceinline__ double softplus(double x) {
  return fmax(x, 0.0) + log1p(exp(-fabs(x)));
}

template <MathOp Op>
__device__ double math(double x, MathParams p) {
  const double a = p.alpha, b = p.beta;
  if constexpr (Op == MathOp::kLeakyRelu) return x >= 0 ? x : a * x;
  if constexpr (Op == MathOp::kElu) return x >= 0 ? x : a * expm1(x);
  if constexpr (Op == MathOp::kSelu) return x > 0 ? b * x : b * a * expm1(x);
  if constexpr (Op == MathOp::kCelu) return fmax(0.0, x) + fmin(0.0, a * expm1(x / a));
  if constexpr (Op == MathOp::kHardSigmoid) {
    const double y = a * x + b;
    return y != y ? y : fmax(0.0, fmin(1.0, y));
  }
  if constexpr (Op == MathOp::kHardSwish) return x * fmax(0.0, fmin(1.0, x / 6.0 + 0.5));
  if constexpr (Op == MathOp::kSoftplus) return softplus(x);
  if constexpr (Op == MathOp::kSoftsign) return x / (1.0 + fabs(x));
  if constexpr (Op == MathOp::kGelu) return 0.5 * x * erfc(-x * 0.70710678118654752440);  // x Phi(x)
  if constexpr (Op == MathOp::kGeluTanh) {
    // x (1 + tanh z) / 2 = x sigmoid(2 z), without the cancellation of 1 + tanh z for negative x.
    const double k = 0.79788456080286535588;  // sqrt(2 / pi)
    return x / (1.0 + exp(-2.0 * k * (x + 0.044715 * x * x * x)));
  }
  if constexpr (Op == MathOp::kMish) return x * tanh(softplus(x));
  if constexpr (Op == MathOp::kSwish) {
    const double z = a * x;  // x sigmoid(alpha x), sigmoid without overflowing exp
    return z >= 0 ? x / (1.0 + exp(-z)) : x * exp(z) / (1.0 + exp(z));
  }
  if constexpr (Op == MathOp::kThresholdedRelu) return x > a ? x : 0.0;
  if constexpr (Op == MathOp::kShrink) return x < -b ? x + a : (x > b ? x - a : 0.0);
  if constexpr (Op == MathOp::kClip) {
    const double lo = x < a ? a : x;  // std::max(x, lo) then std::min(., hi): NaN stays NaN
    return b < lo ? b : lo;
  }
  if constexpr (Op == MathOp::kSin) return sin(x);
  if constexpr (Op == MathOp::kCos) return cos(x);
  if constexpr (Op == MathOp::kTan) return tan(x);
  if constexpr (Op == MathOp::kAsin) return asin(x);
  if constexpr (Op == MathOp::kAcos) return acos(x);
  if constexpr (Op == MathOp::kAtan) return atan(x);
  if constexpr (Op == MathOp::kSinh) return sinh(x);
  if constexpr (Op == MathOp::kCosh) return cosh(x);
  if constexpr (Op == MathOp::kAsinh) return asinh(x);
  if constexpr (Op == MathOp::kAcosh) return acosh(x);
  if constexpr (Op == MathOp::kAtanh) return atanh(x);
  if constexpr (Op == MathOp::kFloor) return floor(x);
  if constexpr (Op == MathOp::kCeil) return ceil(x);
  if constexpr (Op == MathOp::kRound) return rint(x);  // halves to even
  if constexpr (Op == MathOp::kSign) return x > 0 ? 1.0 : (x < 0 ? -1.0 : (x == 0 ? 0.0 : x));  // NaN stays
  return x;
}

template <MathOp Op, class T>
__global__ void math_kernel(const T* x, T* y, int64_t n, MathParams p) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    store(y, i, static_cast<float>(math<Op>(static_cast<double>(load(x, i)), p)));
}

template <class T>
void math_typed(MathOp op, const void* x, void* y, int64_t n, MathParams p, cudaStream_t s) {
  auto* in = static_cast<const T*>(x);
  auto* out = static_cast<T*>(y);
  const unsigned g = grid_for(n, kThreads);
  switch (op) {
#define TESSERA_MATH(E) \
  case MathOp::E:       \
    return math_kernel<MathOp::E, T><<<g, kThreads, 0, s>>>(in, out, n, p);
    TESSERA_MATH(kLeakyRelu)
    TESSERA_MATH(kElu)
    TESSERA_MATH(kSelu)
    TESSERA_MATH(kCelu)
    TESSERA_MATH(kHardSigmoid)
    TESSERA_MATH(kHardSwish)
    TESSERA_MATH(kSoftplus)
    TESSERA_MATH(kSoftsign)
    TESSERA_MATH(kGelu)
    TESSERA_MATH(kGeluTanh)
    TESSERA_MATH(kMish)
    TESSERA_MATH(kSwish)
    TESSERA_MATH(kThresholdedRelu)
    TESSERA_MATH(kShrink)
    TESSERA_MATH(kClip)
    TESSERA_MATH(kSin)
    TESSERA_MATH(kCos)
    TESSERA_MATH(kTan)
    TESSERA_MATH(kAsin)
    TESSERA_MATH(kAcos)
    TESSERA_MATH(kAtan)
    TESSERA_MATH(kSinh)
    TESSERA_MATH(kCosh)
    TESSERA_MATH(kAsinh)
    TESSERA_MATH(kAcosh)
    TESSERA_MATH(kAtanh)
    TESSERA_MATH(kFloor)
    TESSERA_MATH(kCeil)
    TESSERA_MATH(kRound)
    TESSERA_MATH(kSign)
#undef TESSERA_MATH
  }
}

__device__ __forceinline__ float fold(VariadicOp op, float acc, float v) {
  switch (op) {
    case VariadicOp::kSum:
    case VariadicOp::kMean:
      return acc + v;
    case VariadicOp::kMax:
      if (acc != acc) return acc;
      if (v != v) return v;
      return acc < v ? v : acc;
    case VariadicOp::kMin:
      if (acc != acc) return acc;
      if (v != v) return v;
      return v < acc ? v : acc;
  }
  return acc;
}

template <class T>
__global__ void variadic_kernel(VariadicOp op, VariadicArgs a, T* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t idx[kMaxRank];
    int64_t rest = i;
    for (int d = a.rank - 1; d >= 0; --d) {
      idx[d] = rest % a.dims[d];
      rest /= a.dims[d];
    }
    // Mean sums in double as the reference does: the sum of large values must not overflow where their
    // mean does not, and the mean of two floats is then correctly rounded.
    float acc = 0;
    double wide = 0;
    for (int k = 0; k < a.count; ++k) {
      int64_t off = i;
      if (!a.flat[k]) {
        off = 0;
        for (int d = 0; d < a.rank; ++d) off += idx[d] * a.strides[k][d];
      }
      const float v = load(static_cast<const T*>(a.in[k]), off);
      if (op == VariadicOp::kMean)
        wide += v;
      else
        acc = k == 0 ? v : fold(op, acc, v);
    }
    if (op == VariadicOp::kMean) acc = static_cast<float>(wide / a.count);
    store(y, i, acc);
  }
}

}  // namespace

void launch_math(MathOp op, ElemType t, const void* x, void* y, int64_t n, MathParams p, cudaStream_t s) {
  if (n == 0) return;
  switch (t) {
    case ElemType::kFloat:
      return math_typed<float>(op, x, y, n, p, s);
    case ElemType::kHalf:
      return math_typed<__half>(op, x, y, n, p, s);
    case ElemType::kBFloat16:
      return math_typed<__nv_bfloat16>(op, x, y, n, p, s);
  }
}

void launch_variadic(VariadicOp op, ElemType t, const VariadicArgs& a, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  const unsigned g = grid_for(n, kThreads);
  switch (t) {
    case ElemType::kFloat:
      return variadic_kernel<float><<<g, kThreads, 0, s>>>(op, a, static_cast<float*>(y), n);
    case ElemType::kHalf:
      return variadic_kernel<__half><<<g, kThreads, 0, s>>>(op, a, static_cast<__half*>(y), n);
    case ElemType::kBFloat16:
      return variadic_kernel<__nv_bfloat16><<<g, kThreads, 0, s>>>(op, a, static_cast<__nv_bfloat16*>(y), n);
  }
}

}  // namespace tessera::cuda
