#include "backends/cuda/device_types.cuh"
#include "backends/cuda/matmul_util.h"

namespace tessera::cuda {

namespace {

template <class T>
__global__ void broadcast_matrix(const T* c, T* y, int64_t m, int64_t n, int64_t si, int64_t sj,
                                 float scale) {
  const int64_t total = m * n;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / n, col = i % n;
    store<T>(y, i, scale * load<T>(c, r * si + col * sj));
  }
}

template <class T>
void launch(const void* c, void* y, int64_t m, int64_t n, int64_t si, int64_t sj, float scale,
            cudaStream_t s) {
  if (m * n == 0) return;
  broadcast_matrix<T>
      <<<grid_for(m * n), 256, 0, s>>>(static_cast<const T*>(c), static_cast<T*>(y), m, n, si, sj, scale);
}

}  // namespace

void launch_broadcast_matrix(ElemType t, const void* c, void* y, int64_t m, int64_t n, int64_t si, int64_t sj,
                             float scale, cudaStream_t s) {
  switch (t) {
    case ElemType::kFloat:
      return launch<float>(c, y, m, n, si, sj, scale, s);
    case ElemType::kHalf:
      return launch<__half>(c, y, m, n, si, sj, scale, s);
    case ElemType::kBFloat16:
      return launch<__nv_bfloat16>(c, y, m, n, si, sj, scale, s);
  }
}

}  // namespace tessera::cuda
