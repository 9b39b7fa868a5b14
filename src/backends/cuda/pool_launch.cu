#include <cmath>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/pool_launch.h"

namespace tessera::cuda {

// MaxPool's 8-bit integer inputs: exact in float; a window with no position inside the input gives the
// type's lowest value, as the reference's does.
template <>
__device__ __forceinline__ float load<int8_t>(const int8_t* p, int64_t i) {
  return p[i];
}
template <>
__device__ __forceinline__ float load<uint8_t>(const uint8_t* p, int64_t i) {
  return p[i];
}
template <>
__device__ __forceinline__ void store<int8_t>(int8_t* p, int64_t i, float v) {
  p[i] = static_cast<int8_t>(fmaxf(v, -128.f));
}
template <>
__device__ __forceinline__ void store<uint8_t>(uint8_t* p, int64_t i, float v) {
  p[i] = static_cast<uint8_t>(fmaxf(v, 0.f));
}

namespace {

template <class T, PoolKind K>
__global__ void pool(const T* x, T* y, int64_t* indices, PoolGeom g, int64_t total) {
  int64_t in_size = 1, out_size = 1, window = 1;
  for (int d = 0; d < g.spatial; ++d) {
    in_size *= g.in[d];
    out_size *= g.out[d];
    window *= g.kernel[d];
  }
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t plane = i / out_size;
    int64_t rest = i % out_size;
    int64_t start[kMaxPoolAxes];
    for (int d = g.spatial - 1; d >= 0; --d) {
      start[d] = (rest % g.out[d]) * g.stride[d] - g.pad_begin[d];
      rest /= g.out[d];
    }
    const T* px = x + plane * in_size;
    float acc = K == PoolKind::kMax ? -INFINITY : 0.f;
    bool any = false;
    int64_t count = 0, padded = 0, best = -1;
    for (int64_t kp = 0; kp < window; ++kp) {
      int64_t r = kp;
      bool inside = true, in_padded = true;
      for (int d = g.spatial - 1; d >= 0; --d) {
        const int64_t pos = start[d] + (r % g.kernel[d]) * g.dilation[d];
        r /= g.kernel[d];
        inside = inside && pos >= 0 && pos < g.in[d];
        in_padded = in_padded && pos >= -g.pad_begin[d] && pos < g.in[d] + g.pad_end[d];
      }
      padded += in_padded ? 1 : 0;
      if (!inside) continue;
      // Flat index of the position, row-major over the spatial axes, and column-major for Indices with
      // storage_order 1.
      int64_t rr = kp, f = 0, scale = 1, fc = 0;
      for (int d = g.spatial - 1; d >= 0; --d) {
        f += (start[d] + (rr % g.kernel[d]) * g.dilation[d]) * scale;
        rr /= g.kernel[d];
        scale *= g.in[d];
      }
      rr = kp;
      for (int d = g.spatial - 1; d >= 0; --d) {
        int64_t cs = 1;
        for (int e = 0; e < d; ++e) cs *= g.in[e];
        fc += (start[d] + (rr % g.kernel[d]) * g.dilation[d]) * cs;
        rr /= g.kernel[d];
      }
      const float v = load<T>(px, f);
      if (K == PoolKind::kMax) {
        if (!any || v > acc) {
          acc = v;
          best = g.storage_order == 1 ? fc : f;
        }
      } else if (K == PoolKind::kAverage) {
        acc += v;
      } else {
        acc += powf(fabsf(v), g.p);
      }
      any = true;
      ++count;
    }
    float r;
    if (K == PoolKind::kMax) {
      r = acc;
    } else if (K == PoolKind::kAverage) {
      const int64_t div = g.count_include_pad ? padded : count;
      r = div > 0 ? acc / static_cast<float>(div) : NAN;
    } else {
      r = powf(acc, 1.f / g.p);
    }
    store<T>(y, i, r);
    if (indices) indices[i] = best < 0 ? -1 : plane * in_size + best;
  }
}

template <class T, PoolKind K>
__global__ void global_pool(const T* x, T* y, int64_t size, float p) {
  __shared__ float part[256];
  const T* px = x + blockIdx.x * size;
  float acc = K == PoolKind::kMax ? -INFINITY : 0.f;
  for (int64_t i = threadIdx.x; i < size; i += blockDim.x) {
    const float v = load<T>(px, i);
    if (K == PoolKind::kMax) acc = fmaxf(acc, v);
    if (K == PoolKind::kAverage) acc += v;
    if (K == PoolKind::kLp) acc += powf(fabsf(v), p);
  }
  part[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      const float o = part[threadIdx.x + w];
      part[threadIdx.x] = K == PoolKind::kMax ? fmaxf(part[threadIdx.x], o) : part[threadIdx.x] + o;
    }
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  float r = part[0];
  if (K == PoolKind::kAverage) r = size > 0 ? r / static_cast<float>(size) : NAN;
  if (K == PoolKind::kLp) r = powf(r, 1.f / p);
  store<T>(y, blockIdx.x, r);
}

template <class T>
void pool_t(PoolKind kind, const void* x, void* y, int64_t* indices, const PoolGeom& g, cudaStream_t s) {
  int64_t total = g.planes;
  for (int d = 0; d < g.spatial; ++d) total *= g.out[d];
  if (total == 0) return;
  auto xp = static_cast<const T*>(x);
  auto yp = static_cast<T*>(y);
  if (kind == PoolKind::kMax)
    pool<T, PoolKind::kMax><<<grid_for(total), 256, 0, s>>>(xp, yp, indices, g, total);
  if (kind == PoolKind::kAverage)
    pool<T, PoolKind::kAverage><<<grid_for(total), 256, 0, s>>>(xp, yp, nullptr, g, total);
  if (kind == PoolKind::kLp)
    pool<T, PoolKind::kLp><<<grid_for(total), 256, 0, s>>>(xp, yp, nullptr, g, total);
}

template <class T>
void global_t(PoolKind kind, const void* x, void* y, int64_t planes, int64_t size, float p, cudaStream_t s) {
  auto xp = static_cast<const T*>(x);
  auto yp = static_cast<T*>(y);
  // One block per plane: grids allow 2^31 - 1 blocks along x.
  for (int64_t p0 = 0; p0 < planes; p0 += int64_t{1} << 30) {
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(planes - p0, int64_t{1} << 30));
    const T* xs = xp + p0 * size;
    T* ys = yp + p0;
    if (kind == PoolKind::kMax) global_pool<T, PoolKind::kMax><<<blocks, 256, 0, s>>>(xs, ys, size, p);
    if (kind == PoolKind::kAverage)
      global_pool<T, PoolKind::kAverage><<<blocks, 256, 0, s>>>(xs, ys, size, p);
    if (kind == PoolKind::kLp) global_pool<T, PoolKind::kLp><<<blocks, 256, 0, s>>>(xs, ys, size, p);
  }
}

}  // namespace

