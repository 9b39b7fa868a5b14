#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <type_traits>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/gelu.h"
#include "backends/cuda/gelu_math.h"
#include "backends/cuda/pack16.cuh"

namespace tessera::cuda {

namespace {

// float16 and bfloat16 outputs: float32 math, whose error stays far below half a float16 ulp (2^-11
// relative), so the result is the float16 rounding of the exact value, or its neighbour on a rounding
// boundary.
template <GeluForm F, bool kSubnormals>
__device__ __forceinline__ float gelu_f32(float x, float alpha) {
  if constexpr (F == GeluForm::kErf) {
    // Near 0, GELU is x/2 + x^2 / sqrt(2 pi) (relative error x^2/6 below 2^-10): strictly above x/2,
    // which for the smallest subnormals is itself a tie of the 16-bit type, and float32 cannot hold the
    // x^2 term next to it. Rounding the sum up keeps it above the tie, so the 16-bit rounding goes the
    // exact value's way instead of flushing to zero; a zero keeps its sign.
    if (fabsf(x) < 0x1p-10f) return x == 0.0f ? x : __fmaf_ru(0.39894228f * x, x, 0.5f * x);
    return erf_gelu<kSubnormals>(x);
  }
  if constexpr (F == GeluForm::kTanh) {
    // x / (1 + exp(-2u)) overflows exp for u below -44, giving -0 where bfloat16 has a subnormal (x =
    // -10.125: -6.6e-39); below 0 the same value as x e / (1 + e), e = exp(2u), which underflows
    // gradually instead.
    const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    if (u >= 0.0f) return x / (1.0f + expf(-2.0f * u));
    const float e = expf(2.0f * u);
    return x * e / (1.0f + e);
  }
  float z = alpha * x;
  if (z >= 0.0f) return x / (1.0f + expf(-z));
  float e = expf(z);
  return x * e / (1.0f + e);
}

// float32 outputs: double, rounded once, as the reference kernels do. In float32, the erf form's tail
// would miss the few-ulp bound (erfcf's 4 ulp plus the amplified rounding of x / sqrt 2).
template <GeluForm F>
__device__ __forceinline__ float gelu_f64(float x, float alpha) {
  // 0.5 x (1 + erf(x / sqrt 2)) as 0.5 x erfc(-x / sqrt 2): no cancellation where erf is near -1.
  double d = x;
  if constexpr (F == GeluForm::kErf) return static_cast<float>(0.5 * d * erfc(-d * 0.70710678118654752));
  if constexpr (F == GeluForm::kTanh) {
    // 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3): the same without
    // the cancellation of 1 + tanh(u) for negative u.
    double u = 0.7978845608028654 * (d + 0.044715 * d * d * d);
    return static_cast<float>(d / (1.0 + exp(-2.0 * u)));
  }
  // x * sigmoid(alpha x), in the form that does not overflow for large |alpha x|.
  double z = static_cast<double>(alpha) * d;
  if (z >= 0.0) return static_cast<float>(d / (1.0 + exp(-z)));
  double e = exp(z);
  return static_cast<float>(d * e / (1.0 + e));
}

template <GeluForm F, class T>
__device__ __forceinline__ float gelu(float x, float alpha) {
  if constexpr (std::is_same_v<T, float>) return gelu_f64<F>(x, alpha);
  // float16 never sees a float32 subnormal (its own smallest value is 6e-8): the flush-to-zero
  // exponential is one instruction where exp2f scales around it; bfloat16 keeps float32's range.
  return gelu_f32<F, std::is_same_v<T, __nv_bfloat16>>(x, alpha);
}

template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <GeluForm F, class T>
__global__ void gelu_kernel(const T* x, const T* bias, int64_t bias_len, T* y, int64_t n, float alpha) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    float v = load(x, i);
    if (bias) v += load(bias, i % bias_len);
    store(y, i, gelu<F, T>(v, alpha));
  }
}

