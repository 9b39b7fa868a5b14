#include <climits>
#include <type_traits>

#include "backends/cuda/reduce_team.cuh"
#include "backends/cuda/reduce_topk.h"

namespace tessera::cuda {

namespace {

template <class T>
inline constexpr bool kIsInt = std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>;

// a (value, index) before b: larger (smaller) value first, NaN as the largest, then the lower index;
// index -1 marks padding, after everything.
template <bool Largest, class K>
__device__ __forceinline__ bool before(K av, int ai, K bv, int bi) {
  if (ai < 0) return false;
  if (bi < 0) return true;
  if constexpr (!std::is_integral_v<K>) {
    const bool an = av != av, bn = bv != bv;
    if (an || bn) {
      if (an && bn) return ai < bi;
      return Largest ? an : bn;
    }
  }
  if (av != bv) return Largest ? av > bv : av < bv;
  return ai < bi;
}

template <bool Largest, class T>
__global__ void top_k_kernel(const T* x, T* values, int64_t* indices, RowView v, int64_t k, int width) {
  using K = std::conditional_t<kIsInt<T>, long long, float>;
  __shared__ K key[kTopKMaxRow];
  __shared__ int idx[kTopKMaxRow];
  const int64_t groups = v.outer * v.inner;
  for (int64_t g = blockIdx.x; g < groups; g += gridDim.x) {
    const int64_t o = g / v.inner, i = g % v.inner;
    const int64_t base = o * v.n * v.inner + i;
    for (int t = threadIdx.x; t < width; t += blockDim.x) {
      if (t < v.n) {
        if constexpr (kIsInt<T>)
          key[t] = static_cast<K>(x[base + t * v.inner]);
        else
          key[t] = load(x, base + t * v.inner);
        idx[t] = t;
      } else {
        idx[t] = -1;
      }
    }
    __syncthreads();
    for (int size = 2; size <= width; size <<= 1) {
      for (int stride = size >> 1; stride > 0; stride >>= 1) {
        for (int t = threadIdx.x; t < width; t += blockDim.x) {
          const int u = t ^ stride;
          if (u <= t) continue;
          const bool up = (t & size) == 0;  // this run sorts best-first
          const bool swap = up ? before<Largest>(key[u], idx[u], key[t], idx[t])
                               : before<Largest>(key[t], idx[t], key[u], idx[u]);
          if (swap) {
            const K kt = key[t];
            key[t] = key[u];
            key[u] = kt;
            const int it = idx[t];
            idx[t] = idx[u];
            idx[u] = it;
          }
        }
        __syncthreads();
      }
    }
    const int64_t out = o * k * v.inner + i;
    for (int t = threadIdx.x; t < k; t += blockDim.x) {
      values[out + t * v.inner] = x[base + int64_t{idx[t]} * v.inner];  // the element itself, not rounded
      indices[out + t * v.inner] = idx[t];
    }
    __syncthreads();  // the next row reuses the shared arrays
  }
}

template <class T>
void top_k_typed(bool largest, const void* x, void* values, int64_t* indices, const RowView& v, int64_t k,
                 cudaStream_t s) {
  int width = 1;
  while (width < v.n) width <<= 1;
  const int64_t groups = v.outer * v.inner;
  const auto blocks = static_cast<unsigned>(groups < (int64_t{1} << 20) ? groups : (int64_t{1} << 20));
  auto* in = static_cast<const T*>(x);
  auto* out = static_cast<T*>(values);
  if (largest) return top_k_kernel<true, T><<<blocks, kBlock, 0, s>>>(in, out, indices, v, k, width);
  top_k_kernel<false, T><<<blocks, kBlock, 0, s>>>(in, out, indices, v, k, width);
}

}  // namespace

void launch_top_k(NumType t, bool largest, const void* x, void* values, int64_t* indices, const RowView& v,
                  int64_t k, cudaStream_t s) {
  if (v.outer * v.inner == 0 || k == 0) return;
  switch (t) {
    case NumType::kFloat:
      return top_k_typed<float>(largest, x, values, indices, v, k, s);
    case NumType::kHalf:
      return top_k_typed<__half>(largest, x, values, indices, v, k, s);
    case NumType::kBFloat16:
      return top_k_typed<__nv_bfloat16>(largest, x, values, indices, v, k, s);
    case NumType::kInt32:
      return top_k_typed<int32_t>(largest, x, values, indices, v, k, s);
    case NumType::kInt64:
      return top_k_typed<int64_t>(largest, x, values, indices, v, k, s);
    case NumType::kDouble:
    case NumType::kBool:
      return;  // not offered (top_k_supported)
  }
}

}  // namespace tessera::cuda