void launch_pool(PoolKind kind, PoolType t, const void* x, void* y, int64_t* indices, const PoolGeom& g,
                 cudaStream_t s) {
  switch (t) {
    case PoolType::kFloat:
      return pool_t<float>(kind, x, y, indices, g, s);
    case PoolType::kHalf:
      return pool_t<__half>(kind, x, y, indices, g, s);
    case PoolType::kBFloat16:
      return pool_t<__nv_bfloat16>(kind, x, y, indices, g, s);
    case PoolType::kInt8:
      return pool_t<int8_t>(PoolKind::kMax, x, y, indices, g, s);
    case PoolType::kUint8:
      return pool_t<uint8_t>(PoolKind::kMax, x, y, indices, g, s);
  }
}

void launch_global_pool(PoolKind kind, ElemType t, const void* x, void* y, int64_t planes, int64_t size,
                        float p, cudaStream_t s) {
  if (planes == 0) return;
  switch (t) {
    case ElemType::kFloat:
      return global_t<float>(kind, x, y, planes, size, p, s);
    case ElemType::kHalf:
      return global_t<__half>(kind, x, y, planes, size, p, s);
    case ElemType::kBFloat16:
      return global_t<__nv_bfloat16>(kind, x, y, planes, size, p, s);
  }
}

}  // namespace tessera::cuda
