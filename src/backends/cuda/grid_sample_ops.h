// Device launch of GridSample (ai.onnx 16, 20, 22): x [N, C, spatial...] sampled at the normalised
// coordinates of grid [N, out spatial..., spatial] (innermost axis first), nearest (half to even),
// linear or cubic (a = -0.75), with zeros, border or reflection padding, in float64 with the CPU
// reference's operation order (ops/image/grid_sample_kernel.cpp).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/data_ops.h"

namespace tessera::cuda {

inline constexpr int kGridSpatial = 8;

struct GridSampleSpec {
  int spatial = 0;
  int mode = 1;     // 0 nearest, 1 linear, 2 cubic
  int padding = 0;  // 0 zeros, 1 border, 2 reflection
  bool align_corners = false;
  int64_t batch = 0, channels = 0, in_plane = 1, out_plane = 1;
  int64_t in_dims[kGridSpatial] = {};
};

void launch_grid_sample(ScalarType x_type, const void* x, ScalarType grid_type, const void* grid, void* y,
                        const GridSampleSpec& spec, cudaStream_t s);

// AffineGrid (20): grid [n, (d,) h, w, nd] = theta[n] (nd x nd+1, type t) times the normalised
// coordinates (x, y[, z], 1) of each position, in float64.
void launch_affine_grid(ScalarType t, const void* theta, void* grid, int64_t n, int nd, int64_t d_len,
                        int64_t h_len, int64_t w_len, bool align_corners, cudaStream_t s);

}  // namespace tessera::cuda
