// 2-D MaxPool / AveragePool fast paths (pool_launch.h): channels-last with vector loads over channels,
// and NCHW with one thread per output and plain window loops (the general kernel of pool_launch.cu
// decodes every window position with 64-bit divisions, which made ResNet's stem MaxPool run at 57 GB/s).
#include <cmath>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/pool_launch.h"

namespace tessera::cuda {

namespace {

template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// One thread per (n, oh, ow, group of V channels). I: the index type of the decoding, 32-bit where every
// count fits (four 64-bit divisions per output made ResNet's stem MaxPool instruction-bound).
template <class T, int V, PoolKind K, class I>
__global__ void pool_nhwc(const T* x, T* y, Pool2d g, int64_t total) {
  const I cv = static_cast<I>(g.channels / V), out_w = static_cast<I>(g.out_w),
          out_h = static_cast<I>(g.out_h);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const I ii = static_cast<I>(i);
    I rest = ii / cv;
    const int64_t c0 = static_cast<int64_t>(ii % cv) * V;
    const int64_t ow = rest % out_w;
    rest /= out_w;
    const int64_t oh = rest % out_h;
    const int64_t n = rest / out_h;
    const int64_t h0 = oh * g.stride_h - g.pad_top, w0 = ow * g.stride_w - g.pad_left;
    float acc[V];
    for (int j = 0; j < V; ++j) acc[j] = K == PoolKind::kMax ? -INFINITY : 0.f;
    bool any = false;
    int count = 0, padded = 0;
    const T* px = x + n * g.in_h * g.in_w * g.channels + c0;
    for (int kh = 0; kh < g.kernel_h; ++kh) {
      const int64_t ih = h0 + kh * g.dilation_h;
      const bool row_padded = ih >= -g.pad_top && ih < g.in_h + g.pad_bottom;
      for (int kw = 0; kw < g.kernel_w; ++kw) {
        const int64_t iw = w0 + kw * g.dilation_w;
        padded += row_padded && iw >= -g.pad_left && iw < g.in_w + g.pad_right;
        if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
        const Vec<T, V> v = *reinterpret_cast<const Vec<T, V>*>(px + (ih * g.in_w + iw) * g.channels);
        for (int j = 0; j < V; ++j) {
          const float f = load<T>(v.v, j);
          if (K == PoolKind::kMax) {
            if (!any || f > acc[j]) acc[j] = f;
          } else {
            acc[j] += f;
          }
        }
        any = true;
        ++count;
      }
    }
    Vec<T, V> out;
    const int div = g.count_include_pad ? padded : count;
    for (int j = 0; j < V; ++j) {
      const float r = K == PoolKind::kMax ? acc[j] : div > 0 ? acc[j] / static_cast<float>(div) : NAN;
      store<T>(out.v, j, r);
    }
    *reinterpret_cast<Vec<T, V>*>(y + i * V) = out;
  }
}

// One thread per output of an NCHW plane; `indices` as launch_pool documents (storage_order 0 or 1).
template <class T, PoolKind K>
__global__ void pool_nchw(const T* x, T* y, int64_t* indices, Pool2d g, int storage_order, int64_t total) {
  const int64_t plane_in = g.in_h * g.in_w, plane_out = g.out_h * g.out_w;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t plane = i / plane_out, o = i % plane_out;
    const int64_t h0 = (o / g.out_w) * g.stride_h - g.pad_top, w0 = (o % g.out_w) * g.stride_w - g.pad_left;
    const T* px = x + plane * plane_in;
    float acc = K == PoolKind::kMax ? -INFINITY : 0.f;
    bool any = false;
    int count = 0, padded = 0;
    int64_t best = -1;
    for (int kh = 0; kh < g.kernel_h; ++kh) {
      const int64_t ih = h0 + kh * g.dilation_h;
      const bool row_padded = ih >= -g.pad_top && ih < g.in_h + g.pad_bottom;
      for (int kw = 0; kw < g.kernel_w; ++kw) {
        const int64_t iw = w0 + kw * g.dilation_w;
        padded += row_padded && iw >= -g.pad_left && iw < g.in_w + g.pad_right;
        if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
        const float v = load<T>(px, ih * g.in_w + iw);
        if (K == PoolKind::kMax) {
          if (!any || v > acc) {
            acc = v;
            best = storage_order == 1 ? iw * g.in_h + ih : ih * g.in_w + iw;
          }
        } else {
          acc += v;
        }
        any = true;
        ++count;
      }
    }
    const int div = g.count_include_pad ? padded : count;
    store<T>(y, i, K == PoolKind::kMax ? acc : div > 0 ? acc / static_cast<float>(div) : NAN);
    if (indices) indices[i] = best < 0 ? -1 : plane * plane_in + best;
  }
}

