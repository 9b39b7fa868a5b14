// Reference kernel of com.microsoft MultiHeadAttention: attention on already projected query, key and
// value, for self and cross attention. Layouts, as ONNX Runtime accepts them:
//   query (batch, seq, hidden) with key (batch, kv_seq, hidden) and value (batch, kv_seq, v_hidden);
//   query packed QKV (batch, seq, heads, 3, head_size) with no key and value;
//   key packed KV (batch, kv_seq, heads, 2, head_size) with no value (no bias, as in ONNX Runtime);
//   key/value already (batch, heads, kv_seq, head_size) (a cross-attention cache: no past, no bias,
//   present_key/value return them as they are).
// bias (hidden + hidden + v_hidden) is added to Q, K and V; past_key/past_value (batch, heads, past,
// head_size) are prepended to the new keys and values. Masking follows ONNX Runtime's CPU kernel:
// key_padding_mask adds mask_filter_value to masked keys, unidirectional gives keys after past + i the
// lowest float. The qk output holds the scores handed to the softmax (scaled, masks and attention_bias
// added). Refused: past_sequence_length (a shared cache buffer, which this operator's version has no
// attribute for), cache_indirection (beam search in DecoderMaskedMultiHeadAttention), the (3 * batch + 2)
// mask of the CUDA fused kernels.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>

#include "ops/contrib/attention_common_kernel.h"
#include "runtime/kernel.h"

namespace {

namespace rt = tessera::rt;
namespace ca = tessera::ops::contrib_attn;
using rt::KernelContext;
using rt::Tensor;

enum In {
  kQuery,
  kKey,
  kValue,
  kBias,
  kKeyPaddingMask,
  kAttentionBias,
  kPastKey,
  kPastValue,
  kPastSequenceLength,
  kCacheIndirection
};
enum Out { kOutput, kPresentKey, kPresentValue, kQk };

void add_bias(std::vector<float>& x, int64_t bh_count, int64_t heads, int64_t seq, int64_t size,
              const float* bias) {
  for (int64_t i = 0; i < bh_count; ++i) {
    const float* b = bias + (i % heads) * size;
    for (int64_t s = 0; s < seq; ++s) {
      float* row = x.data() + (i * seq + s) * size;
      for (int64_t e = 0; e < size; ++e) row[e] += b[e];
    }
  }
}

// [past ; new] along the sequence axis of (batch * heads, seq, size) arrays.
std::vector<float> concat_seq(const std::vector<float>& past, const std::vector<float>& cur, int64_t bh,
                              int64_t past_seq, int64_t cur_seq, int64_t size) {
  std::vector<float> out(static_cast<size_t>(bh * (past_seq + cur_seq) * size));
  for (int64_t i = 0; i < bh; ++i) {
    float* dst = out.data() + i * (past_seq + cur_seq) * size;
    std::copy_n(past.data() + i * past_seq * size, past_seq * size, dst);
    std::copy_n(cur.data() + i * cur_seq * size, cur_seq * size, dst + past_seq * size);
  }
  return out;
}

class MultiHeadAttention : public rt::OpKernel {
 public:
  explicit MultiHeadAttention(const rt::KernelInfo& info)
      : heads_(info.get_int("num_heads")),
        unidirectional_(info.get_int("unidirectional", 0) != 0),
        mask_filter_(info.get_float("mask_filter_value", -10000.0f)) {
    if (info.has_attr("scale")) scale_ = info.get_float("scale");
    if (heads_ <= 0) throw rt::KernelError(fmt::format("num_heads must be positive, got {}", heads_));
  }

