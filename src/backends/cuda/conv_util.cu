#include "backends/cuda/conv_util.h"
#include "backends/cuda/device_types.cuh"

namespace tessera::cuda {

namespace {

template <class T>
__global__ void shifted_copy(const T* x, T* y, ShiftedCopy c, int64_t total) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, src = 0, scale = 1;
    bool inside = true;
    for (int d = c.rank - 1; d >= 0; --d) {
      const int64_t pos = rest % c.y_dims[d] + c.shift[d];
      rest /= c.y_dims[d];
      inside = inside && pos >= 0 && pos < c.x_dims[d];
      src += pos * scale;
      scale *= c.x_dims[d];
    }
    y[i] = inside ? x[src] : T(0.f);
  }
}

template <class T>
void launch(const void* x, void* y, const ShiftedCopy& c, cudaStream_t s) {
  int64_t total = 1;
  for (int d = 0; d < c.rank; ++d) total *= c.y_dims[d];
  if (total == 0) return;
  shifted_copy<T><<<grid_for(total), 256, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), c, total);
}

}  // namespace

void launch_shifted_copy(ElemType t, const void* x, void* y, const ShiftedCopy& c, cudaStream_t s) {
  switch (t) {
    case ElemType::kFloat:
      return launch<float>(x, y, c, s);
    case ElemType::kHalf:
      return launch<__half>(x, y, c, s);
    case ElemType::kBFloat16:
      return launch<__nv_bfloat16>(x, y, c, s);
  }
}

}  // namespace tessera::cuda
