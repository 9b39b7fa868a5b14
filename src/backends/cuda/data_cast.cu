// Cast to and from the small types (see data_cast.h): every element passes through a Num, the double and
// exact int64 the CPU reference keeps, so that neither a large integer nor a float loses anything.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/cuda/data_cast.h"
#include "backends/cuda/data_minifloat.cuh"
#include "backends/cuda/device_types.cuh"

namespace tessera::cuda {

namespace {

constexpr int kThreads = 256;

struct Num {
  double d;
  int64_t i;
  bool integral;  // i is exact (an integer or bool source); else d is
  bool big;       // a uint64 beyond int64: the value is i's bits read as uint64
};

__device__ __forceinline__ int64_t to_int64(double d) {
  if (d != d) return 0;
  d = trunc(d);
  if (d >= 9223372036854775808.0) return INT64_MAX;
  if (d < -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(d);
}

__device__ __forceinline__ Num of_int(int64_t v) {
  return {static_cast<double>(v), v, true, false};
}
__device__ __forceinline__ Num of_double(double v) {
  return {v, to_int64(v), false, false};
}

template <class T>
__device__ __forceinline__ T at(const void* p, int64_t i) {
  return static_cast<const T*>(p)[i];
}

__device__ Num read_scalar(ScalarType t, const void* x, int64_t i) {
  switch (t) {
    case ScalarType::kFloat:
      return of_double(at<float>(x, i));
    case ScalarType::kHalf:
      return of_double(__half2float(at<__half>(x, i)));
    case ScalarType::kBFloat16:
      return of_double(__bfloat162float(at<__nv_bfloat16>(x, i)));
    case ScalarType::kDouble:
      return of_double(at<double>(x, i));
    case ScalarType::kInt8:
      return of_int(at<int8_t>(x, i));
    case ScalarType::kUint8:
      return of_int(at<uint8_t>(x, i));
    case ScalarType::kInt16:
      return of_int(at<int16_t>(x, i));
    case ScalarType::kUint16:
      return of_int(at<uint16_t>(x, i));
    case ScalarType::kInt32:
      return of_int(at<int32_t>(x, i));
    case ScalarType::kUint32:
      return of_int(at<uint32_t>(x, i));
    case ScalarType::kInt64:
      return of_int(at<int64_t>(x, i));
    case ScalarType::kUint64: {
      const uint64_t v = at<uint64_t>(x, i);
      return {static_cast<double>(v), static_cast<int64_t>(v), true, v > static_cast<uint64_t>(INT64_MAX)};
    }
    case ScalarType::kBool:
      return of_int(at<bool>(x, i) ? 1 : 0);
  }
  return of_int(0);
}

// Element i of the source: a byte, or a code of `bits` bits (the first element in the low bits).
__device__ __forceinline__ uint8_t code_at(const CastSide& s, const void* x, int64_t i) {
  const uint8_t* p = static_cast<const uint8_t*>(x);
  if (s.bits == 8) return p[i];
  const int per_byte = 8 / s.bits;
  return static_cast<uint8_t>((p[i / per_byte] >> ((i % per_byte) * s.bits)) & ((1u << s.bits) - 1));
}

__device__ Num read(const CastSide& s, const void* x, int64_t i) {
  switch (s.kind) {
    case CastSide::Kind::kScalar:
      return read_scalar(s.scalar, x, i);
    case CastSide::Kind::kMiniFloat:
      return of_double(decode_f8(s.mini, code_at(s, x, i)));
    case CastSide::Kind::kE8M0:
      return of_double(decode_e8m0(code_at(s, x, i)));
    case CastSide::Kind::kInt: {
      const int64_t c = code_at(s, x, i);
      return of_int(c & (int64_t{1} << (s.bits - 1)) ? c - (int64_t{1} << s.bits) : c);
    }
    case CastSide::Kind::kUint:
      return of_int(code_at(s, x, i));
  }
  return of_int(0);
}

// A Num as integer type T: float sources truncate (clamping to int64, or to uint64 for uint64), then
// wrap to the width.
template <class T>
__device__ __forceinline__ T as_int(const Num& n) {
  if (n.integral) return static_cast<T>(n.i);
  if (sizeof(T) == 8 && static_cast<T>(-1) > 0) {
    if (n.d >= 18446744073709551616.0) return static_cast<T>(UINT64_MAX);
    if (n.d >= 9223372036854775808.0) return static_cast<T>(static_cast<uint64_t>(trunc(n.d)));
  }
  return static_cast<T>(n.i);
}

// A Num as a float: integers convert from their exact value (uint64 beyond int64 from its bits).
__device__ __forceinline__ double as_double(const Num& n) {
  if (n.big) return static_cast<double>(static_cast<uint64_t>(n.i));
  return n.integral ? static_cast<double>(n.i) : n.d;
}

__device__ __forceinline__ float as_float(const Num& n) {
  if (n.big) return static_cast<float>(static_cast<uint64_t>(n.i));
  return n.integral ? static_cast<float>(n.i) : static_cast<float>(n.d);
}

__device__ void write_scalar(ScalarType t, void* y, int64_t i, const Num& n) {
  switch (t) {
    case ScalarType::kFloat:
      static_cast<float*>(y)[i] = as_float(n);
      return;
    case ScalarType::kHalf:
      static_cast<__half*>(y)[i] = __float2half_rn(as_float(n));
      return;
    case ScalarType::kBFloat16:
      static_cast<__nv_bfloat16*>(y)[i] = __float2bfloat16_rn(as_float(n));
      return;
    case ScalarType::kDouble:
      static_cast<double*>(y)[i] = as_double(n);
      return;
    case ScalarType::kInt8:
      static_cast<int8_t*>(y)[i] = as_int<int8_t>(n);
      return;
    case ScalarType::kUint8:
      static_cast<uint8_t*>(y)[i] = as_int<uint8_t>(n);
      return;
    case ScalarType::kInt16:
      static_cast<int16_t*>(y)[i] = as_int<int16_t>(n);
      return;
    case ScalarType::kUint16:
      static_cast<uint16_t*>(y)[i] = as_int<uint16_t>(n);
      return;
    case ScalarType::kInt32:
      static_cast<int32_t*>(y)[i] = as_int<int32_t>(n);
      return;
    case ScalarType::kUint32:
      static_cast<uint32_t*>(y)[i] = as_int<uint32_t>(n);
      return;
    case ScalarType::kInt64:
      static_cast<int64_t*>(y)[i] = as_int<int64_t>(n);
      return;
    case ScalarType::kUint64:
      static_cast<uint64_t*>(y)[i] = as_int<uint64_t>(n);
      return;
    case ScalarType::kBool:
      static_cast<bool*>(y)[i] = n.integral ? n.i != 0 : n.d != 0;
      return;
  }
}

// The code of a Num in a small type.
__device__ uint8_t small_code(const CastSide& s, const Num& n, bool saturate, E8M0Rounding round) {
  switch (s.kind) {
    case CastSide::Kind::kMiniFloat:
      // float4e2m1 has no NaN or infinity: it always saturates.
      return encode_f8(s.mini, as_double(n), saturate || !s.mini.has_nan);
    case CastSide::Kind::kE8M0:
      return encode_e8m0(static_cast<float>(as_double(n)), saturate, static_cast<int>(round));
    default:  // integers wrap to the width
      return static_cast<uint8_t>(static_cast<uint64_t>(n.i) & ((1u << s.bits) - 1));
  }
}

__global__ void cast_small_kernel(CastSide from, CastSide to, const void* x, void* y, int64_t n,
                                  bool saturate, E8M0Rounding round) {
  const int per = to.kind == CastSide::Kind::kScalar ? 1 : 8 / to.bits;
  const int64_t units = (n + per - 1) / per;  // output elements, or output bytes of packed codes
  for (int64_t u = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; u < units;
       u += int64_t{gridDim.x} * blockDim.x) {
    if (to.kind == CastSide::Kind::kScalar) {
      write_scalar(to.scalar, y, u, read(from, x, u));
      continue;
    }
    // One thread per output byte, so that no two threads write one byte; unused high bits stay 0.
    uint8_t byte = 0;
    for (int k = 0; k < per && u * per + k < n; ++k)
      byte |=
          static_cast<uint8_t>(small_code(to, read(from, x, u * per + k), saturate, round) << (k * to.bits));
    static_cast<uint8_t*>(y)[u] = byte;
  }
}

}  // namespace

void launch_cast_small(const CastSide& from, const CastSide& to, const void* x, void* y, int64_t n,
                       bool saturate, E8M0Rounding round, cudaStream_t s) {
  if (n == 0) return;
  cast_small_kernel<<<grid_for(n), kThreads, 0, s>>>(from, to, x, y, n, saturate, round);
}

}  // namespace tessera::cuda
