#include <cstddef>

#include "backends/cuda/reduce_ops.h"

namespace tessera::cuda {

namespace {

// Appends a dim to a (dims, strides) list, merging it into the previous one when they are adjacent in
// memory (previous stride == this stride * this dim), and skipping size-1 dims.
void push_dim(int64_t* dims, int64_t* strides, int& rank, int64_t d, int64_t stride) {
  if (d == 1) return;
  if (rank > 0 && strides[rank - 1] == stride * d) {
    dims[rank - 1] *= d;
    strides[rank - 1] = stride;
    return;
  }
  dims[rank] = d;
  strides[rank] = stride;
  ++rank;
}

}  // namespace

ReduceGeom make_reduce_geom(const std::vector<int64_t>& shape, const std::vector<bool>& mask) {
  ReduceGeom g;
  const size_t rank = shape.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t i = rank; i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  for (size_t i = 0; i < rank; ++i) {
    if (mask[i]) {
      g.n *= shape[i];
      push_dim(g.red_dims, g.red_strides, g.red_rank, shape[i], strides[i]);
    } else {
      g.groups *= shape[i];
      push_dim(g.kept_dims, g.kept_strides, g.kept_rank, shape[i], strides[i]);
    }
  }
  // A zero-sized dim makes its whole index space empty: keep it so that decoding stays well defined.
  if (g.groups == 0) g.kept_rank = 0;
  if (g.n == 0) g.red_rank = 0;
  return g;
}

}  // namespace tessera::cuda
