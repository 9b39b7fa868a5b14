// ScatterElements and ScatterND on the GPU: plain stores for reduction 'none' (duplicate indices: one of
// the updates wins, as the spec allows), atomic compare-and-swap loops for add/mul/max/min so that
// duplicate indices combine every update. Float16/bfloat16 combine in float32 and round once.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>
#include <type_traits>

#include "backends/cuda/data_ops.h"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/type_dispatch.cuh"

namespace tessera::cuda {

namespace {

constexpr int kThreads = 256;

template <class T>
__device__ __forceinline__ T combine(T a, T b, ScatterReduce r) {
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
    T out;
    store(&out, 0, combine(load(&a, 0), load(&b, 0), r));
    return out;
  } else {
    switch (r) {
      case ScatterReduce::kAdd:
        return static_cast<T>(a + b);
      case ScatterReduce::kMul:
        return static_cast<T>(a * b);
      case ScatterReduce::kMax:
        return a > b ? a : b;
      case ScatterReduce::kMin:
        return a < b ? a : b;
      default:
        return b;
    }
  }
}

// *p = combine(*p, v) atomically by compare-and-swap (16-bit swaps from sm_70). 1-byte elements swap the
// aligned 32-bit word that holds them (allocations are at least 4-byte aligned, so the word lies inside
// the tensor's allocation granule).
template <class T>
__device__ void atomic_combine(T* p, T v, ScatterReduce r) {
  if constexpr (sizeof(T) >= 2) {
    using W = std::conditional_t<sizeof(T) == 2, unsigned short int,
                                 std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>>;
    W* a = reinterpret_cast<W*>(p);
    W old = *a, assumed;
    do {
      assumed = old;
      T cur, next;
      memcpy(&cur, &assumed, sizeof(T));
      next = combine(cur, v, r);
      W w;
      memcpy(&w, &next, sizeof(T));
      old = atomicCAS(a, assumed, w);
    } while (assumed != old);
  } else {
    using B = uint8_t;
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    unsigned int* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(addr & 3) * 8;
    const unsigned mask = static_cast<unsigned>((1u << (8 * sizeof(T))) - 1) << shift;
    unsigned old = *word, assumed;
    do {
      assumed = old;
      B bits = static_cast<B>((assumed & mask) >> shift);
      T cur;
      memcpy(&cur, &bits, sizeof(T));
      T next = combine(cur, v, r);
      memcpy(&bits, &next, sizeof(T));
      old = atomicCAS(word, assumed, (assumed & ~mask) | (static_cast<unsigned>(bits) << shift));
    } while (assumed != old);
  }
}

template <class T>
__device__ __forceinline__ void put(T* out, int64_t off, T v, ScatterReduce r) {
  if (r == ScatterReduce::kNone)
    out[off] = v;
  else
    atomic_combine(out + off, v, r);
}

template <class T, class I>
__global__ void scatter_elements_kernel(const I* idx, const T* upd, T* out, int64_t n, IndexShape s,
                                        ScatterReduce r) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rest = i, off = 0;
    bool ok = true;
    for (int d = s.rank - 1; d >= 0; --d) {
      int64_t c = rest % s.dims[d];
      rest /= s.dims[d];
      if (d == s.axis) {
        c = static_cast<int64_t>(idx[i]);
        if (c < 0) c += s.axis_dim;
        ok = c >= 0 && c < s.axis_dim;
      }
      off += c * s.data_strides[d];
    }
    if (ok) put(out, off, upd[i], r);
  }
}

template <class T>
__global__ void scatter_nd_kernel(const int64_t* idx, const T* upd, T* out, int64_t n, NdShape s,
                                  ScatterReduce r) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t e = i % s.slice, tuple = i / s.slice;
    int64_t off = e;
    bool ok = true;
    for (int j = 0; j < s.k; ++j) {
      int64_t c = idx[tuple * s.k + j];
      if (c < 0) c += s.dims[j];
      ok = ok && c >= 0 && c < s.dims[j];
      off += c * s.strides[j];
    }
    if (ok) put(out, off, upd[i], r);
  }
}

}  // namespace

void launch_scatter_elements(ScalarType t, int elem_bytes, ScatterReduce r, const void* idx, bool idx64,
                             const void* upd, void* out, const IndexShape& s, int64_t n, cudaStream_t st) {
  (void)elem_bytes;
  if (n == 0) return;
  by_scalar_type<uint8_t>(t, [&](auto tag_T) {
    using T = typename decltype(tag_T)::type;
    auto* u = static_cast<const T*>(upd);
    auto* o = static_cast<T*>(out);
    if (idx64)
      scatter_elements_kernel<T, int64_t>
          <<<grid_for(n), kThreads, 0, st>>>(static_cast<const int64_t*>(idx), u, o, n, s, r);
    else
      scatter_elements_kernel<T, int32_t>
          <<<grid_for(n), kThreads, 0, st>>>(static_cast<const int32_t*>(idx), u, o, n, s, r);
  });
}

void launch_scatter_nd(ScalarType t, int elem_bytes, ScatterReduce r, const void* idx, const void* upd,
                       void* out, const NdShape& s, cudaStream_t st) {
  (void)elem_bytes;
  const int64_t n = s.q * s.slice;
  if (n == 0) return;
  by_scalar_type<uint8_t>(t, [&](auto tag_T) {
    using T = typename decltype(tag_T)::type;
    scatter_nd_kernel<T><<<grid_for(n), kThreads, 0, st>>>(
        static_cast<const int64_t*>(idx), static_cast<const T*>(upd), static_cast<T*>(out), n, s, r);
  });
}

}  // namespace tessera::cuda
