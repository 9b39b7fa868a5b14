// NegativeLogLikelihoodLoss on the GPU: loss[n, d] = -x[n, target[n, d], d] * weight[target] (0 where the
// target is ignore_index), reduced by none, sum or a weighted mean (sum / summed weights of the entries
// that count), float32 arithmetic with compensated sums, for float32, float16 and bfloat16 scores.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/elementwise.h"

namespace tessera::cuda {

enum class LossReduction { kNone, kSum, kMean };

struct NllParams {
  int64_t batch = 0, classes = 0, positions = 1;
  bool has_ignore = false;
  int64_t ignore = 0;
  LossReduction reduction = LossReduction::kMean;
};

// target: int64 on the device, already checked to be in [0, classes) or ignore_index; weight may be null.
void launch_nll(ElemType t, const void* x, const int64_t* target, const void* weight, void* out,
                const NllParams& p, cudaStream_t s);

}  // namespace tessera::cuda
