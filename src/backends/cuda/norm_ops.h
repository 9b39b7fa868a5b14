// Normalisations on the GPU for float32, float16 and bfloat16: rows of contiguous elements normalised
// by their own statistics (LayerNormalization, RMSNormalization, InstanceNormalization,
// GroupNormalization; two passes in float32, so values near 1000 with a spread of 0.01 keep their
// digits), and BatchNormalization's inference form with per-channel statistics.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/elementwise.h"
#include "backends/cuda/reduce_ops.h"

namespace tessera::cuda {

struct NormParams {
  int64_t rows = 0, n = 0;  // rows of n contiguous elements
  float eps = 1e-5f;
  bool rms = false;  // RMSNormalization: scale by the root mean square, no mean subtracted
  // Scale and bias of element k of row r sit at (r % param_rows) * param_step + k / param_div.
  int64_t param_rows = 1, param_step = 0, param_div = 1;
  int64_t scale_mult = 1, bias_mult = 1;  // 0: one scale (bias) value for every element
  // The skip forms (ONNX Runtime's SkipLayerNormalization): the row is x + skip[i % skip_n] + sum_bias[k],
  // summed in float32, and sum_out (when set) receives that sum; all of x's element type.
  const void* skip = nullptr;
  int64_t skip_n = 1;
  const void* sum_bias = nullptr;
  void* sum_out = nullptr;
};

// scale/bias may be null (1 and 0); mean/inv_std (float32, one per row) may be null.
void launch_row_norm(ElemType t, const void* x, const void* scale, const void* bias, void* y, float* mean,
                     float* inv_std, const NormParams& p, cudaStream_t s);

// y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c], c = (i / spatial) % channels; the
// parameters have x's element type.
void launch_batch_norm(ElemType t, const void* x, const void* scale, const void* bias, const void* mean,
                       const void* var, void* y, int64_t total, int64_t channels, int64_t spatial, float eps,
                       cudaStream_t s);

// Normalisations over the groups of a reduction geometry (any set of axes): LpNormalization (x over its
// L1 or L2 norm; a zero norm gives 0) and MeanVarianceNormalization ((x - mean) / (std + 1e-9)).
enum class GroupNormKind { kL1, kL2, kMeanVariance };
void launch_group_stat_norm(GroupNormKind k, ElemType t, const void* x, void* y, const ReduceGeom& geom,
                            cudaStream_t s);

// LRN: y = x / (bias + alpha / size * sum of x^2 over the `size` channels around c)^beta, the window
// from c - floor((size-1)/2) to c + ceil((size-1)/2) clipped to [0, C); float64 as the CPU reference.
// x is [batch, channels, spatial].
void launch_lrn(ElemType t, const void* x, void* y, int64_t batch, int64_t channels, int64_t spatial,
                int64_t size, double alpha, double beta, double bias, cudaStream_t s);

}  // namespace tessera::cuda