bool aligned(const void* p, uintptr_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

template <class T, int V>
void nhwc_v(PoolKind kind, const void* x, void* y, const Pool2d& g, cudaStream_t s) {
  const int64_t total = g.batch * g.out_h * g.out_w * (g.channels / V);
  if (total == 0) return;
  auto xp = static_cast<const T*>(x);
  auto yp = static_cast<T*>(y);
  // 32-bit decoding where the thread index and the grid-stride sum stay below 2^31.
  const bool narrow = total + static_cast<int64_t>(grid_for(total)) * 256 < (int64_t{1} << 31);
  if (kind == PoolKind::kMax && narrow)
    pool_nhwc<T, V, PoolKind::kMax, int><<<grid_for(total), 256, 0, s>>>(xp, yp, g, total);
  if (kind == PoolKind::kMax && !narrow)
    pool_nhwc<T, V, PoolKind::kMax, int64_t><<<grid_for(total), 256, 0, s>>>(xp, yp, g, total);
  if (kind == PoolKind::kAverage && narrow)
    pool_nhwc<T, V, PoolKind::kAverage, int><<<grid_for(total), 256, 0, s>>>(xp, yp, g, total);
  if (kind == PoolKind::kAverage && !narrow)
    pool_nhwc<T, V, PoolKind::kAverage, int64_t><<<grid_for(total), 256, 0, s>>>(xp, yp, g, total);
}

// 16-byte loads where the channel count and the pointers allow, else 4-byte, else one element.
template <class T>
void nhwc_t(PoolKind kind, const void* x, void* y, const Pool2d& g, cudaStream_t s) {
  constexpr int kWide = 16 / sizeof(T), kNarrow = 4 / sizeof(T) > 0 ? 4 / sizeof(T) : 1;
  if (g.channels % kWide == 0 && aligned(x, 16) && aligned(y, 16)) return nhwc_v<T, kWide>(kind, x, y, g, s);
  if (kNarrow > 1 && g.channels % kNarrow == 0 && aligned(x, 4) && aligned(y, 4))
    return nhwc_v<T, kNarrow>(kind, x, y, g, s);
  return nhwc_v<T, 1>(kind, x, y, g, s);
}

template <class T>
void nchw_t(PoolKind kind, const void* x, void* y, int64_t* indices, const Pool2d& g, int storage_order,
            cudaStream_t s) {
  const int64_t total = g.batch * g.channels * g.out_h * g.out_w;
  if (total == 0) return;
  auto xp = static_cast<const T*>(x);
  auto yp = static_cast<T*>(y);
  if (kind == PoolKind::kMax)
    pool_nchw<T, PoolKind::kMax><<<grid_for(total), 256, 0, s>>>(xp, yp, indices, g, storage_order, total);
  if (kind == PoolKind::kAverage)
    pool_nchw<T, PoolKind::kAverage><<<grid_for(total), 256, 0, s>>>(xp, yp, nullptr, g, 0, total);
}

}  // namespace

void launch_pool_nhwc(PoolKind kind, ElemType t, const void* x, void* y, const Pool2d& g, cudaStream_t s) {
  switch (t) {
    case ElemType::kFloat:
      return nhwc_t<float>(kind, x, y, g, s);
    case ElemType::kHalf:
      return nhwc_t<__half>(kind, x, y, g, s);
    case ElemType::kBFloat16:
      return nhwc_t<__nv_bfloat16>(kind, x, y, g, s);
  }
}

void launch_pool2d_nchw(PoolKind kind, ElemType t, const void* x, void* y, int64_t* indices, const Pool2d& g,
                        int storage_order, cudaStream_t s) {
  switch (t) {
    case ElemType::kFloat:
      return nchw_t<float>(kind, x, y, indices, g, storage_order, s);
    case ElemType::kHalf:
      return nchw_t<__half>(kind, x, y, indices, g, storage_order, s);
    case ElemType::kBFloat16:
      return nchw_t<__nv_bfloat16>(kind, x, y, indices, g, storage_order, s);
  }
}

}  // namespace tessera::cuda
