#include <cmath>

#include "backends/cuda/conv_epilogue.cuh"
#include "backends/cuda/device_types.cuh"

namespace tessera::cuda {

namespace {

template <class T>
__global__ void epilogue(T* y, const T* b, const T* z, int64_t n, Epilogue e) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = load<T>(y, i);
    if (b) v += load<T>(b, e.inner == 1 ? i % e.channels : (i / e.inner) % e.channels);
    if (z) v += load<T>(z, i);
    store<T>(y, i, conv_activate(v, e));
  }
}

// Channels-last float16 with an even channel count: two channels per thread.
__global__ void epilogue_half2(__half2* y, const __half2* b, const __half2* z, int64_t n2, int64_t c2,
                               Epilogue e) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n2;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float2 v = __half22float2(y[i]);
    if (b) {
      const float2 bb = __half22float2(b[i % c2]);
      v.x += bb.x;
      v.y += bb.y;
    }
    if (z) {
      const float2 zz = __half22float2(z[i]);
      v.x += zz.x;
      v.y += zz.y;
    }
    y[i] = __floats2half2_rn(conv_activate(v.x, e), conv_activate(v.y, e));
  }
}

template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// Channels-last with whole 16-byte vectors of channels: one vector per thread, 32-bit indices (the
// int64 modulo per element of the kernels above made them instruction-bound on MobileNetV2's
// [32, 112, 112, 96] outputs).
template <class T>
__global__ void epilogue_vec(T* y, const T* b, const T* z, uint32_t nv, uint32_t cv, Epilogue e) {
  constexpr int V = 16 / sizeof(T);
  using VecT = Vec<T, V>;
  auto* yv = reinterpret_cast<VecT*>(y);
  const uint32_t stride = gridDim.x * blockDim.x;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < nv; i += stride) {
    VecT v = yv[i];
    VecT bv, zv;
    if (b) bv = reinterpret_cast<const VecT*>(b)[i % cv];
    if (z) zv = reinterpret_cast<const VecT*>(z)[i];
#pragma unroll
    for (int j = 0; j < V; ++j) {
      float r = load<T>(v.v, j);
      if (b) r += load<T>(bv.v, j);
      if (z) r += load<T>(zv.v, j);
      store<T>(v.v, j, conv_activate(r, e));
    }
    yv[i] = v;
  }
}

bool aligned(const void* p, uintptr_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

// Whether epilogue_vec takes the call: channels-last, whole vectors, 16-byte pointers, 32-bit counts.
template <class T>
bool vec_takes(const void* y, const void* b, const void* z, int64_t n, const Epilogue& e) {
  constexpr int64_t V = 16 / sizeof(T);
  return e.inner == 1 && e.channels % V == 0 && n % V == 0 && n / V < (int64_t{1} << 31) && aligned(y, 16) &&
         aligned(b, 16) && aligned(z, 16);
}

template <class T>
void launch_vec(void* y, const void* b, const void* z, int64_t n, const Epilogue& e, cudaStream_t s) {
  constexpr int64_t V = 16 / sizeof(T);
  const int64_t nv = n / V;
  epilogue_vec<T><<<grid_for(nv), 256, 0, s>>>(static_cast<T*>(y), static_cast<const T*>(b),
                                               static_cast<const T*>(z), static_cast<uint32_t>(nv),
                                               static_cast<uint32_t>(e.channels / V), e);
}

template <class T>
void launch_t(void* y, const void* b, const void* z, int64_t n, const Epilogue& e, cudaStream_t s) {
  if (vec_takes<T>(y, b, z, n, e)) return launch_vec<T>(y, b, z, n, e, s);
  epilogue<T><<<grid_for(n), 256, 0, s>>>(static_cast<T*>(y), static_cast<const T*>(b),
                                          static_cast<const T*>(z), n, e);
}

}  // namespace

void launch_epilogue(ElemType t, void* y, const void* b, const void* z, int64_t n, const Epilogue& e,
                     cudaStream_t s) {
  if (n == 0) return;
  switch (t) {
    case ElemType::kFloat:
      return launch_t<float>(y, b, z, n, e, s);
    case ElemType::kHalf:
      if (vec_takes<__half>(y, b, z, n, e)) return launch_vec<__half>(y, b, z, n, e, s);
      if (e.inner == 1 && e.channels % 2 == 0 && aligned(y, 4) && aligned(b, 4) && aligned(z, 4)) {
        const int64_t n2 = n / 2;
        epilogue_half2<<<grid_for(n2), 256, 0, s>>>(static_cast<__half2*>(y), static_cast<const __half2*>(b),
                                                    static_cast<const __half2*>(z), n2, e.channels / 2, e);
        return;
      }
      return launch_t<__half>(y, b, z, n, e, s);
    case ElemType::kBFloat16:
      return launch_t<__nv_bfloat16>(y, b, z, n, e, s);
  }
}

}  // namespace tessera::cuda
