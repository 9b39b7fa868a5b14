// Device launch of DFT: each output bin is the direct sum over the (zero-padded or truncated) signal
// line in float64, twiddles from (j * k) mod n as the CPU reference computes them (ops/signal/fft_ref.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/data_ops.h"

namespace tessera::cuda {

struct DftSpec {
  int64_t outer = 1, len = 1, inner = 1;  // x viewed as [outer, len, inner, c_in]
  int64_t n = 1, out_len = 1;             // transform length; bins written
  int c_in = 1, c_out = 2;                // real (1) or complex (2) samples
  bool inverse = false, irfft = false;    // irfft: a half spectrum completed by Hermitian symmetry
  // STFT: line o is frame o % frames of batch entry o / frames, starting at sample (o % frames) * step
  // of a signal of sig_len samples (inner 1), multiplied by `window` (len values, x's type) when given.
  int64_t frames = 0, step = 0, sig_len = 0;
  const void* window = nullptr;
};

// x and y of one float type t (float32/16, bfloat16, float64).
void launch_dft(ScalarType t, const void* x, void* y, const DftSpec& spec, cudaStream_t s);

}  // namespace tessera::cuda
