// Reductions on the GPU (the Reduce* operators, ArgMax/ArgMin) over any set of axes: the tensor is seen
// as groups (the kept coordinates, one output element each) of n reduced elements; both index spaces
// are described by dims and strides, adjacent dims merged, so the common cases (the last axis, a
// contiguous block of axes) decode with one or two divisions. Floats accumulate in float32 (Kahan per
// thread, then a fixed-order tree); int32/int64 in 64-bit two's complement (wrapping, as the reference).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "backends/cuda/elementwise.h"

namespace tessera::cuda {

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };
// kDouble and kBool only for the reductions (double accumulates in double; bool: ReduceMax/ReduceMin).
enum class NumType { kFloat, kHalf, kBFloat16, kInt32, kInt64, kDouble, kBool };

struct ReduceGeom {
  int64_t groups = 1, n = 1;
  int kept_rank = 0, red_rank = 0;
  int64_t kept_dims[kMaxRank] = {}, kept_strides[kMaxRank] = {};
  int64_t red_dims[kMaxRank] = {}, red_strides[kMaxRank] = {};
};

// The geometry of reducing the axes set in `mask` of a row-major tensor of `shape` (rank <= kMaxRank).
ReduceGeom make_reduce_geom(const std::vector<int64_t>& shape, const std::vector<bool>& mask);

// y[g] = reduction of group g, for g < geom.groups (y has the input's element type).
void launch_reduce(ReduceKind k, NumType t, const void* x, void* y, const ReduceGeom& geom, cudaStream_t s);

// y[g] = index (along the reduced axis) of the group's maximum (minimum); ties pick the first index or,
// with `last`, the last; NaN counts as the extreme. `geom` must reduce one axis (red_rank <= 1).
void launch_arg_reduce(bool max, bool last, NumType t, const void* x, int64_t* y, const ReduceGeom& geom,
                       cudaStream_t s);

}  // namespace tessera::cuda
