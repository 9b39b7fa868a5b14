// Col2Im on the GPU (see col2im_ops.h): one thread per image element gathers its contributions (no
// atomics): for each block offset k it finds the block position l with l * stride - pad + k * dilation
// equal to its coordinate on every axis.
#include <type_traits>

#include "backends/cuda/col2im_ops.h"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/resize_util.cuh"

namespace tessera::cuda {

namespace {

constexpr int kThreads = 256;

template <class T>
using Sum = std::conditional_t<std::is_same_v<T, double>, double,
                               std::conditional_t<std::is_integral_v<T>, uint64_t, float>>;

template <class T>
__device__ __forceinline__ Sum<T> value(const T* p, int64_t i) {
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>)
    return load(p, i);
  else
    return static_cast<Sum<T>>(p[i]);
}

template <class T>
__global__ void col2im_kernel(const T* x, T* y, Col2ImSpec s) {
  int64_t plane = 1, kernel = 1, cols = 1;
  for (int d = 0; d < s.rank; ++d) {
    plane *= s.image[d];
    kernel *= s.block[d];
    cols *= s.blocks[d];
  }
  const int64_t total = s.batch * s.channels * plane;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t bc = e / plane;  // batch * channels + channel
    const int64_t b = bc / s.channels, c = bc % s.channels;
    int64_t pos[kCol2ImRank];
    for (int64_t r = e % plane, d = s.rank - 1; d >= 0; --d) {
      pos[d] = r % s.image[d];
      r /= s.image[d];
    }
    Sum<T> acc = 0;
    for (int64_t k = 0; k < kernel; ++k) {
      int64_t rest = k, l = 0, lstride = 1;
      bool hit = true;
      for (int d = s.rank - 1; d >= 0 && hit; --d) {
        const int64_t kd = rest % s.block[d];
        rest /= s.block[d];
        const int64_t t = pos[d] + s.pad[d] - kd * s.dilation[d];
        hit = t >= 0 && t % s.stride[d] == 0 && t / s.stride[d] < s.blocks[d];
        l += (hit ? t / s.stride[d] : 0) * lstride;
        lstride *= s.blocks[d];
      }
      if (hit) acc = acc + value(x, ((b * s.channels + c) * kernel + k) * cols + l);
    }
    if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>)
      store(y, e, acc);
    else
      y[e] = static_cast<T>(acc);
  }
}

}  // namespace

void launch_col2im(ScalarType t, const void* x, void* y, const Col2ImSpec& s, cudaStream_t st) {
  int64_t total = s.batch * s.channels;
  for (int d = 0; d < s.rank; ++d) total *= s.image[d];
  if (total == 0) return;
  by_scalar_type<float>(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    col2im_kernel<T><<<grid_for(total), kThreads, 0, st>>>(static_cast<const T*>(x), static_cast<T*>(y), s);
  });
}

}  // namespace tessera::cuda
