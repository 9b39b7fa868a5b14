// Einsum on the GPU (see einsum_ops.h): one thread per output element.
#include <type_traits>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/einsum_ops.h"

namespace tessera::cuda {

namespace {

constexpr int kThreads = 256;

template <class T>
using Acc = std::conditional_t<std::is_same_v<T, double>, double,
                               std::conditional_t<std::is_integral_v<T>, uint64_t, float>>;

template <class T>
__device__ __forceinline__ Acc<T> get(const void* p, int64_t i) {
  const T* q = static_cast<const T*>(p);
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>)
    return load(q, i);
  else
    return static_cast<Acc<T>>(q[i]);  // integers as their two's-complement bits: wrapping arithmetic
}

template <class T>
__global__ void einsum_kernel(EinsumSpec s, T* y, int64_t n) {
  for (int64_t o = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; o < n;
       o += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[kEinsumOperands] = {};
    int64_t r = o;
    for (int d = s.out_rank - 1; d >= 0; --d) {
      const int64_t v = r % s.out_dims[d];
      r /= s.out_dims[d];
      for (int i = 0; i < s.operands; ++i) off[i] += v * s.out_stride[i][d];
    }
    int64_t count = 1;
    for (int d = 0; d < s.sum_rank; ++d) count *= s.sum_dims[d];
    Acc<T> acc = 0;
    int64_t idx[kEinsumLabels] = {};
    for (int64_t c = 0; c < count; ++c) {
      Acc<T> prod = get<T>(s.in[0], off[0]);
      for (int i = 1; i < s.operands; ++i) prod = prod * get<T>(s.in[i], off[i]);
      acc = acc + prod;
      for (int d = s.sum_rank - 1; d >= 0; --d) {
        if (++idx[d] < s.sum_dims[d]) {
          for (int i = 0; i < s.operands; ++i) off[i] += s.sum_stride[i][d];
          break;
        }
        for (int i = 0; i < s.operands; ++i) off[i] -= (s.sum_dims[d] - 1) * s.sum_stride[i][d];
        idx[d] = 0;
      }
    }
    if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>)
      store(y, o, acc);
    else
      y[o] = static_cast<T>(acc);
  }
}

}  // namespace

void launch_einsum(ScalarType t, const EinsumSpec& spec, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  auto go = [&](auto tag) {
    using T = typename decltype(tag)::type;
    einsum_kernel<T><<<grid_for(n), kThreads, 0, s>>>(spec, static_cast<T*>(y), n);
  };
  switch (t) {
    case ScalarType::kHalf:
      return go(Tag<__half>{});
    case ScalarType::kBFloat16:
      return go(Tag<__nv_bfloat16>{});
    case ScalarType::kDouble:
      return go(Tag<double>{});
    case ScalarType::kInt32:
      return go(Tag<int32_t>{});
    case ScalarType::kInt64:
      return go(Tag<int64_t>{});
    default:
      return go(Tag<float>{});
  }
}

}  // namespace tessera::cuda
