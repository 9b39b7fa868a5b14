// QuantizeLinear and DequantizeLinear (see quantize_ops.h): one thread per element, or per output byte
// where two or four packed codes share it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/cuda/data_minifloat.cuh"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/quantize_ops.h"

namespace tessera::cuda {

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ int64_t param_index(const QuantParams& p, int64_t i) {
  if (p.mode == 0) return 0;
  const int64_t a = (i / p.inner) % p.dim;
  if (p.mode == 1) return a;
  const int64_t o = i / (p.inner * p.dim);
  return (o * p.blocks + a / p.block) * p.inner + i % p.inner;
}

// Element i of a float tensor (or int32 for QuantizeLinear's x) as a double.
__device__ __forceinline__ double load_double(ScalarType t, const void* p, int64_t i) {
  switch (t) {
    case ScalarType::kHalf:
      return __half2float(static_cast<const __half*>(p)[i]);
    case ScalarType::kBFloat16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case ScalarType::kDouble:
      return static_cast<const double*>(p)[i];
    case ScalarType::kInt32:
      return static_cast<const int32_t*>(p)[i];
    default:
      return static_cast<const float*>(p)[i];
  }
}

// The code of element i (sign-extended for the signed integers).
__device__ __forceinline__ int64_t quant_code(const QuantSide& q, const void* t, int64_t i) {
  const auto* bytes = static_cast<const uint8_t*>(t);
  const bool is_signed = q.kind == QuantSide::Kind::kInt && q.lo < 0;
  if (q.bits < 8) {
    const int64_t bit = i * q.bits;
    int64_t v = (bytes[bit / 8] >> (bit % 8)) & ((1u << q.bits) - 1);
    if (is_signed && v > q.hi) v -= int64_t{1} << q.bits;
    return v;
  }
  if (q.bits == 16) return is_signed ? static_cast<const int16_t*>(t)[i] : static_cast<const uint16_t*>(t)[i];
  if (q.bits == 32) return static_cast<const int32_t*>(t)[i];
  return is_signed ? static_cast<const int8_t*>(t)[i] : bytes[i];
}

__device__ __forceinline__ float quant_value(const QuantSide& q, const void* t, int64_t i) {
  const int64_t c = quant_code(q, t, i);
  if (q.kind == QuantSide::Kind::kInt) return static_cast<float>(c);
  if (q.kind == QuantSide::Kind::kE8M0) return decode_e8m0(static_cast<uint8_t>(c));
  return decode_f8(q.mini, static_cast<uint8_t>(c));
}

struct QuantizeArgs {
  ScalarType x_type, scale_type;
  const void *x, *scale, *zp;
  QuantSide q;
  QuantParams p;
  bool saturate;
};

__device__ int64_t quantize_one(const QuantizeArgs& a, int64_t i) {
  const int64_t pi = param_index(a.p, i);
  const double sc = load_double(a.scale_type, a.scale, pi);
  const double xv = load_double(a.x_type, a.x, i);
  // x / scale in float for the float types (as ONNX Runtime does), in double for float64 and int32.
  const double v = a.x_type == ScalarType::kDouble || a.x_type == ScalarType::kInt32
                       ? xv / sc
                       : static_cast<double>(static_cast<float>(xv) / static_cast<float>(sc));
  const float zp = a.zp ? quant_value(a.q, a.zp, pi) : 0.0f;
  if (a.q.kind == QuantSide::Kind::kInt) {
    double r = isnan(v) ? 0.0 : rint(v) + zp;
    r = fmin(fmax(r, static_cast<double>(a.q.lo)), static_cast<double>(a.q.hi));
    return static_cast<int64_t>(r);
  }
  if (a.q.kind == QuantSide::Kind::kE8M0) return encode_e8m0(static_cast<float>(v + zp), a.saturate, 0);
  return encode_f8(a.q.mini, v + zp, a.saturate);
}

__global__ void quantize_kernel(QuantizeArgs a, void* y, int64_t n) {
  const int per = a.q.bits < 8 ? 8 / a.q.bits : 1;
  const int64_t units = (n + per - 1) / per;
  for (int64_t u = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; u < units;
       u += int64_t{gridDim.x} * blockDim.x) {
    if (per > 1) {  // one thread per output byte: no two threads write one byte
      uint32_t byte = 0;
      for (int k = 0; k < per && u * per + k < n; ++k)
        byte |= (static_cast<uint32_t>(quantize_one(a, u * per + k)) & ((1u << a.q.bits) - 1))
                << (k * a.q.bits);
      static_cast<uint8_t*>(y)[u] = static_cast<uint8_t>(byte);
      continue;
    }
    const int64_t c = quantize_one(a, u);
    if (a.q.bits == 16)
      static_cast<uint16_t*>(y)[u] = static_cast<uint16_t>(c);
    else
      static_cast<uint8_t*>(y)[u] = static_cast<uint8_t>(c);
  }
}

__global__ void dequantize_kernel(QuantSide q, const void* x, const void* zp, ScalarType scale_type,
                                  const void* scale, ScalarType y_type, void* y, int64_t n, QuantParams p) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t pi = param_index(p, i);
    const float z = zp ? quant_value(q, zp, pi) : 0.0f;
    const float v = (quant_value(q, x, i) - z) * static_cast<float>(load_double(scale_type, scale, pi));
    switch (y_type) {
      case ScalarType::kHalf:
        store(static_cast<__half*>(y), i, v);
        break;
      case ScalarType::kBFloat16:
        store(static_cast<__nv_bfloat16*>(y), i, v);
        break;
      case ScalarType::kDouble:
        static_cast<double*>(y)[i] = v;
        break;
      default:
        static_cast<float*>(y)[i] = v;
    }
  }
}

