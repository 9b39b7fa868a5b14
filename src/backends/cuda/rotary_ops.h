// Device launch of RotaryEmbedding (ai.onnx 23): the first `rot` features of each head rotated in pairs
// ((i, i + rot/2), or (2i, 2i + 1) when interleaved) by the cos/sin of the position, the rest copied.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/data_ops.h"

namespace tessera::cuda {

struct RotarySpec {
  int64_t batch = 0, heads = 0, seq = 0, head = 0, rot = 0;
  bool packed = false;  // x is [batch, seq, heads * head] (else [batch, heads, seq, head])
  bool interleaved = false;
  int64_t positions = 0;  // rows of the caches when position_ids index them (0: per (batch, seq))
};

// x, cos, sin and y of one float type t; position_ids (int64 [batch, seq]) may be null. A position
// outside the caches (which the CPU reports; the GPU cannot without a synchronisation) gives zeros in the
// rotated features.
void launch_rotary(ScalarType t, const void* x, const void* cos, const void* sin, const int64_t* position_ids,
                   void* y, const RotarySpec& s, cudaStream_t st);

}  // namespace tessera::cuda
