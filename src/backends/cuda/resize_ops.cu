// Resize on the GPU (see resize_ops.h). Products and sums go through __dmul_rn / __dadd_rn where the
// compiler would otherwise fuse them into a multiply-add, so that the taps, weights and sums are the
// CPU reference's to the bit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <limits>
#include <type_traits>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/resize_ops.h"
#include "backends/cuda/resize_util.cuh"

namespace tessera::cuda {

namespace {

constexpr int kThreads = 256;

enum Coord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
enum Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

__device__ double source_coord(const ResizeSpec& s, const ResizeAxis& a, double x) {
  const double in = static_cast<double>(a.in);
  const double out_w = __dmul_rn(a.scale, in);
  switch (s.coord) {
    case kHalfPixel:
      return (x + 0.5) / a.scale - 0.5;
    case kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(a.out) / out_w;
      const double offset = __dmul_rn(in / 2, 1 - adjustment);
      return __dadd_rn(offset, (x + 0.5) / a.scale) - 0.5;
    }
    case kPytorchHalfPixel:
      return a.out > 1 ? (x + 0.5) / a.scale - 0.5 : -0.5;
    case kAlignCorners:
      return out_w == 1 ? 0.0 : __dmul_rn(x, in - 1) / (out_w - 1);
    case kAsymmetric:
      return x / a.scale;
    case kTfHalfPixelForNn:
      return (x + 0.5) / a.scale;
    case kTfCropAndResize: {
      const double extent = a.roi_end - a.roi_start;
      const double v =
          out_w == 1 ? __dmul_rn(extent, in - 1) / 2 : __dmul_rn(__dmul_rn(x, extent), in - 1) / (out_w - 1);
      return __dadd_rn(v, __dmul_rn(a.roi_start, in - 1));
    }
  }
  return 0.0;
}

__device__ __forceinline__ double cubic_weight(double x, double a) {
  x = fabs(x);
  if (x <= 1) return __dadd_rn(__dmul_rn(__dmul_rn(__dadd_rn(__dmul_rn(a + 2, x), -(a + 3)), x), x), 1.0);
  if (x < 2) {
    const double t = __dadd_rn(__dmul_rn(a, x), -__dmul_rn(5.0, a));
    return __dadd_rn(__dmul_rn(__dadd_rn(__dmul_rn(t, x), __dmul_rn(8.0, a)), x), -__dmul_rn(4.0, a));
  }
  return 0.0;
}

__device__ int64_t nearest_index(const ResizeSpec& s, const ResizeAxis& a, double xo) {
  if (s.nearest == kSimple)
    return a.scale < 1 ? static_cast<int64_t>(ceil(xo)) : static_cast<int64_t>(floor(xo));
  const double i0 = ceil(xo) - 1;
  const double ratio = xo - i0;
  bool upper = true;
  if (ratio != 1.0) {
    if (s.nearest == kRoundPreferFloor)
      upper = ratio > 0.5;
    else if (s.nearest == kRoundPreferCeil)
      upper = ratio >= 0.5;
    else if (s.nearest == kFloor)
      upper = false;
  }
  return static_cast<int64_t>(i0) + (upper ? 1 : 0);
}

// The taps of output position x along one axis: input indices i0 + first + k for k < n, with the sums
// that normalise their weights.
struct AxisTaps {
  int64_t i0 = 0, first = 0, n = 1;
  double xo = 0, fs = 1, sum = 0, sum2 = 0;
  bool outside = false;
};

__device__ __forceinline__ int64_t clamp_index(int64_t i, int64_t last) {
  return i < 0 ? 0 : (i > last ? last : i);
}

__device__ __forceinline__ double raw_weight(const ResizeSpec& s, const AxisTaps& t, int64_t k) {
  const double d = __dmul_rn(static_cast<double>(t.i0 + t.first + k) - t.xo, t.fs);
  return s.mode == 1 ? fmax(0.0, 1.0 - fabs(d)) : cubic_weight(d, s.cubic_a);
}

__device__ double tap_weight(const ResizeSpec& s, const AxisTaps& t, int64_t k, int64_t last) {
  double w = raw_weight(s, t, k);
  if (s.antialias && t.sum != 0) w /= t.sum;
  if (s.exclude_outside) {
    const int64_t idx = t.i0 + t.first + k;
    if (idx < 0 || idx > last) w = 0;
    if (t.sum2 != 0) w /= t.sum2;
  }
  return w;
}

__device__ AxisTaps axis_taps(const ResizeSpec& s, const ResizeAxis& a, int64_t x) {
  AxisTaps t;
  const int64_t last = a.in - 1;
  double xo = source_coord(s, a, static_cast<double>(x));
  t.outside = s.coord == kTfCropAndResize && !(xo >= 0 && xo <= static_cast<double>(last));
  const double margin = 8.0;
  if (!(xo >= -margin)) xo = -margin;
  if (!(xo <= static_cast<double>(a.in) + margin)) xo = static_cast<double>(a.in) + margin;
  t.xo = xo;
  if (s.mode == 0) {
    t.i0 = clamp_index(nearest_index(s, a, xo), last);
    return t;
  }
  t.fs = s.antialias ? fmin(a.scale, 1.0) : 1.0;
  const double support = s.mode == 1 ? 1.0 : 2.0;
  t.first = static_cast<int64_t>(floor(-support / t.fs)) + 1;
  t.n = 2 - 2 * t.first;
  t.i0 = static_cast<int64_t>(ceil(xo)) - 1;
  for (int64_t k = 0; k < t.n; ++k) t.sum = __dadd_rn(t.sum, raw_weight(s, t, k));
  if (s.exclude_outside) {
    for (int64_t k = 0; k < t.n; ++k) {
      const int64_t idx = t.i0 + t.first + k;
      double w = raw_weight(s, t, k);
      if (s.antialias && t.sum != 0) w /= t.sum;
      if (idx < 0 || idx > last) w = 0;
      t.sum2 = __dadd_rn(t.sum2, w);
    }
  }
  return t;
}

template <class S>
__global__ void resize_nearest_kernel(const S* x, S* y, int64_t n, ResizeSpec s) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rest = i, off = 0, stride = 1;
    bool outside = false;
    for (int d = s.rank - 1; d >= 0; --d) {
      const ResizeAxis& a = s.axes[d];
      const int64_t p = rest % a.out;
      rest /= a.out;
      const AxisTaps t = axis_taps(s, a, p);
      outside = outside || t.outside;
      off += t.i0 * stride;
      stride *= a.in;
    }
    y[i] = outside ? static_cast<S>(s.extrapolation_bits) : x[off];
  }
}