// 16 bytes a load and a store: n and bias_len multiples of N, pointers aligned to 16 bytes.
template <GeluForm F, class T, int N>
__global__ void gelu_vec_kernel(const T* x, const T* bias, int64_t bias_len, T* y, int64_t groups,
                                float alpha) {
  for (int64_t g = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; g < groups;
       g += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = g * N;
    Pack<T, N> xv = *reinterpret_cast<const Pack<T, N>*>(x + i), out;
    Pack<T, N> bv;
    if (bias) bv = *reinterpret_cast<const Pack<T, N>*>(bias + i % bias_len);
#pragma unroll
    for (int e = 0; e < N; ++e) {
      float v = load(xv.v, e);
      if (bias) v += load(bv.v, e);
      store(out.v, e, gelu<F, T>(v, alpha));
    }
    *reinterpret_cast<Pack<T, N>*>(y + i) = out;
  }
}

// x is read once (the product's output, last used here): streaming loads (evict-first), so that L2
// keeps y for the next product, which reads it.
template <class T, int N>
__device__ __forceinline__ Pack<T, N> read_streaming(const Pack<T, N>* p) {
  Pack<T, N> v;
  *reinterpret_cast<int4*>(&v) = __ldcs(reinterpret_cast<const int4*>(p));
  return v;
}

template <GeluForm F, class T, int N>
__device__ __forceinline__ Pack<T, N> bias_gelu(const Pack<T, N>& xv, const float (&b)[N], float alpha) {
  float v[N];
#pragma unroll
  for (int e = 0; e < N; ++e) v[e] = gelu<F, T>(load(xv.v, e) + b[e], alpha);
  Pack<T, N> out;
  store_rounded(out.v, v);
  return out;
}

// With a bias: a [rows, cols] grid of 16-byte vectors, x over the column vectors and y over row strides,
// so that each thread loads its vector of the bias once (kept in registers) and no thread divides to find
// its column. R rows an iteration, every load issued before any is used: R times the bytes in flight.
// MinBlocks > 1: registers bounded so that many blocks of 128 threads fit an SM (16: 32 registers).
template <GeluForm F, class T, int N, int R, int MinBlocks = 1>
__global__ void __launch_bounds__(128, MinBlocks)
    gelu_bias_rows_kernel(const T* __restrict__ x, const T* __restrict__ bias, T* __restrict__ y,
                          int64_t rows, int cgroups, float alpha) {
  const int cg = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (cg >= cgroups) return;
  const Pack<T, N> bv = reinterpret_cast<const Pack<T, N>*>(bias)[cg];
  float b[N];
#pragma unroll
  for (int e = 0; e < N; ++e) b[e] = load(bv.v, e);
  const auto* xp = reinterpret_cast<const Pack<T, N>*>(x);
  auto* yp = reinterpret_cast<Pack<T, N>*>(y);
  const int64_t stride = gridDim.y;
  int64_t r = blockIdx.y;
  for (; r + (R - 1) * stride < rows; r += R * stride) {
    Pack<T, N> xv[R];
#pragma unroll
    for (int k = 0; k < R; ++k) xv[k] = read_streaming(xp + (r + k * stride) * cgroups + cg);
#pragma unroll
    for (int k = 0; k < R; ++k) yp[(r + k * stride) * cgroups + cg] = bias_gelu<F, T, N>(xv[k], b, alpha);
  }
  for (; r < rows; r += stride)
    yp[r * cgroups + cg] = bias_gelu<F, T, N>(read_streaming(xp + r * cgroups + cg), b, alpha);
}

// The resident blocks of `kernel` an SM holds (its registers decide: 33-37 registers a thread are
// allocated as 40, so 12 blocks of 128 threads, not 16), times the SMs: one full wave. Host queries, once per
// kernel (not stream operations: nothing a CUDA graph capture sees).
template <class K>
int64_t one_wave(K kernel, int threads) {
  int dev = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1)
    sms = 132;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0) != cudaSuccess || per_sm < 1)
    per_sm = 1;
  return int64_t{sms} * per_sm;
}

