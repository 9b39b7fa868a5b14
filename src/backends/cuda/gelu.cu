#include "backends/cuda/device_types.cuh"
#include "backends/cuda/gelu.h"

namespace tessera::cuda {

namespace {

template <GeluForm F>
__device__ float gelu(float x, float alpha) {
  // In double, rounded once, as the reference kernels do (the kernel is memory-bound: the double
  // arithmetic costs nothing measurable, and CUDA's erfcf alone is up to 4 ulp off in the tail).
  // 0.5 x (1 + erf(x / sqrt 2)) as 0.5 x erfc(-x / sqrt 2): no cancellation where erf is near -1.
  double d = x;
  if constexpr (F == GeluForm::kErf) return static_cast<float>(0.5 * d * erfc(-d * 0.70710678118654752));
  if constexpr (F == GeluForm::kTanh) {
    // 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3): the same without
    // the cancellation of 1 + tanh(u) for negative u.
    double u = 0.7978845608028654 * (d + 0.044715 * d * d * d);
    return static_cast<float>(d / (1.0 + exp(-2.0 * u)));
  }
  // x * sigmoid(alpha x), in the form that does not overflow for large |alpha x|.
  double z = static_cast<double>(alpha) * d;
  if (z >= 0.0) return static_cast<float>(d / (1.0 + exp(-z)));
  double e = exp(z);
  return static_cast<float>(d * e / (1.0 + e));
}

template <GeluForm F, class T>
__global__ void gelu_kernel(const T* x, const T* bias, int64_t bias_len, T* y, int64_t n, float alpha) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    float v = load(x, i);
    if (bias) v += load(bias, i % bias_len);
    store(y, i, gelu<F>(v, alpha));
  }
}

template <class T>
void typed(GeluForm form, const void* x, const void* bias, int64_t bias_len, void* y, int64_t n, float alpha,
           cudaStream_t s) {
  auto* in = static_cast<const T*>(x);
  auto* b = static_cast<const T*>(bias);
  auto* out = static_cast<T*>(y);
  unsigned g = grid_for(n);
  switch (form) {
    case GeluForm::kErf:
      return gelu_kernel<GeluForm::kErf, T><<<g, 256, 0, s>>>(in, b, bias_len, out, n, alpha);
    case GeluForm::kTanh:
      return gelu_kernel<GeluForm::kTanh, T><<<g, 256, 0, s>>>(in, b, bias_len, out, n, alpha);
    case GeluForm::kQuick:
      return gelu_kernel<GeluForm::kQuick, T><<<g, 256, 0, s>>>(in, b, bias_len, out, n, alpha);
  }
}

}  // namespace

void launch_gelu(GeluForm form, ElemType t, const void* x, const void* bias, int64_t bias_len, void* y,
                 int64_t n, float alpha, cudaStream_t s) {
  if (n == 0) return;
  switch (t) {
    case ElemType::kFloat:
      return typed<float>(form, x, bias, bias_len, y, n, alpha, s);
    case ElemType::kHalf:
      return typed<__half>(form, x, bias, bias_len, y, n, alpha, s);
    case ElemType::kBFloat16:
      return typed<__nv_bfloat16>(form, x, bias, bias_len, y, n, alpha, s);
  }
}

}  // namespace tessera::cuda
