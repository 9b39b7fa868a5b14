// DFT and STFT on the GPU (see dft_ops.h): one thread per output bin, O(n) work each.
#include "backends/cuda/dft_ops.h"
#include "backends/cuda/resize_util.cuh"

namespace tessera::cuda {

namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void dft_kernel(const T* x, T* y, DftSpec s) {
  const int64_t total = s.outer * s.out_len * s.inner;
  const double pi2 = 6.283185307179586476925286766559;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = e % s.inner, k = (e / s.inner) % s.out_len, o = e / (s.inner * s.out_len);
    const int64_t base = s.frames > 0 ? ((o / s.frames) * s.sig_len + (o % s.frames) * s.step) * s.c_in
                                      : (o * s.len * s.inner + i) * s.c_in;
    const int64_t jstride = s.frames > 0 ? s.c_in : s.inner * s.c_in;
    const T* window = static_cast<const T*>(s.window);
    // Sample j of the line (0 past its end), and for irfft the mirrored conjugate of the upper half.
    auto sample = [&](int64_t j, double& re, double& im) {
      bool conj = false;
      if (s.irfft && j > s.n / 2) {
        j = s.n - j;
        conj = true;
      }
      re = im = 0;
      if (j >= s.len || (!s.irfft && j >= s.n)) return;
      const int64_t p = base + j * jstride;
      re = as_double(x, p);
      if (s.c_in == 2) im = as_double(x, p + 1);
      if (window) {
        const double w = as_double(window, j);
        re *= w;
        im *= w;
      }
      if (conj) im = -im;
    };
    double acc_re = 0, acc_im = 0;
    for (int64_t j = 0; j < s.n; ++j) {
      double re, im;
      sample(j, re, im);
      if (re == 0 && im == 0) continue;
      const double angle = pi2 * static_cast<double>((j * k) % s.n) / static_cast<double>(s.n);
      double sn, cs;
      sincos(angle, &sn, &cs);
      if (!s.inverse) sn = -sn;
      acc_re += re * cs - im * sn;
      acc_im += re * sn + im * cs;
    }
    const double norm = s.inverse ? 1.0 / static_cast<double>(s.n) : 1.0;
    const int64_t q = ((o * s.out_len + k) * s.inner + i) * s.c_out;
    store_double(y, q, acc_re * norm);
    if (s.c_out == 2) store_double(y, q + 1, acc_im * norm);
  }
}

}  // namespace

void launch_dft(ScalarType t, const void* x, void* y, const DftSpec& spec, cudaStream_t s) {
  const int64_t total = spec.outer * spec.out_len * spec.inner;
  if (total == 0) return;
  by_scalar_type<float>(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    dft_kernel<T><<<grid_for(total), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), spec);
  });
}

}  // namespace tessera::cuda