  void compute(KernelContext& ctx) const override {
    if (ctx.optional_input(kPastSequenceLength))
      ctx.fail("past_sequence_length (a shared past/present buffer) is not supported");
    if (ctx.optional_input(kCacheIndirection)) ctx.fail("cache_indirection (beam search) is not supported");
    const Tensor& query = ctx.input(kQuery);
    const rt::DataType dt = query.dtype();
    const Tensor* key = ctx.optional_input(kKey);
    const Tensor* value = ctx.optional_input(kValue);
    const Tensor* bias_t = ctx.optional_input(kBias);
    const Tensor* past_k = ctx.optional_input(kPastKey);
    const Tensor* past_v = ctx.optional_input(kPastValue);
    for (auto [t, name] : {std::pair{key, "key"},
                           {value, "value"},
                           {bias_t, "bias"},
                           {past_k, "past_key"},
                           {past_v, "past_value"}}) {
      if (t) ca::require_same_type(ctx, *t, dt, name);
    }
    if (!past_k != !past_v) ctx.fail("past_key and past_value must be given together");
    const int64_t n = heads_;
    if (query.rank() < 2)
      ctx.fail(fmt::format("query must be 3-D or packed 5-D, got {}", ca::shape_of(query)));
    const int64_t batch = query.dim(0), seq = query.dim(1);

    std::vector<float> qf = ca::to_floats(query, "MultiHeadAttention query");
    std::vector<float> q, knew, vnew;
    int64_t head = 0, v_head = 0, kv_seq = 0;
    bool kv_bnsh = false;
    if (query.rank() == 5) {
      if (key || value) ctx.fail("packed QKV query (batch, seq, heads, 3, head_size) takes no key or value");
      if (query.dim(2) != n || query.dim(3) != 3)
        ctx.fail(fmt::format("packed query {} must be (batch, seq, num_heads = {}, 3, head_size)",
                             ca::shape_of(query), n));
      head = v_head = query.dim(4);
      kv_seq = seq;
      const int64_t row = n * 3 * head;
      q = ca::bsnh_to_bnsh(qf.data(), batch, seq, n, head, row, 3 * head, 0);
      knew = ca::bsnh_to_bnsh(qf.data(), batch, seq, n, head, row, 3 * head, head);
      vnew = ca::bsnh_to_bnsh(qf.data(), batch, seq, n, head, row, 3 * head, 2 * head);
    } else if (query.rank() == 3) {
      if (!key) ctx.fail("key is required unless query is packed QKV (batch, seq, num_heads, 3, head_size)");
      if (query.dim(2) % n != 0)
        ctx.fail(fmt::format("query hidden size {} is not divisible by num_heads {}", query.dim(2), n));
      head = query.dim(2) / n;
      q = ca::bsnh_to_bnsh(qf.data(), batch, seq, n, head, n * head, head, 0);
      if (key->rank() < 3 || key->dim(0) != batch)
        ctx.fail(fmt::format("key {} must have the query's batch size {}", ca::shape_of(*key), batch));
      std::vector<float> kf = ca::to_floats(*key, "MultiHeadAttention key");
      if (key->rank() == 5) {
        if (value) ctx.fail("packed key/value (batch, kv_seq, heads, 2, head_size) takes no value input");
        if (bias_t) ctx.fail("bias is not supported with packed key/value (as in ONNX Runtime)");
        if (key->dim(2) != n || key->dim(3) != 2 || key->dim(4) != head)
          ctx.fail(
              fmt::format("packed key/value {} must be (batch, kv_seq, num_heads = {}, 2, head_size = {})",
                          ca::shape_of(*key), n, head));
        kv_seq = key->dim(1);
        v_head = head;
        knew = ca::bsnh_to_bnsh(kf.data(), batch, kv_seq, n, head, n * 2 * head, 2 * head, 0);
        vnew = ca::bsnh_to_bnsh(kf.data(), batch, kv_seq, n, head, n * 2 * head, 2 * head, head);
      } else if (key->rank() == 4) {
        if (!value || value->rank() != 4)
          ctx.fail("value must be 4-D (batch, num_heads, kv_seq, v_head_size) when key is 4-D");
        if (bias_t) ctx.fail("bias is not supported when key and value are 4-D (as in ONNX Runtime)");
        if (past_k)
          ctx.fail("past_key/past_value must be absent when key and value are 4-D (they are the cache)");
        if (key->dim(1) != n || key->dim(3) != head || value->dim(0) != batch || value->dim(1) != n ||
            value->dim(2) != key->dim(2)) {
          ctx.fail(
              fmt::format("key {} and value {} must be (batch = {}, num_heads = {}, kv_seq, head_size = {} / "
                          "v_head_size)",
                          ca::shape_of(*key), ca::shape_of(*value), batch, n, head));
        }
        kv_bnsh = true;
        kv_seq = key->dim(2);
        v_head = value->dim(3);
        knew = std::move(kf);
        vnew = ca::to_floats(*value, "MultiHeadAttention value");
      } else if (key->rank() == 3) {
        if (!value || value->rank() != 3)
          ctx.fail("value must be 3-D (batch, kv_seq, v_hidden) when key is 3-D");
        if (key->dim(2) != n * head || value->dim(0) != batch || value->dim(1) != key->dim(1) ||
            value->dim(2) % n != 0) {
          ctx.fail(
              fmt::format("key {} and value {} must be (batch = {}, kv_seq, hidden = {}) and (batch, kv_seq, "
                          "v_hidden divisible by {})",
                          ca::shape_of(*key), ca::shape_of(*value), batch, n * head, n));
        }
        kv_seq = key->dim(1);
        v_head = value->dim(2) / n;
        std::vector<float> vf = ca::to_floats(*value, "MultiHeadAttention value");
        knew = ca::bsnh_to_bnsh(kf.data(), batch, kv_seq, n, head, n * head, head, 0);
        vnew = ca::bsnh_to_bnsh(vf.data(), batch, kv_seq, n, v_head, n * v_head, v_head, 0);
      } else {
        ctx.fail(fmt::format("key must be 3-D, 4-D or packed 5-D, got {}", ca::shape_of(*key)));
      }
    } else {
      ctx.fail(
          fmt::format("query must be 3-D (batch, seq, hidden) or packed 5-D, got {}", ca::shape_of(query)));
    }

    const int64_t bh = batch * n;
    if (bias_t) {
      const int64_t d = n * head, dv = n * v_head;
      if (bias_t->rank() != 1 || bias_t->dim(0) != 2 * d + dv)
        ctx.fail(fmt::format("bias {} must be 1-D (hidden + hidden + v_hidden) = ({})", ca::shape_of(*bias_t),
                             2 * d + dv));
      std::vector<float> bf = ca::to_floats(*bias_t, "MultiHeadAttention bias");
      add_bias(q, bh, n, seq, head, bf.data());
      add_bias(knew, bh, n, kv_seq, head, bf.data() + d);
      add_bias(vnew, bh, n, kv_seq, v_head, bf.data() + 2 * d);
    }

    int64_t past = 0;
    std::vector<float> k = std::move(knew), v = std::move(vnew);
    if (past_k) {
      if (past_k->rank() != 4 || past_k->dim(0) != batch || past_k->dim(1) != n || past_k->dim(3) != head ||
          past_v->rank() != 4 || past_v->dim(0) != batch || past_v->dim(1) != n ||
          past_v->dim(2) != past_k->dim(2) || past_v->dim(3) != v_head) {
        ctx.fail(fmt::format(
            "past_key {} and past_value {} must be (batch = {}, num_heads = {}, past_seq, {} / {})",
            ca::shape_of(*past_k), ca::shape_of(*past_v), batch, n, head, v_head));
      }
      past = past_k->dim(2);
      k = concat_seq(ca::to_floats(*past_k, "past_key"), k, bh, past, kv_seq, head);
      v = concat_seq(ca::to_floats(*past_v, "past_value"), v, bh, past, kv_seq, v_head);
    }
    const int64_t total = past + kv_seq;
    if (ctx.wants_output(kPresentKey)) {
      if (kv_bnsh)
        ctx.set_output(kPresentKey, rt::Value(*key));
      else
        ca::store_floats(ctx.output(kPresentKey, dt, {batch, n, total, head}), k, "present_key");
    }
    if (ctx.wants_output(kPresentValue)) {
      if (kv_bnsh)
        ctx.set_output(kPresentValue, rt::Value(*value));
      else
        ca::store_floats(ctx.output(kPresentValue, dt, {batch, n, total, v_head}), v, "present_value");
    }

    if (const Tensor* m = ctx.optional_input(kKeyPaddingMask);
        m && m->rank() == 2 && m->dim(1) == kv_seq && kv_seq != total) {
      ctx.fail(
          fmt::format("key_padding_mask {} covers the new keys only; with past_key give (batch, "
                      "total_sequence_length) = ({}, {})",
                      ca::shape_of(*m), batch, total));
    }
    ca::KeyMask mask =
        ca::read_key_mask(ctx, kKeyPaddingMask, "key_padding_mask", batch, seq, past, total, false);
    ca::AttentionBias ab = ca::read_attention_bias(ctx, kAttentionBias, dt, batch, n, seq, total);
    ca::AttentionCore core = ca::masked_core(
        {batch, n, seq, total, total, head, v_head, past, scale_, mask_filter_, unidirectional_}, mask, ab);
    std::vector<float> y, qk;
    const bool want_qk = ctx.wants_output(kQk);
    if (want_qk) {
      core.probe = ca::AttentionCore::Probe::kBeforeSoftmax;
      core.qk_width = total;
    }
    core.run(ctx, q, k, v, y, want_qk ? &qk : nullptr);
    ca::store_floats(ctx.output(kOutput, dt, {batch, seq, n * v_head}), y, "MultiHeadAttention output");
    if (want_qk) ca::store_floats(ctx.output(kQk, dt, {batch, n, seq, total}), qk, "MultiHeadAttention qk");
  }

 private:
  int64_t heads_;
  bool unidirectional_;
  float mask_filter_;
  std::optional<float> scale_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(contrib_multi_head_attention) {
  reg.add(tessera::rt::KernelDef::of<MultiHeadAttention>("MultiHeadAttention").in_domain("com.microsoft"));
}
