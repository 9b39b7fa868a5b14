// Device helpers shared by the attention kernels (attention_row.cu, attention_flash.cu): the masks, the
// visibility window and the score of one (query, key) pair, in the order the CPU reference applies
// them: scale, softcap, the keep mask, then the additive mask (or -inf for an invisible key).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/attention_ops.h"
#include "backends/cuda/device_types.cuh"

namespace tessera::cuda::attn {

__device__ __forceinline__ int64_t mask_index(const AttnMask& m, int64_t b, int64_t h, int64_t i, int64_t j) {
  return b * m.stride[0] + h * m.stride[1] + i * m.stride[2] + j * m.stride[3];
}

// The additive mask's term: 0 without a mask, -inf past its keys or where a boolean mask is false.
__device__ __forceinline__ float add_term(const AttnMask& m, int64_t b, int64_t h, int64_t i, int64_t j) {
  if (m.type == MaskType::kNone) return 0.0f;
  if (j >= m.keys) return -INFINITY;
  const int64_t at = mask_index(m, b, h, i, j);
  switch (m.type) {
    case MaskType::kFloat:
      return load(static_cast<const float*>(m.p), at);
    case MaskType::kHalf:
      return load(static_cast<const __half*>(m.p), at);
    case MaskType::kBFloat16:
      return load(static_cast<const __nv_bfloat16*>(m.p), at);
    default:
      return static_cast<const bool*>(m.p)[at] ? 0.0f : -INFINITY;
  }
}

// Whether the keep mask (boolean) keeps the score; true without one.
__device__ __forceinline__ bool kept(const AttnMask& m, int64_t b, int64_t h, int64_t i, int64_t j) {
  if (m.type == MaskType::kNone) return true;
  if (j >= m.keys) return false;
  return static_cast<const bool*>(m.p)[mask_index(m, b, h, i, j)];
}

// The query's absolute position (causal and window limits are aligned bottom-right).
__device__ __forceinline__ int64_t query_pos(const AttnParams& p, int64_t b, int64_t i) {
  return i + (p.nonpad ? p.nonpad[b] - p.q_seq : p.past_len);
}

__device__ __forceinline__ bool visible(const AttnParams& p, int64_t b, int64_t pos, int64_t j) {
  if (p.right >= 0 && j > pos + p.right) return false;
  if (p.left >= 0 && j < pos - p.left) return false;
  return !(p.nonpad && j >= p.nonpad[b]);
}

__device__ __forceinline__ float softcapped(const AttnParams& p, float raw) {
  return p.softcap > 0 ? p.softcap * tanhf(raw / p.softcap) : raw;
}

// The score that goes into the softmax, from the capped product.
__device__ __forceinline__ float masked_score(const AttnParams& p, float capped, int64_t b, int64_t h,
                                              int64_t i, int64_t j, int64_t pos) {
  float s = kept(p.keep, b, h, i, j) ? capped : p.keep_fill;
  const float bias = visible(p, b, pos, j) ? add_term(p.add, b, h, i, j) : -INFINITY;
  return s + bias;
}

}  // namespace tessera::cuda::attn
