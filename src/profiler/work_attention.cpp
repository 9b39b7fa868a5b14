// FLOPs of the attentions: per (batch, query head) and per (query, key) pair computed, 2 D for Q K^T,
// 2 D_v for P V, and the score's own (scale, masks, softmax); a causal mask computes only the pairs with
// key j <= i + offset.
#include <algorithm>

#include "ops/fused/fused_attention.h"
#include "profiler/work_util.h"

namespace tessera::profiler {

using namespace detail;

namespace {

// Scores of one (batch, head) pair: scale, one per mask or bias, and softmax's max, subtract, exp, sum
// and divide.
double score_flops(int masks) {
  return 1 + masks + 5;
}

std::optional<double> fused_attention_flops(const ir::Node& n, const ValueInfos& values, bool& causal) {
  const Dims* q = input_dims(n, values, ops::fused::kFaQ);
  const Dims* k = input_dims(n, values, ops::fused::kFaK);
  const Dims* v = input_dims(n, values, ops::fused::kFaV);
  if (!q || !k || !v) return std::nullopt;
  ops::fused::OperandView qv, kv, vv;
  auto view = [&](const Dims& s, const char* axes, const char* part, ops::fused::OperandView& out) {
    return !ops::fused::operand_view(s, ints_attr(n, axes, ops::fused::kBshd), int_attr(n, part, 0), "x",
                                     out);
  };
  if (!view(*q, "q_axes", "q_part", qv) || !view(*k, "k_axes", "k_part", kv) ||
      !view(*v, "v_axes", "v_part", vv))
    return std::nullopt;
  causal = int_attr(n, "causal", 0) != 0;
  const double heads = static_cast<double>(qv.dims[0]) * qv.dims[1];
  const double pairs = attention_pairs(qv.dims[2], kv.dims[2], causal);
  const int masks = (has_input(n, ops::fused::kFaBias) ? 1 : 0) + (has_input(n, ops::fused::kFaKeep) ? 1 : 0);
  return heads * pairs * (2.0 * qv.dims[3] + 2.0 * vv.dims[3] + score_flops(masks));
}

// ONNX Attention (opset 23): Q [B, Hq, Sq, D] or [B, Sq, Hq * D] (q_num_heads), K and V likewise with
// kv_num_heads, past_key/past_value [B, Hkv, P, D] ahead of K and V; causal keys j <= i + P.
std::optional<double> onnx_attention_flops(const ir::Node& n, const ValueInfos& values, bool& causal) {
  const Dims* q = input_dims(n, values, 0);
  const Dims* k = input_dims(n, values, 1);
  const Dims* v = input_dims(n, values, 2);
  if (!q || !k || !v || q->size() != k->size() || q->size() != v->size()) return std::nullopt;
  int64_t batch = (*q)[0], heads = 0, sq = 0, skv = 0, d = 0, dv = 0;
  if (q->size() == 4) {
    heads = (*q)[1], sq = (*q)[2], d = (*q)[3], skv = (*k)[2], dv = (*v)[3];
  } else if (q->size() == 3) {
    heads = int_attr(n, "q_num_heads", 0);
    const int64_t kv_heads = int_attr(n, "kv_num_heads", 0);
    if (heads <= 0 || kv_heads <= 0) return std::nullopt;
    sq = (*q)[1], skv = (*k)[1], d = (*q)[2] / heads, dv = (*v)[2] / kv_heads;
  } else {
    return std::nullopt;
  }
  int64_t past = 0;
  if (has_input(n, 4)) {
    const Dims* pk = input_dims(n, values, 4);
    if (!pk || pk->size() != 4) return std::nullopt;
    past = (*pk)[2];
  }
  causal = int_attr(n, "is_causal", 0) != 0;
  const double pairs = attention_pairs(sq, past + skv, causal, past);
  const int masks = has_input(n, 3) ? 1 : 0;
  return static_cast<double>(batch) * heads * pairs * (2.0 * d + 2.0 * dv + score_flops(masks));
}

// com.microsoft MultiHeadAttention: query [B, S, H * D] (or packed [B, S, H, 3, D] without key); key
// and value [B, L, H * D], [B, H, L, D] or packed [B, L, H, 2, D]; past_key [B, H, P, D] ahead of them;
// unidirectional: causal, keys j <= i + P. A bias adds 1 per element of Q, K and V.
std::optional<double> mha_flops(const ir::Node& n, const ValueInfos& values, bool& causal) {
  const Dims* q = input_dims(n, values, 0);
  const int64_t heads = int_attr(n, "num_heads", 0);
  if (!q || heads <= 0 || q->size() < 3) return std::nullopt;
  const Dims* k = has_input(n, 1) ? input_dims(n, values, 1) : nullptr;
  const Dims* v = has_input(n, 2) ? input_dims(n, values, 2) : nullptr;
  const int64_t batch = (*q)[0], sq = (*q)[1];
  int64_t d = 0, keys = 0, dv = 0;
  if (q->size() == 5 && !k) {
    d = dv = (*q)[4], keys = sq;
  } else if (q->size() == 3 && k && k->size() == 5) {
    d = dv = (*k)[4], keys = (*k)[1];
  } else if (q->size() == 3 && k && v && k->size() == v->size() && (k->size() == 3 || k->size() == 4)) {
    d = (*q)[2] / heads;
    keys = k->size() == 3 ? (*k)[1] : (*k)[2];
    dv = v->size() == 3 ? (*v)[2] / heads : (*v)[3];
  } else {
    return std::nullopt;
  }
  int64_t past = 0;
  if (has_input(n, 6)) {
    const Dims* pk = input_dims(n, values, 6);
    if (!pk || pk->size() != 4) return std::nullopt;
    past = (*pk)[2];
  }
  causal = int_attr(n, "unidirectional", 0) != 0;
  const double pairs = attention_pairs(sq, past + keys, causal, past);
  const int masks = (has_input(n, 4) ? 1 : 0) + (has_input(n, 5) ? 1 : 0);
  const double bias = has_input(n, 3) ? static_cast<double>(batch) * heads * (sq * d + keys * (d + dv)) : 0;
  return static_cast<double>(batch) * heads * pairs * (2.0 * d + 2.0 * dv + score_flops(masks)) + bias;
}

// com.microsoft GroupQueryAttention: query [B, S, Hq * D] (or Q, K and V packed as [B, S, (Hq + 2 Hkv) D]
// without key), always causal; the keys in all are present_key's [B, Hkv, T, D], the queries the last S
// of them (keys j <= i + T - S). Rotary embeddings add 3 FLOPs per element of Q and K.
std::optional<double> gqa_flops(const ir::Node& n, const ValueInfos& values) {
  const Dims* q = input_dims(n, values, 0);
  const Dims* present = output_dims(n, values, 1);
  const int64_t hq = int_attr(n, "num_heads", 0), hkv = int_attr(n, "kv_num_heads", 0);
  if (!q || !present || q->size() != 3 || present->size() != 4 || hq <= 0 || hkv <= 0) return std::nullopt;
  const int64_t batch = (*q)[0], sq = (*q)[1], total = (*present)[2], d = (*present)[3];
  const double pairs = attention_pairs(sq, total, true, total - sq);
  const int masks = has_input(n, 10) ? 1 : 0;
  const double rotary = int_attr(n, "do_rotary", 0) ? 3.0 * batch * sq * (hq + hkv) * d : 0;
  return static_cast<double>(batch) * hq * pairs * (4.0 * d + score_flops(masks)) + rotary;
}

}  // namespace

double attention_pairs(int64_t queries, int64_t keys, bool causal, int64_t offset) {
  if (!causal) return static_cast<double>(queries) * static_cast<double>(keys);
  // Query i sees keys 0..min(i + offset, keys - 1): a triangle, then full rows once i + offset >= keys - 1.
  double pairs = 0;
  for (int64_t i = 0; i < queries; ++i)
    pairs += static_cast<double>(std::clamp<int64_t>(i + offset + 1, 0, keys));
  return pairs;
}

namespace detail {

bool is_attention(const ir::Node& n) {
  if (n.op_type == ops::fused::kFusedAttention || (n.op_type == "Attention" && n.domain.empty())) return true;
  return n.domain == "com.microsoft" &&
         (n.op_type == "MultiHeadAttention" || n.op_type == "GroupQueryAttention");
}

std::optional<double> attention_flops(const ir::Node& n, const ValueInfos& values, bool& causal) {
  causal = false;
  if (n.op_type == "MultiHeadAttention") return mha_flops(n, values, causal);
  if (n.op_type == "GroupQueryAttention") {
    causal = true;
    return gqa_flops(n, values);
  }
  if (n.op_type == "Attention") return onnx_attention_flops(n, values, causal);
  return fused_attention_flops(n, values, causal);
}

}  // namespace detail

}  // namespace tessera::profiler