// Each thread walks rows of its column, R at a time. Wave false: about 16 blocks of 128 threads an SM on
// a 132-SM H100 (2112 blocks: 1.33 waves where 12 fit); true: exactly the blocks one wave holds, each
// thread at least R rows where there are enough.
template <GeluForm F, class T, int N, int R, bool Wave, int MinBlocks = 1>
void gelu_bias_rows(const T* in, const T* b, int64_t bias_len, T* out, int64_t n, float alpha,
                    cudaStream_t s) {
  constexpr int kThreads = 128;
  const auto cgroups = static_cast<int>(bias_len / N);
  const int64_t rows = n / bias_len;
  const unsigned gx = static_cast<unsigned>((cgroups + kThreads - 1) / kThreads);
  static const int64_t wave = Wave ? one_wave(gelu_bias_rows_kernel<F, T, N, R, MinBlocks>, kThreads) : 2112;
  const int64_t want_y = std::max<int64_t>(1, wave / gx);
  const int64_t per_r = (rows + R - 1) / R;
  const auto gy = static_cast<unsigned>(std::min<int64_t>({R == 2 && !Wave ? rows : per_r, want_y, 65535}));
  gelu_bias_rows_kernel<F, T, N, R, MinBlocks>
      <<<dim3(gx, gy), kThreads, 0, s>>>(in, b, out, rows, cgroups, alpha);
}

