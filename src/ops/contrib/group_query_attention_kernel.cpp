// Reference kernel of com.microsoft GroupQueryAttention (decoder attention with kv_num_heads key/value
// heads shared by groups of num_heads / kv_num_heads query heads), following ONNX Runtime's CPU kernel:
//
//   Batch b holds total_b = seqlens_k[b] + 1 tokens after this step. On the first prompt
//   (sequence_length == total_sequence_length) its past length is 0 and rows past total_b are padding;
//   otherwise the past length is total_b - sequence_length and the new tokens follow it.
//   present_key/value (batch, kv_heads, max(past buffer, total_sequence_length), head_size) hold the
//   first `past` rows of past_key/value (a buffer that is already the present size is copied whole) and
//   the new keys/values after them; rows never written are 0.
//   Query row s (absolute position p = past + s) sees keys j <= p with j < total_b and, with
//   local_window_size w > 0, j >= p - w; scores are scale * q.k, softcapped when softcap > 0, plus
//   attention_bias. smooth_softmax adds a 0 logit to the softmax denominator, head_sink a per-head one.
//   do_rotary rotates Q and K (new tokens) by cos/sin_cache rows at position_ids, or at p.
//   output_qk (qk_output 1: the scores before softmax, 2: the probabilities) is (batch, num_heads,
//   sequence_length, present length) with keys not seen left 0.
// Quantised caches, KV-cache scales and the q/k norm inputs of newer ONNX Runtime versions are not part of
// this schema.
#include <fmt/format.h>

#include <algorithm>
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
  kPastKey,
  kPastValue,
  kSeqlensK,
  kTotalSeqLen,
  kCos,
  kSin,
  kPositionIds,
  kAttentionBias,
  kHeadSink
};
enum Out { kOutput, kPresentKey, kPresentValue, kOutputQk };

