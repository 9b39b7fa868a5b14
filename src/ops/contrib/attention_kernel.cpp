// Reference kernel of com.microsoft Attention (ONNX Runtime's BERT / GPT-2 self-attention): Q, K, V =
// input @ weights + bias split by qkv_hidden_sizes, then per head softmax(Q K^T * scale + mask) V, with
// an optional stacked key/value cache past / present of shape (2, batch, heads, seq, head_size).
//
// Masks follow ONNX Runtime: a masked key gets mask_filter_value (default -10000) added to its score,
// so a row whose keys are all masked still averages them; unidirectional (causal) keys after the query's
// position (past length + row) get the lowest float and so never count while another key is visible.
// mask_index forms: (batch) key lengths (right padding), (2 * batch) end then start positions (left
// padding), (batch, total_seq) and (batch, seq, total_seq) 0/1 masks, and Megatron's (batch, 1,
// max_seq, max_seq) 0/1 mask indexed at row past + i. (3 * batch + 2) is for ONNX Runtime's CUDA fused
// kernels and is refused, as is do_rotary (defined by the CUDA kernels only).
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>

#include "ops/contrib/attention_common_kernel.h"
#include "runtime/dispatch.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
namespace ca = tessera::ops::contrib_attn;
using rt::KernelContext;
using rt::Tensor;

enum In { kInput, kWeights, kBias, kMaskIndex, kPast, kAttentionBias, kPastSequenceLength };
enum Out { kOutput, kPresent };

class ContribAttention : public rt::OpKernel {
 public:
  explicit ContribAttention(const rt::KernelInfo& info)
      : heads_(info.get_int("num_heads")),
        unidirectional_(info.get_int("unidirectional", 0) != 0),
        share_buffer_(info.get_int("past_present_share_buffer", 0) != 0),
        do_rotary_(info.get_int("do_rotary", 0) != 0),
        mask_filter_(info.get_float("mask_filter_value", -10000.0f)),
        sizes_(info.get_ints("qkv_hidden_sizes", {})) {
    if (info.has_attr("scale")) scale_ = info.get_float("scale");
    if (heads_ <= 0) throw rt::KernelError(fmt::format("num_heads must be positive, got {}", heads_));
  }

