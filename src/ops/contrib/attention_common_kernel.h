// Pieces shared by the reference kernels of ONNX Runtime's attention contrib operators (Attention,
// MultiHeadAttention, GroupQueryAttention, RotaryEmbedding): element conversion to float, the
// softmax(Q K^T) V core, rotary rotation and the checks of mask-like inputs.
//
// Everything is computed in float whatever the element type (float16 and bfloat16 are widened), as ONNX
// Runtime's CPU kernels do; results are rounded once on the way out.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "runtime/kernel.h"

namespace tessera::ops::contrib_attn {

// The elements of a float, float16 or bfloat16 tensor as float; KernelError for other types.
std::vector<float> to_floats(const rt::Tensor& t, std::string_view what);

// Writes n floats into a float-type tensor, rounding once to its element type.
void store_floats(rt::Tensor& t, const float* v, int64_t n, std::string_view what);
inline void store_floats(rt::Tensor& t, const std::vector<float>& v, std::string_view what) {
  store_floats(t, v.data(), static_cast<int64_t>(v.size()), what);
}

// The one int32 value of a scalar or one-element tensor.
int32_t scalar_int32(const rt::KernelContext& ctx, const rt::Tensor& t, std::string_view what);

// KernelError unless t has the element type `want` names (the first input's, for a mixed-type check).
void require_same_type(const rt::KernelContext& ctx, const rt::Tensor& t, rt::DataType want,
                       std::string_view what);

// Shape as "[a,b,c]" for messages.
std::string shape_of(const rt::Tensor& t);

// An additive (batch or 1, heads or 1, q_seq, keys) tensor, the attention_bias of the three attention
// operators; read into float once and indexed with broadcasting.
struct AttentionBias {
  std::vector<float> values;
  int64_t batch_stride = 0, head_stride = 0, row_stride = 0;
  bool present = false;
  const float* row(int64_t b, int64_t h, int64_t i) const {
    return values.data() + b * batch_stride + h * head_stride + i * row_stride;
  }
};
AttentionBias read_attention_bias(const rt::KernelContext& ctx, size_t input, rt::DataType dtype,
                                  int64_t batch, int64_t heads, int64_t q_seq, int64_t keys);

// softmax(scale * Q K^T [softcapped] + bias) V for every batch, head and query row.
//   q:    (batch, heads, q_seq, head)
//   k, v: (batch, kv_heads, capacity, head / v_head); query head h reads key/value head
//         h / (heads / kv_heads). Batch b attends to its first keys[b] rows.
//   y:    (batch, q_seq, heads * v_head), the layout all three operators return.
// `mask(b, h, i, row)` adjusts the scores of one query row in place (adds masks and biases); keys set to
// -inf are left out and a row with every key left out gives probabilities and output 0. A finite
// score, however low, stays in the softmax (ONNX Runtime's mask_filter_value semantics).
struct AttentionCore {
  int64_t batch = 0, heads = 0, kv_heads = 0, q_seq = 0, capacity = 0, head = 0, v_head = 0;
  std::vector<int64_t> keys;  // per batch, <= capacity
  float scale = 1.0f;
  float softcap = 0.0f;  // > 0: scores become softcap * tanh(scores / softcap) before the mask
  // Per-head extra logit in the softmax denominator (smooth softmax: 0; GroupQueryAttention head_sink).
  std::optional<std::vector<float>> sink;
  std::function<void(int64_t b, int64_t h, int64_t i, float* row)> mask;

  // Optional probe of the scores, (batch, heads, q_seq, qk_width) with qk_width >= max keys; entries
  // past a batch's keys stay 0.
  enum class Probe { kNone, kBeforeSoftmax, kAfterSoftmax };
  Probe probe = Probe::kNone;
  int64_t qk_width = 0;

  void run(rt::KernelContext& ctx, const std::vector<float>& q, const std::vector<float>& k,
           const std::vector<float>& v, std::vector<float>& y, std::vector<float>* qk) const;
};

// Rotates the first `rotary_dim` features of one head vector x (length >= rotary_dim) by the angles of
// one cache row: cos/sin hold rotary_dim / 2 values. Interleaved rotates pairs (x[2i], x[2i+1]), else
// the halves (x[i], x[i + rotary_dim / 2]).
void rotate(float* x, const float* cos, const float* sin, int64_t rotary_dim, bool interleaved);

// (batch, seq, heads, size) -> (batch, heads, seq, size), reading token rows `row_stride` floats apart,
// heads `head_stride` apart, starting `offset` floats in (packed inputs interleave several tensors).
std::vector<float> bsnh_to_bnsh(const float* src, int64_t batch, int64_t seq, int64_t heads, int64_t size,
                                int64_t row_stride, int64_t head_stride, int64_t offset);

// An int32 key mask (Attention's mask_index, MultiHeadAttention's key_padding_mask) as "is key j of
// query row i in batch b masked". Forms: (batch) key lengths, (2 * batch) end then start positions,
// (batch, total) and (batch, q_seq, total) with 0 = masked, Megatron's (batch, 1, max, max) read at
// row past + i.
struct KeyMask {
  enum Kind { kNone, kEnd, kEndStart, k2D, k3D, k4D } kind = kNone;
  const int32_t* data = nullptr;
  int64_t batch = 0, q_seq = 0, total = 0, max_seq = 0, past = 0;

  bool masked(int64_t b, int64_t i, int64_t j) const {
    switch (kind) {
      case kNone:
        return false;
      case kEnd:
        return j >= data[b];
      case kEndStart:
        return j >= data[b] || j < data[batch + b];
      case k2D:
        return data[b * total + j] == 0;
      case k3D:
        return data[(b * q_seq + i) * total + j] == 0;
      case k4D:
        return data[(b * max_seq + past + i) * max_seq + j] == 0;
    }
    return false;
  }
};
// Reads input `input` (named `what`) as a KeyMask; `extended` also accepts the (2 * batch) and 4-D forms.
KeyMask read_key_mask(const rt::KernelContext& ctx, size_t input, std::string_view what, int64_t batch,
                      int64_t q_seq, int64_t past, int64_t total, bool extended);

// What Attention and MultiHeadAttention share: the core for `heads` query and key heads, every batch
// attending to `total` keys of a `capacity`-row buffer, with their score adjustments: a masked key gets
// `filter` added, the bias is added, and with `causal` query row i sees keys up to past + i. An explicit
// scale of 0 means the default 1/sqrt(head), as ONNX Runtime reads it. `mask` and `bias` are captured by
// reference: they must outlive the core's run.
struct MaskedAttention {
  int64_t batch = 0, heads = 0, q_seq = 0, capacity = 0, total = 0, head = 0, v_head = 0, past = 0;
  std::optional<float> scale;
  float filter = 0.0f;
  bool causal = false;
};
AttentionCore masked_core(const MaskedAttention& a, const KeyMask& mask, const AttentionBias& bias);

}  // namespace tessera::ops::contrib_attn
