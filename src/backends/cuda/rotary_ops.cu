// RotaryEmbedding on the GPU (see rotary_ops.h): one thread per feature of a row, the pair's partner
// read alongside; float32 arithmetic for the 16-bit types, float64 for float64, as the CPU reference.
#include <type_traits>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/resize_util.cuh"
#include "backends/cuda/rotary_ops.h"

namespace tessera::cuda {

namespace {

constexpr int kThreads = 256;

template <class T>
using Compute = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
__device__ __forceinline__ Compute<T> value(const T* p, int64_t i) {
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>)
    return p[i];
  else
    return load(p, i);
}

template <class T>
__device__ __forceinline__ void put(T* p, int64_t i, Compute<T> v) {
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>)
    p[i] = v;
  else
    store(p, i, v);
}

template <class T>
__global__ void rotary_kernel(const T* x, const T* cos, const T* sin, const int64_t* ids, T* y,
                              RotarySpec s) {
  using C = Compute<T>;
  const int64_t total = s.batch * s.heads * s.seq * s.head;
  const int64_t half = s.rot / 2;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t f = e % s.head, r = e / s.head;  // r enumerates (batch, head, seq)
    const int64_t sq = r % s.seq, h = (r / s.seq) % s.heads, b = r / (s.seq * s.heads);
    const int64_t off = s.packed ? ((b * s.seq + sq) * s.heads + h) * s.head : r * s.head;
    if (f >= s.rot) {
      y[off + f] = x[off + f];
      continue;
    }
    // Which pair f belongs to, and whether it is the first of the two.
    const int64_t i = s.interleaved ? f / 2 : (f < half ? f : f - half);
    const bool first = s.interleaved ? f % 2 == 0 : f < half;
    const int64_t i1 = s.interleaved ? 2 * i : i, i2 = s.interleaved ? 2 * i + 1 : i + half;
    int64_t row = b * s.seq + sq;
    if (ids) {
      row = ids[row];
      if (row < 0 || row >= s.positions) {
        put(y, off + f, C(0));
        continue;
      }
    }
    const C x1 = value(x, off + i1), x2 = value(x, off + i2);
    const C cv = value(cos, row * half + i), sv = value(sin, row * half + i);
    put(y, off + f, first ? x1 * cv - x2 * sv : x2 * cv + x1 * sv);
  }
}

}  // namespace

void launch_rotary(ScalarType t, const void* x, const void* cos, const void* sin, const int64_t* position_ids,
                   void* y, const RotarySpec& s, cudaStream_t st) {
  const int64_t total = s.batch * s.heads * s.seq * s.head;
  if (total == 0) return;
  by_scalar_type<float>(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, __half> ||
                  std::is_same_v<T, __nv_bfloat16>)
      rotary_kernel<T><<<grid_for(total), kThreads, 0, st>>>(
          static_cast<const T*>(x), static_cast<const T*>(cos), static_cast<const T*>(sin), position_ids,
          static_cast<T*>(y), s);
  });
}

}  // namespace tessera::cuda