__device__ __forceinline__ float x_at(ScalarType t, const void* x, int64_t i) {
  if (t == ScalarType::kHalf) return __half2float(static_cast<const __half*>(x)[i]);
  if (t == ScalarType::kBFloat16) return __bfloat162float(static_cast<const __nv_bfloat16*>(x)[i]);
  return static_cast<const float*>(x)[i];
}

// One block finds the range, then its first thread writes the scale and the zero point.
constexpr int kRangeThreads = 1024;

__global__ void dynamic_range_kernel(ScalarType t, const void* x, int64_t n, float* scale,
                                     uint8_t* zero_point) {
  __shared__ float lo_s[kRangeThreads / 32], hi_s[kRangeThreads / 32];
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float v = x_at(t, x, i);
    lo = fminf(lo, v);
    hi = fmaxf(hi, v);
  }
  for (int o = 16; o > 0; o >>= 1) {
    lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, o));
    hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, o));
  }
  if (threadIdx.x % 32 == 0) {
    lo_s[threadIdx.x / 32] = lo;
    hi_s[threadIdx.x / 32] = hi;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int w = 1; w < kRangeThreads / 32; ++w) {
    lo = fminf(lo, lo_s[w]);
    hi = fmaxf(hi, hi_s[w]);
  }
  const float sc = (hi - lo) / 255.0f;
  const float zp = sc == 0 ? 0.0f : fminf(255.0f, fmaxf(0.0f, rintf(0.0f - lo / sc)));
  *scale = sc;
  *zero_point = static_cast<uint8_t>(zp);
}

__global__ void dynamic_quantize_kernel(ScalarType t, const void* x, int64_t n, uint8_t* y,
                                        const float* scale, const uint8_t* zero_point) {
  const float sc = *scale, zp = static_cast<float>(*zero_point);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float v = sc == 0 ? zp : fminf(255.0f, fmaxf(0.0f, rintf(x_at(t, x, i) / sc) + zp));
    y[i] = static_cast<uint8_t>(v);
  }
}

}  // namespace

void launch_dynamic_quantize(ScalarType x_type, const void* x, int64_t n, uint8_t* y, float* scale,
                             uint8_t* zero_point, cudaStream_t s) {
  dynamic_range_kernel<<<1, kRangeThreads, 0, s>>>(x_type, x, n, scale, zero_point);
  if (n > 0) dynamic_quantize_kernel<<<grid_for(n), kThreads, 0, s>>>(x_type, x, n, y, scale, zero_point);
}

void launch_quantize(ScalarType x_type, const void* x, ScalarType scale_type, const void* scale,
                     const void* zp, const QuantSide& q, void* y, int64_t n, const QuantParams& p,
                     bool saturate, cudaStream_t s) {
  if (n == 0) return;
  quantize_kernel<<<grid_for(n), kThreads, 0, s>>>(
      QuantizeArgs{x_type, scale_type, x, scale, zp, q, p, saturate}, y, n);
}

void launch_dequantize(const QuantSide& q, const void* x, const void* zp, ScalarType scale_type,
                       const void* scale, ScalarType y_type, void* y, int64_t n, const QuantParams& p,
                       cudaStream_t s) {
  if (n == 0) return;
  dequantize_kernel<<<grid_for(n), kThreads, 0, s>>>(q, x, zp, scale_type, scale, y_type, y, n, p);
}

}  // namespace tessera::cuda