class GroupQueryAttention : public rt::OpKernel {
 public:
  explicit GroupQueryAttention(const rt::KernelInfo& info)
      : heads_(info.get_int("num_heads")),
        kv_heads_(info.get_int("kv_num_heads")),
        do_rotary_(info.get_int("do_rotary", 0) != 0),
        interleaved_(info.get_int("rotary_interleaved", 0) != 0),
        window_(info.get_int("local_window_size", -1)),
        qk_output_(info.get_int("qk_output", 0)),
        smooth_(info.get_int("smooth_softmax", 0) != 0),
        softcap_(info.get_float("softcap", 0.0f)) {
    if (info.has_attr("scale")) scale_ = info.get_float("scale");
    if (heads_ <= 0 || kv_heads_ <= 0 || heads_ % kv_heads_ != 0) {
      throw rt::KernelError(
          fmt::format("num_heads {} must be a positive multiple of kv_num_heads {}", heads_, kv_heads_));
    }
    if (qk_output_ < 0 || qk_output_ > 2)
      throw rt::KernelError(fmt::format("qk_output must be 0, 1 or 2, got {}", qk_output_));
    if (softcap_ < 0) throw rt::KernelError(fmt::format("softcap must not be negative, got {}", softcap_));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& query = ctx.input(kQuery);
    const rt::DataType dt = query.dtype();
    const Tensor* key = ctx.optional_input(kKey);
    const Tensor* value = ctx.optional_input(kValue);
    const Tensor* past_k = ctx.optional_input(kPastKey);
    const Tensor* past_v = ctx.optional_input(kPastValue);
    for (auto [t, name] :
         {std::pair{key, "key"}, {value, "value"}, {past_k, "past_key"}, {past_v, "past_value"}}) {
      if (t) ca::require_same_type(ctx, *t, dt, name);
    }
    if (!key != !value) ctx.fail("key and value must be given together (or both left out for packed QKV)");
    if (!past_k != !past_v) ctx.fail("past_key and past_value must be given together");
    const int64_t n = heads_, nkv = kv_heads_;
    if (query.rank() != 3)
      ctx.fail(fmt::format("query must be 3-D (batch, seq, hidden), got {}", ca::shape_of(query)));
    const int64_t batch = query.dim(0), seq = query.dim(1);
    const bool packed = !key;
    const int64_t parts = packed ? n + 2 * nkv : n;
    if (query.dim(2) % parts != 0 || query.dim(2) == 0) {
      ctx.fail(fmt::format("query hidden size {} is not divisible by {} ({})", query.dim(2), parts,
                           packed ? "num_heads + 2 * kv_num_heads" : "num_heads"));
    }
    const int64_t head = query.dim(2) / parts;

    std::vector<float> qf = ca::to_floats(query, "GroupQueryAttention query");
    std::vector<float> q, knew, vnew;
    if (packed) {
      const int64_t row = parts * head;
      q = ca::bsnh_to_bnsh(qf.data(), batch, seq, n, head, row, head, 0);
      knew = ca::bsnh_to_bnsh(qf.data(), batch, seq, nkv, head, row, head, n * head);
      vnew = ca::bsnh_to_bnsh(qf.data(), batch, seq, nkv, head, row, head, (n + nkv) * head);
    } else {
      for (auto [t, name] : {std::pair{key, "key"}, {value, "value"}}) {
        if (t->rank() != 3 || t->dim(0) != batch || t->dim(1) != seq || t->dim(2) != nkv * head) {
          ctx.fail(fmt::format("{} {} must be (batch = {}, seq = {}, kv_num_heads * head_size = {})", name,
                               ca::shape_of(*t), batch, seq, nkv * head));
        }
      }
      q = ca::bsnh_to_bnsh(qf.data(), batch, seq, n, head, n * head, head, 0);
      std::vector<float> kf = ca::to_floats(*key, "key"), vf = ca::to_floats(*value, "value");
      knew = ca::bsnh_to_bnsh(kf.data(), batch, seq, nkv, head, nkv * head, head, 0);
      vnew = ca::bsnh_to_bnsh(vf.data(), batch, seq, nkv, head, nkv * head, head, 0);
    }

    // Sequence lengths.
    int64_t past_cap = 0;
    if (past_k) {
      for (auto [t, name] : {std::pair{past_k, "past_key"}, {past_v, "past_value"}}) {
        if (t->rank() != 4 || t->dim(0) != batch || t->dim(1) != nkv || t->dim(3) != head ||
            t->dim(2) != past_k->dim(2)) {
          ctx.fail(fmt::format(
              "{} {} must be (batch = {}, kv_num_heads = {}, past_seq, head_size = {}), past_key and "
              "past_value alike",
              name, ca::shape_of(*t), batch, nkv, head));
        }
      }
      past_cap = past_k->dim(2);
    }
    const Tensor& seqlens = ctx.input(kSeqlensK);
    if (seqlens.dtype() != rt::DataType::kInt32 || seqlens.numel() != batch || seqlens.rank() > 1)
      ctx.fail(fmt::format("seqlens_k {} must be int32 of shape (batch_size) = ({})", ca::shape_of(seqlens),
                           batch));
    const int64_t total_len = ca::scalar_int32(ctx, ctx.input(kTotalSeqLen), "total_sequence_length");
    if (total_len < seq || total_len > past_cap + seq) {
      ctx.fail(
          fmt::format("total_sequence_length {} must lie between the sequence length {} and past length + "
                      "sequence length = {}",
                      total_len, seq, past_cap + seq));
    }
    const bool first_prompt = seq == total_len;
    const int64_t present_len = past_k ? std::max(past_cap, total_len) : total_len;
    std::vector<int64_t> total_b(static_cast<size_t>(batch)), past_b(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t t = static_cast<int64_t>(seqlens.data<int32_t>()[b]) + 1;
      if (t < 1 || t > total_len)
        ctx.fail(fmt::format("seqlens_k[{}] = {} must lie in [0, total_sequence_length - 1 = {}]", b, t - 1,
                             total_len - 1));
      const int64_t p = first_prompt ? 0 : t - seq;
      if (p < 0)
        ctx.fail(
            fmt::format("seqlens_k[{}] + 1 = {} is less than the sequence length {} outside the first prompt",
                        b, t, seq));
      if (p > past_cap)
        ctx.fail(fmt::format("batch {} needs {} past tokens but past_key holds {}", b, p, past_cap));
      total_b[static_cast<size_t>(b)] = t;
      past_b[static_cast<size_t>(b)] = p;
    }

    if (do_rotary_) apply_rotary(ctx, q, knew, batch, seq, head, first_prompt, past_b);

    // Present cache.
    const int64_t bkv = batch * nkv;
    std::vector<float> k(static_cast<size_t>(bkv * present_len * head), 0.0f);
    std::vector<float> v(k.size(), 0.0f);
    if (past_k) {
      std::vector<float> pk = ca::to_floats(*past_k, "past_key"), pv = ca::to_floats(*past_v, "past_value");
      const bool whole = past_cap == present_len;
      for (int64_t i = 0; i < bkv; ++i) {
        const int64_t keep = whole ? past_cap : past_b[static_cast<size_t>(i / nkv)];
        std::copy_n(pk.data() + i * past_cap * head, keep * head, k.data() + i * present_len * head);
        std::copy_n(pv.data() + i * past_cap * head, keep * head, v.data() + i * present_len * head);
      }
    }
    for (int64_t i = 0; i < bkv; ++i) {
      const int64_t at = past_b[static_cast<size_t>(i / nkv)];
      std::copy_n(knew.data() + i * seq * head, seq * head, k.data() + (i * present_len + at) * head);
      std::copy_n(vnew.data() + i * seq * head, seq * head, v.data() + (i * present_len + at) * head);
    }
    ca::store_floats(ctx.output(kPresentKey, dt, {batch, nkv, present_len, head}), k, "present_key");
    ca::store_floats(ctx.output(kPresentValue, dt, {batch, nkv, present_len, head}), v, "present_value");

    ca::AttentionBias ab = ca::read_attention_bias(ctx, kAttentionBias, dt, batch, n, seq, total_len);
    ca::AttentionCore core;
    core.batch = batch;
    core.heads = n;
    core.kv_heads = nkv;
    core.q_seq = seq;
    core.capacity = present_len;
    core.head = core.v_head = head;
    core.keys = total_b;
    // ONNX Runtime reads an explicit scale of 0 as "use the default".
    core.scale = scale_ && *scale_ != 0.0f ? *scale_ : 1.0f / std::sqrt(static_cast<float>(head));
    core.softcap = softcap_;
    if (const Tensor* sink = ctx.optional_input(kHeadSink)) {
      ca::require_same_type(ctx, *sink, dt, "head_sink");
      if (sink->numel() != n || sink->rank() != 1)
        ctx.fail(fmt::format("head_sink {} must be (num_heads) = ({})", ca::shape_of(*sink), n));
      core.sink = ca::to_floats(*sink, "head_sink");
    } else if (smooth_) {
      core.sink = std::vector<float>(static_cast<size_t>(n), 0.0f);
    }
    const int64_t window = window_;
    core.mask = [&, window](int64_t b, int64_t h, int64_t i, float* row) {
      constexpr float kNegInf = -std::numeric_limits<float>::infinity();
      const int64_t pos = past_b[static_cast<size_t>(b)] + i;
      const float* add = ab.present ? ab.row(b, h, i) : nullptr;
      for (int64_t j = 0; j < total_b[static_cast<size_t>(b)]; ++j) {
        if (j > pos || (window > 0 && j < pos - window))
          row[j] = kNegInf;
        else if (add)
          row[j] += add[j];
      }
    };
    const bool want_qk = ctx.wants_output(kOutputQk);
    if (want_qk) {
      if (qk_output_ == 0)
        ctx.fail("output_qk is requested but qk_output is 0; set it to 1 (before softmax) or 2");
      core.probe = qk_output_ == 1 ? ca::AttentionCore::Probe::kBeforeSoftmax
                                   : ca::AttentionCore::Probe::kAfterSoftmax;
      core.qk_width = present_len;
    }
    std::vector<float> y, qk;
    core.run(ctx, q, k, v, y, want_qk ? &qk : nullptr);
    if (want_qk) {
      // Keys left out of the softmax read 0 rather than -inf, as the unused columns do.
      for (float& s : qk)
        if (std::isinf(s) && s < 0) s = 0;
    }
    ca::store_floats(ctx.output(kOutput, dt, {batch, seq, n * head}), y, "GroupQueryAttention output");
    if (want_qk) ca::store_floats(ctx.output(kOutputQk, dt, {batch, n, seq, present_len}), qk, "output_qk");
  }

