// Device launch of Resize: every output element maps its coordinate back to the input per axis
// (coordinate_transformation_mode), and sums the input over the cartesian product of the axes' taps
// (one for nearest, two for linear, four for cubic, more when antialiasing a downscale) in float64,
// with the arithmetic of the CPU reference (ops/image/resize_ref.h), taps of zero weight skipped.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/data_typed.h"

namespace tessera::cuda {

inline constexpr int kResizeRank = 8;

struct ResizeAxis {
  int64_t in = 1, out = 1;
  double scale = 1.0;
  double roi_start = 0.0, roi_end = 1.0;
};

// The enums of ops/image/resize_ref.h, as integers.
struct ResizeSpec {
  int rank = 0;
  int mode = 0;     // 0 nearest, 1 linear, 2 cubic
  int coord = 0;    // resize_ref::Coord
  int nearest = 0;  // resize_ref::Nearest
  double cubic_a = -0.75;
  bool exclude_outside = false, antialias = false;
  double extrapolation = 0.0;       // tf_crop_and_resize, linear and cubic
  uint64_t extrapolation_bits = 0;  // the same in the element type (nearest)
  ResizeAxis axes[kResizeRank];
};

// Nearest: elements of elem_bytes moved as they are.
void launch_resize_nearest(int elem_bytes, const void* x, void* y, const ResizeSpec& spec, int64_t n,
                           cudaStream_t s);
// Linear and cubic on numbers of type t.
void launch_resize_interpolate(ScalarType t, const void* x, void* y, const ResizeSpec& spec, int64_t n,
                               cudaStream_t s);

}  // namespace tessera::cuda