template <class T>
__global__ void resize_interpolate_kernel(const T* x, T* y, int64_t n, ResizeSpec s) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    AxisTaps t[kResizeRank];
    int64_t rest = i;
    bool outside = false;
    for (int d = s.rank - 1; d >= 0; --d) {
      const int64_t p = rest % s.axes[d].out;
      rest /= s.axes[d].out;
      t[d] = axis_taps(s, s.axes[d], p);
      outside = outside || t[d].outside;
    }
    if (outside) {
      store_double(y, i, s.extrapolation);
      continue;
    }
    // The cartesian product of the taps, the last axis fastest, taps of zero weight skipped.
    int64_t k[kResizeRank];
    for (int d = 0; d < s.rank; ++d) k[d] = 0;
    double acc = 0;
    while (true) {
      double w = 1;
      int64_t off = 0;
      bool zero = false;
      for (int d = 0; d < s.rank; ++d) {
        const int64_t last = s.axes[d].in - 1;
        const double wd = tap_weight(s, t[d], k[d], last);
        zero = zero || wd == 0;
        w = __dmul_rn(w, wd);
        off = off * s.axes[d].in + clamp_index(t[d].i0 + t[d].first + k[d], last);
      }
      if (!zero) acc = __dadd_rn(acc, __dmul_rn(w, as_double(x, off)));
      int d = s.rank - 1;
      for (; d >= 0; --d) {
        if (++k[d] < t[d].n) break;
        k[d] = 0;
      }
      if (d < 0) break;
    }
    store_double(y, i, acc);
  }
}

}  // namespace

void launch_resize_nearest(int elem_bytes, const void* x, void* y, const ResizeSpec& spec, int64_t n,
                           cudaStream_t s) {
  if (n == 0) return;
  auto go = [&](auto tag) {
    using S = typename decltype(tag)::type;
    resize_nearest_kernel<S>
        <<<grid_for(n), kThreads, 0, s>>>(static_cast<const S*>(x), static_cast<S*>(y), n, spec);
  };
  by_size(elem_bytes, go);
}

void launch_resize_interpolate(ScalarType t, const void* x, void* y, const ResizeSpec& spec, int64_t n,
                               cudaStream_t s) {
  if (n == 0) return;
  by_scalar_type<float>(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    resize_interpolate_kernel<T>
        <<<grid_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), n, spec);
  });
}

}  // namespace tessera::cuda