 private:
  void apply_rotary(KernelContext& ctx, std::vector<float>& q, std::vector<float>& k, int64_t batch,
                    int64_t seq, int64_t head, bool first_prompt, const std::vector<int64_t>& past_b) const {
    const Tensor* cos_t = ctx.optional_input(kCos);
    const Tensor* sin_t = ctx.optional_input(kSin);
    if (!cos_t || !sin_t) ctx.fail("do_rotary needs the cos_cache and sin_cache inputs");
    const rt::DataType dt = ctx.input(kQuery).dtype();
    ca::require_same_type(ctx, *cos_t, dt, "cos_cache");
    ca::require_same_type(ctx, *sin_t, dt, "sin_cache");
    if (cos_t->rank() != 2 || cos_t->shape() != sin_t->shape() || 2 * cos_t->dim(1) > head ||
        cos_t->dim(1) == 0) {
      ctx.fail(fmt::format(
          "cos_cache {} and sin_cache {} must both be (max_position, rotary_dim / 2) with rotary_dim "
          "<= head_size {}",
          ca::shape_of(*cos_t), ca::shape_of(*sin_t), head));
    }
    const int64_t max_pos = cos_t->dim(0), half = cos_t->dim(1);
    std::vector<int64_t> pos(static_cast<size_t>(batch * seq));
    if (const Tensor* ids = ctx.optional_input(kPositionIds)) {
      if (ids->dtype() != rt::DataType::kInt64 || ids->numel() != batch * seq)
        ctx.fail(fmt::format("position_ids {} must be int64 (batch, seq) = ({}, {})", ca::shape_of(*ids),
                             batch, seq));
      std::copy_n(ids->data<int64_t>(), batch * seq, pos.begin());
    } else {
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t s = 0; s < seq; ++s)
          pos[static_cast<size_t>(b * seq + s)] = (first_prompt ? 0 : past_b[static_cast<size_t>(b)]) + s;
    }
    for (size_t i = 0; i < pos.size(); ++i) {
      if (pos[i] < 0 || pos[i] >= max_pos)
        ctx.fail(
            fmt::format("rotary position {} (batch {}, token {}) is outside the cos/sin cache of {} rows",
                        pos[i], static_cast<int64_t>(i) / seq, static_cast<int64_t>(i) % seq, max_pos));
    }
    std::vector<float> cf = ca::to_floats(*cos_t, "cos_cache"), sf = ca::to_floats(*sin_t, "sin_cache");
    auto run = [&](std::vector<float>& x, int64_t heads) {
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t s = 0; s < seq; ++s) {
            const int64_t p = pos[static_cast<size_t>(b * seq + s)];
            ca::rotate(x.data() + ((b * heads + h) * seq + s) * head, cf.data() + p * half,
                       sf.data() + p * half, 2 * half, interleaved_);
          }
    };
    run(q, heads_);
    run(k, kv_heads_);
  }

  int64_t heads_, kv_heads_;
  bool do_rotary_, interleaved_;
  int64_t window_, qk_output_;
  bool smooth_;
  float softcap_;
  std::optional<float> scale_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(contrib_group_query_attention) {
  reg.add(tessera::rt::KernelDef::of<GroupQueryAttention>("GroupQueryAttention").in_domain("com.microsoft"));
}
