// Attention on the GPU: softmax(softcap(Q K^T * scale) + mask) V per query head, for the ONNX Attention
// operator and com.tessera FusedAttention. Q, K, V and Y are read and written through (batch, head, seq)
// strides with the head dimension contiguous, so [B,S,H,D] and [B,H,S,D] tensors need no transpose.
// Two kernels: a row kernel (a block per query row, every feature: softcap, the qk_matmul output, rows
// of any length, float32) and a flash kernel (float16/bfloat16 tensor cores, online softmax in float32,
// head sizes that are multiples of 16 up to 128). Both compute in float32 and round once when storing.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/elementwise.h"

namespace tessera::cuda {

// One operand: element (b, h, s, d) sits at p + b*sb + h*sh + s*ss + d.
struct AttnOperand {
  const void* p = nullptr;
  int64_t sb = 0, sh = 0, ss = 0;
};

enum class MaskType { kNone, kFloat, kHalf, kBFloat16, kBool };

// A mask broadcast to (batch, q_heads, q_seq, keys): strides 0 on broadcast axes. Keys at or past
// `keys` are masked out (the ONNX spec pads a short mask with -inf).
struct AttnMask {
  MaskType type = MaskType::kNone;
  const void* p = nullptr;
  int64_t stride[4] = {0, 0, 0, 0};
  int64_t keys = 0;
};

struct AttnParams {
  ElemType t = ElemType::kFloat;  // Q, K, V and Y
  AttnOperand q, k, v;
  void* y = nullptr;
  int64_t y_sb = 0, y_sh = 0, y_ss = 0;
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_seq = 0, keys = 0, head = 0, v_head = 0;
  float scale = 1, softcap = 0;  // softcap 0: none
  // Added to the (capped) score: a float mask as is, a boolean one as 0 / -inf.
  AttnMask add;
  // A boolean mask replacing the score by `keep_fill` where false (an exporter's Where(mask, s, fill)).
  AttnMask keep;
  float keep_fill = 0;
  // Key j is visible from query i when pos - left <= j <= pos + right (a negative window leaves that
  // side open), pos = i + offset, offset = past_len, or nonpad[b] - q_seq where nonpad is given.
  int64_t left = -1, right = -1, past_len = 0;
  const int64_t* nonpad = nullptr;  // device, [batch]; keys at or past nonpad[b] are masked
  // qk_matmul_output (row kernel only): [B, q_heads, q_seq, keys] in type t; mode 0 scaled scores,
  // 1 after softcap, 2 with the mask, 3 the probabilities.
  void* qk = nullptr;
  int qk_mode = 0;
};

// Whether the flash kernel takes these parameters (type, head sizes, alignment, no softcap/qk output).
bool flash_attention_fits(const AttnParams& p);
void launch_flash_attention(const AttnParams& p, cudaStream_t s);
// The row kernel; `scores` is device scratch of batch * q_heads * q_seq * keys floats.
void launch_row_attention(const AttnParams& p, float* scores, cudaStream_t s);

// Copies a [batch, heads, seq, size] operand (read through its strides) into rows [at, at + seq) of a
// contiguous [batch, heads, total, size] tensor of the same element type (a present key/value cache).
void launch_attention_cache_copy(ElemType t, const AttnOperand& src, int64_t batch, int64_t heads,
                                 int64_t seq, int64_t size, void* dst, int64_t total, int64_t at,
                                 cudaStream_t s);

}  // namespace tessera::cuda
