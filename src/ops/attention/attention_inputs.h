// The run-time input checks of ONNX Attention (ai.onnx 23-25), shared by the CPU reference kernel
// (attention_kernel.cpp) and the CUDA kernel (backends/cuda/attention_kernels.cpp) so that both accept the
// same inputs and report the same messages: the sizes of Q, K and V (4-D, or 3-D packed with the head
// count attributes), the past key/value cache and nonpad_kv_seqlen.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/kernel.h"

namespace tessera::ops::attention_io {

enum In { kQ, kK, kV, kMask, kPastKey, kPastValue, kNonpad };
enum Out { kY, kPresentKey, kPresentValue, kQkOut };

struct Dims {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_seq = 0, kv_seq = 0, past = 0, total = 0;
  int64_t head = 0, v_head = 0;
  bool packed = false;  // 3-D inputs (batch, seq, heads * size)
};

// The attributes both kernels read, checked: q_num_heads / kv_num_heads (0 when absent), the
// qk_matmul_output mode (0-3), scale (unset: 1/sqrt(head size)), softcap, and the window: left/right
// (25+; -1 leaves that side open), is_causal setting right to 0.
struct Attrs {
  int64_t q_heads = 0, kv_heads = 0, mode = 0;
  std::optional<float> scale;
  float softcap = 0;
  int64_t left = -1, right = -1;
};
Attrs read_attrs(const rt::KernelInfo& info);

// The sizes of Q, K and V (inputs kQ, kK, kV) and of past_key / past_value when given; `q_heads_attr` and
// `kv_heads_attr` are q_num_heads and kv_num_heads (0 when absent), which 3-D inputs need. Fails the node
// naming what does not fit.
Dims read_dims(const rt::KernelContext& ctx, const rt::Tensor& q, const rt::Tensor& k, const rt::Tensor& v,
               int64_t q_heads_attr, int64_t kv_heads_attr);

// nonpad_kv_seqlen (a host tensor), checked: int64 [batch], each in [0, total]; empty when absent.
std::vector<int64_t> read_nonpad(const rt::KernelContext& ctx, const Dims& d);

}  // namespace tessera::ops::attention_io
