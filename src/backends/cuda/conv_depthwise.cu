#include "backends/cuda/conv_depthwise.h"
#include "backends/cuda/conv_depthwise_tiled.h"
#include "backends/cuda/conv_epilogue.cuh"
#include "backends/cuda/device_types.cuh"

namespace tessera::cuda {

namespace {

template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// One thread per (n, oh, ow, group of V channels): neighbouring threads read neighbouring channels of
// one pixel, so each window tap is one coalesced load.
template <class T, int V>
__global__ void depthwise(const T* x, const T* w, const T* b, const T* z, T* y, Depthwise g, Epilogue e,
                          int64_t total) {
  const int64_t cv = g.channels / V;
  const int taps = g.kernel_h * g.kernel_w;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i / cv;
    const int64_t c0 = (i % cv) * V;
    const int64_t ow = rest % g.out_w;
    rest /= g.out_w;
    const int64_t oh = rest % g.out_h;
    const int64_t n = rest / g.out_h;
    const int64_t h0 = oh * g.stride_h - g.pad_top, w0 = ow * g.stride_w - g.pad_left;
    float acc[V];
    for (int j = 0; j < V; ++j) acc[j] = 0.f;
    const T* px = x + n * g.in_h * g.in_w * g.channels + c0;
    const T* pw = w + c0 * taps;
    for (int kh = 0; kh < g.kernel_h; ++kh) {
      const int64_t ih = h0 + kh * g.dilation_h;
      if (ih < 0 || ih >= g.in_h) continue;
      for (int kw = 0; kw < g.kernel_w; ++kw) {
        const int64_t iw = w0 + kw * g.dilation_w;
        if (iw < 0 || iw >= g.in_w) continue;
        const Vec<T, V> v = *reinterpret_cast<const Vec<T, V>*>(px + (ih * g.in_w + iw) * g.channels);
        const int tap = kh * g.kernel_w + kw;
        for (int j = 0; j < V; ++j) acc[j] = fmaf(load<T>(v.v, j), load<T>(pw, j * taps + tap), acc[j]);
      }
    }
    Vec<T, V> out;
    for (int j = 0; j < V; ++j) {
      float r = acc[j];
      if (b) r += load<T>(b, c0 + j);
      if (z) r += load<T>(z, i * V + j);
      store<T>(out.v, j, conv_activate(r, e));
    }
    *reinterpret_cast<Vec<T, V>*>(y + i * V) = out;
  }
}

bool aligned(const void* p, uintptr_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

template <class T, int V>
void launch_v(const void* x, const void* w, const void* b, const void* z, void* y, const Depthwise& g,
              const Epilogue& e, cudaStream_t s) {
  const int64_t total = g.batch * g.out_h * g.out_w * (g.channels / V);
  if (total == 0) return;
  depthwise<T, V><<<grid_for(total), 256, 0, s>>>(static_cast<const T*>(x), static_cast<const T*>(w),
                                                  static_cast<const T*>(b), static_cast<const T*>(z),
                                                  static_cast<T*>(y), g, e, total);
}

// 16-byte vectors of channels where the channel count and the pointers allow, else single channels.
template <class T>
void launch_t(const void* x, const void* w, const void* b, const void* z, void* y, const Depthwise& g,
              const Epilogue& e, cudaStream_t s) {
  constexpr int kWide = 16 / sizeof(T);
  if (g.channels % kWide == 0 && aligned(x, 16) && aligned(y, 16) && (!z || aligned(z, 16)))
    return launch_v<T, kWide>(x, w, b, z, y, g, e, s);
  return launch_v<T, 1>(x, w, b, z, y, g, e, s);
}

}  // namespace

void launch_depthwise_nhwc(ElemType t, const void* x, const void* w, const void* b, const void* z, void* y,
                           const Depthwise& g, const Epilogue& e, cudaStream_t s) {
  if (g.tiled && depthwise_tiled_takes(g)) return launch_depthwise_tiled(t, x, w, b, z, y, g, e, s);
  switch (t) {
    case ElemType::kFloat:
      return launch_t<float>(x, w, b, z, y, g, e, s);
    case ElemType::kHalf:
      return launch_t<__half>(x, w, b, z, y, g, e, s);
    case ElemType::kBFloat16:
      return launch_t<__nv_bfloat16>(x, w, b, z, y, g, e, s);
  }
}

}  // namespace tessera::cuda
