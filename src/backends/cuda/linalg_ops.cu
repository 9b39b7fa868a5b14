// Det on the GPU (see linalg_ops.h).
#include "backends/cuda/linalg_ops.h"
#include "backends/cuda/resize_util.cuh"

namespace tessera::cuda {

namespace {

constexpr int kThreads = 128;

template <class T>
__global__ void det_kernel(const T* x, T* y, double* work, int64_t count, int64_t n) {
  for (int64_t b = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; b < count;
       b += int64_t{gridDim.x} * blockDim.x) {
    double* a = work + b * n * n;
    for (int64_t i = 0; i < n * n; ++i) a[i] = as_double(x, b * n * n + i);
    double det = 1;
    for (int64_t col = 0; col < n; ++col) {
      int64_t pivot = col;
      for (int64_t r = col + 1; r < n; ++r)
        if (fabs(a[r * n + col]) > fabs(a[pivot * n + col])) pivot = r;
      if (a[pivot * n + col] == 0) {
        det = 0;
        break;
      }
      if (pivot != col) {
        for (int64_t j = 0; j < n; ++j) {
          const double t = a[col * n + j];
          a[col * n + j] = a[pivot * n + j];
          a[pivot * n + j] = t;
        }
        det = -det;
      }
      const double d = a[col * n + col];
      det *= d;
      for (int64_t r = col + 1; r < n; ++r) {
        const double f = a[r * n + col] / d;
        if (f == 0) continue;
        for (int64_t j = col + 1; j < n; ++j) a[r * n + j] -= f * a[col * n + j];
      }
    }
    store_double(y, b, det);
  }
}

}  // namespace

void launch_det(ScalarType t, const void* x, void* y, double* work, int64_t count, int64_t n,
                cudaStream_t s) {
  if (count == 0) return;
  by_scalar_type<float>(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    det_kernel<T><<<grid_for(count, kThreads), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y),
                                                                 work, count, n);
  });
}

}  // namespace tessera::cuda