  void compute(KernelContext& ctx) const override {
    if (do_rotary_)
      ctx.fail(
          "do_rotary is not supported (ONNX Runtime defines it for its CUDA kernel only); apply "
          "RotaryEmbedding before the attention");
    const Tensor& x = ctx.input(kInput);
    const Tensor& w = ctx.input(kWeights);
    const rt::DataType dt = x.dtype();
    ca::require_same_type(ctx, w, dt, "weights");
    if (x.rank() != 3)
      ctx.fail(fmt::format("input must be 3-D (batch, seq, input_hidden), got {}", ca::shape_of(x)));
    if (w.rank() != 2 || w.dim(0) != x.dim(2)) {
      ctx.fail(fmt::format("weights {} must be 2-D (input_hidden = {}, q + k + v hidden)", ca::shape_of(w),
                           x.dim(2)));
    }
    const int64_t batch = x.dim(0), seq = x.dim(1), in_hidden = x.dim(2), cols = w.dim(1);
    int64_t qh = 0, kh = 0, vh = 0;
    if (!sizes_.empty()) {
      if (sizes_.size() != 3) ctx.fail("qkv_hidden_sizes must hold 3 values");
      qh = sizes_[0], kh = sizes_[1], vh = sizes_[2];
    } else {
      if (cols % 3 != 0)
        ctx.fail(fmt::format("weights have {} columns, not divisible into Q, K and V", cols));
      qh = kh = vh = cols / 3;
    }
    if (qh <= 0 || kh != qh || vh <= 0 || qh + kh + vh != cols || qh % heads_ != 0 || vh % heads_ != 0) {
      ctx.fail(
          fmt::format("qkv_hidden_sizes ({}, {}, {}) must be positive, Q equal to K, sum to the weights' {} "
                      "columns and divide by num_heads {}",
                      qh, kh, vh, cols, heads_));
    }
    const int64_t head = qh / heads_, v_head = vh / heads_;
    std::vector<float> bias;
    if (const Tensor* b = ctx.optional_input(kBias)) {
      ca::require_same_type(ctx, *b, dt, "bias");
      if (b->rank() != 1 || b->dim(0) != cols)
        ctx.fail(fmt::format("bias {} must be 1-D with {} values", ca::shape_of(*b), cols));
      bias = ca::to_floats(*b, "Attention bias");
    }

    // Past / present cache.
    const Tensor* past = ctx.optional_input(kPast);
    int64_t past_len = 0, capacity = seq;
    if (past) {
      ca::require_same_type(ctx, *past, dt, "past");
      if (head != v_head) ctx.fail("past needs Q, K and V of one head size");
      if (past->rank() != 5 || past->dim(0) != 2 || past->dim(1) != batch || past->dim(2) != heads_ ||
          past->dim(4) != head) {
        ctx.fail(
            fmt::format("past {} must be (2, batch, num_heads, past_seq, head_size) = (2, {}, {}, *, {})",
                        ca::shape_of(*past), batch, heads_, head));
      }
      if (share_buffer_) {
        const Tensor* pl = ctx.optional_input(kPastSequenceLength);
        if (!pl) ctx.fail("past_present_share_buffer needs the past_sequence_length input");
        past_len = ca::scalar_int32(ctx, *pl, "past_sequence_length");
        if (past_len < 0 || past_len + seq > past->dim(3)) {
          ctx.fail(
              fmt::format("past_sequence_length {} plus sequence length {} must fit the shared buffer of {}",
                          past_len, seq, past->dim(3)));
        }
        capacity = past->dim(3);
      } else {
        past_len = past->dim(3);
        capacity = past_len + seq;
      }
    } else if (share_buffer_) {
      ctx.fail("past_present_share_buffer needs the past input");
    }
    const int64_t total = past_len + seq;

    // Projection: (batch * seq, in_hidden) @ (in_hidden, cols) + bias.
    std::vector<float> xf = ca::to_floats(x, "Attention input");
    std::vector<float> wf = ca::to_floats(w, "Attention weights");
    std::vector<float> proj(static_cast<size_t>(batch * seq * cols), 0.0f);
    ctx.threads().parallel_for(batch * seq,
                               std::max<int64_t>(1, 16384 / std::max<int64_t>(1, in_hidden * cols)),
                               [&](int64_t r0, int64_t r1) {
                                 for (int64_t r = r0; r < r1; ++r) {
                                   float* out = proj.data() + r * cols;
                                   if (!bias.empty()) std::copy(bias.begin(), bias.end(), out);
                                   for (int64_t e = 0; e < in_hidden; ++e) {
                                     const float a = xf[static_cast<size_t>(r * in_hidden + e)];
                                     const float* wrow = wf.data() + e * cols;
                                     for (int64_t c = 0; c < cols; ++c) out[c] += a * wrow[c];
                                   }
                                 }
                               });
    std::vector<float> q = ca::bsnh_to_bnsh(proj.data(), batch, seq, heads_, head, cols, head, 0);
    std::vector<float> knew = ca::bsnh_to_bnsh(proj.data(), batch, seq, heads_, head, cols, head, qh);
    std::vector<float> vnew =
        ca::bsnh_to_bnsh(proj.data(), batch, seq, heads_, v_head, cols, v_head, qh + kh);

    // Key/value buffers (batch, heads, capacity, size): the past (whole buffer when shared), then the new
    // tokens at past_len.
    const int64_t bh = batch * heads_;
    std::vector<float> k(static_cast<size_t>(bh * capacity * head), 0.0f);
    std::vector<float> v(static_cast<size_t>(bh * capacity * v_head), 0.0f);
    if (past) {
      std::vector<float> pf = ca::to_floats(*past, "Attention past");
      const int64_t p_cap = past->dim(3);
      const int64_t keep = share_buffer_ ? p_cap : past_len;
      for (int64_t i = 0; i < bh; ++i) {
        std::copy_n(pf.data() + i * p_cap * head, keep * head, k.data() + i * capacity * head);
        std::copy_n(pf.data() + (bh + i) * p_cap * head, keep * head, v.data() + i * capacity * head);
      }
    }
    for (int64_t i = 0; i < bh; ++i) {
      std::copy_n(knew.data() + i * seq * head, seq * head, k.data() + (i * capacity + past_len) * head);
      std::copy_n(vnew.data() + i * seq * v_head, seq * v_head,
                  v.data() + (i * capacity + past_len) * v_head);
    }
    if (ctx.wants_output(kPresent)) {
      Tensor& present = ctx.output(kPresent, dt, {2, batch, heads_, capacity, head});
      std::vector<float> both(k);
      both.insert(both.end(), v.begin(), v.end());
      ca::store_floats(present, both, "Attention present");
    }

    ca::KeyMask mask = ca::read_key_mask(ctx, kMaskIndex, "mask_index", batch, seq, past_len, total, true);
    ca::AttentionBias ab = ca::read_attention_bias(ctx, kAttentionBias, dt, batch, heads_, seq, total);
    ca::AttentionCore core = ca::masked_core(
        {batch, heads_, seq, capacity, total, head, v_head, past_len, scale_, mask_filter_, unidirectional_},
        mask, ab);
    std::vector<float> y;
    core.run(ctx, q, k, v, y, nullptr);
    ca::store_floats(ctx.output(kOutput, dt, {batch, seq, vh}), y, "Attention output");
  }

 private:
  int64_t heads_;
  bool unidirectional_, share_buffer_, do_rotary_;
  float mask_filter_;
  std::vector<int64_t> sizes_;
  std::optional<float> scale_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(contrib_attention) {
  reg.add(tessera::rt::KernelDef::of<ContribAttention>("Attention").in_domain("com.microsoft"));
}