// With a bias, flat: each thread takes U vectors kThreads apart (every load issued first), a block U *
// kThreads consecutive vectors, as many blocks as that makes (no grid-stride loop: the blocks' end is
// spread over a few short waves instead of one long one). The bias vector of each is found with one
// 32-bit remainder (vecs < 2^31) and read through the read-only cache.
template <GeluForm F, class T, int N, int U>
__global__ void __launch_bounds__(256)
    gelu_bias_flat_kernel(const T* __restrict__ x, const T* __restrict__ bias, T* __restrict__ y,
                          uint32_t vecs, uint32_t cgroups, float alpha) {
  const uint32_t v0 = blockIdx.x * (256u * U) + threadIdx.x;
  const auto* xp = reinterpret_cast<const Pack<T, N>*>(x);
  const auto* bp = reinterpret_cast<const Pack<T, N>*>(bias);
  auto* yp = reinterpret_cast<Pack<T, N>*>(y);
  Pack<T, N> xv[U], bv[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const uint32_t v = v0 + u * 256u;
    if (v < vecs) {
      xv[u] = read_streaming(xp + v);
      *reinterpret_cast<int4*>(&bv[u]) = __ldg(reinterpret_cast<const int4*>(bp + v % cgroups));
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const uint32_t v = v0 + u * 256u;
    if (v >= vecs) continue;
    float b[N];
#pragma unroll
    for (int e = 0; e < N; ++e) b[e] = load(bv[u].v, e);
    yp[v] = bias_gelu<F, T, N>(xv[u], b, alpha);
  }
}

template <GeluForm F, class T, int N, int U>
void gelu_bias_flat(const T* in, const T* b, int64_t bias_len, T* out, int64_t n, float alpha,
                    cudaStream_t s) {
  const auto vecs = static_cast<uint32_t>(n / N);
  const unsigned blocks = (vecs + 256u * U - 1) / (256u * U);
  gelu_bias_flat_kernel<F, T, N, U>
      <<<blocks, 256, 0, s>>>(in, b, out, vecs, static_cast<uint32_t>(bias_len / N), alpha);
}

// The BiasGelu kernel TESSERA_GELU_BIAS forces, for measuring one against another (the micro-benchmark
// in tests/cuda/gelu_bias_test.cpp): "rows2" (the row kernel, 2 rows an iteration, 2112 blocks), "rows2w",
// "rows4w" (2 or 4 rows an iteration, one wave of blocks), "rows2f" (2 rows, registers bounded to 32 so
// that 16 blocks fit an SM: full occupancy, one wave), "flat4", "flat8" (the flat kernel, 4 or 8 vectors a
// thread); unset or anything else: the default. Read at each launch.
enum class BiasKernel { kRows2, kRows2Wave, kRows4Wave, kRows2Full, kFlat4, kFlat8 };
constexpr BiasKernel kDefaultBiasKernel = BiasKernel::kRows2;

BiasKernel bias_kernel() {
  const char* v = std::getenv("TESSERA_GELU_BIAS");
  if (!v) return kDefaultBiasKernel;
  const std::string_view s(v);
  if (s == "rows2") return BiasKernel::kRows2;
  if (s == "rows2w") return BiasKernel::kRows2Wave;
  if (s == "rows4w") return BiasKernel::kRows4Wave;
  if (s == "rows2f") return BiasKernel::kRows2Full;
  if (s == "flat4") return BiasKernel::kFlat4;
  if (s == "flat8") return BiasKernel::kFlat8;
  return kDefaultBiasKernel;
}

template <GeluForm F, class T, int N>
void gelu_bias_vec(const T* in, const T* b, int64_t bias_len, T* out, int64_t n, float alpha,
                   cudaStream_t s) {
  BiasKernel k = bias_kernel();
  if (n / N >= (int64_t{1} << 31) && (k == BiasKernel::kFlat4 || k == BiasKernel::kFlat8))
    k = BiasKernel::kRows2;
  switch (k) {
    case BiasKernel::kRows2Wave:
      return gelu_bias_rows<F, T, N, 2, true>(in, b, bias_len, out, n, alpha, s);
    case BiasKernel::kRows4Wave:
      return gelu_bias_rows<F, T, N, 4, true>(in, b, bias_len, out, n, alpha, s);
    case BiasKernel::kRows2Full:
      return gelu_bias_rows<F, T, N, 2, true, 16>(in, b, bias_len, out, n, alpha, s);
    case BiasKernel::kFlat4:
      return gelu_bias_flat<F, T, N, 4>(in, b, bias_len, out, n, alpha, s);
    case BiasKernel::kFlat8:
      return gelu_bias_flat<F, T, N, 8>(in, b, bias_len, out, n, alpha, s);
    case BiasKernel::kRows2:
      break;
  }
  gelu_bias_rows<F, T, N, 2, false>(in, b, bias_len, out, n, alpha, s);
}

bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

template <GeluForm F, class T>
void run(const T* in, const T* b, int64_t bias_len, T* out, int64_t n, float alpha, cudaStream_t s) {
  constexpr int kVec = 16 / sizeof(T);
  bool vec =
      n % kVec == 0 && aligned16(in) && aligned16(out) && (!b || (bias_len % kVec == 0 && aligned16(b)));
  // A bias of at least 32 vectors: the row kernel (fewer idle lanes than columns otherwise).
  if (vec && b && bias_len >= 32 * kVec && bias_len / kVec < (int64_t{1} << 30))
    return gelu_bias_vec<F, T, kVec>(in, b, bias_len, out, n, alpha, s);
  if (vec)
    return gelu_vec_kernel<F, T, kVec>
        <<<grid_for(n / kVec), 256, 0, s>>>(in, b, bias_len, out, n / kVec, alpha);
  gelu_kernel<F, T><<<grid_for(n), 256, 0, s>>>(in, b, bias_len, out, n, alpha);
}

template <class T>
void typed(GeluForm form, const void* x, const void* bias, int64_t bias_len, void* y, int64_t n, float alpha,
           cudaStream_t s) {
  auto* in = static_cast<const T*>(x);
  auto* b = static_cast<const T*>(bias);
  auto* out = static_cast<T*>(y);
  switch (form) {
    case GeluForm::kErf:
      return run<GeluForm::kErf, T>(in, b, bias_len, out, n, alpha, s);
    case GeluForm::kTanh:
      return run<GeluForm::kTanh, T>(in, b, bias_len, out, n, alpha, s);
    case GeluForm::kQuick:
      return run<GeluForm::kQuick, T>(in, b, bias_len, out, n, alpha, s);
  }
}

}  // namespace

void launch_gelu(GeluForm form, ElemType t, const void* x, const void* bias, int64_t bias_len, void* y,
                 int64_t n, float alpha, cudaStream_t s) {
  if (n == 0) return;
  switch (t) {
    case ElemType::kFloat:
      return typed<float>(form, x, bias, bias_len, y, n, alpha, s);
    case ElemType::kHalf:
      return typed<__half>(form, x, bias, bias_len, y, n, alpha, s);
    case ElemType::kBFloat16:
      return typed<__nv_bfloat16>(form, x, bias, bias_len, y, n, alpha, s);
  }
}

}  // namespace tessera::cuda
