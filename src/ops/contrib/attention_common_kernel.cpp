#include "ops/contrib/attention_common_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/dispatch.h"
#include "runtime/half.h"
#include "runtime/thread_pool.h"

namespace tessera::ops::contrib_attn {

using FloatOnly = rt::TypeList<float, rt::Float16, rt::BFloat16>;

std::vector<float> to_floats(const rt::Tensor& t, std::string_view what) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  rt::dispatch(FloatOnly{}, t.dtype(), what, [&]<class T>() {
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(p[i]);
  });
  return out;
}

void store_floats(rt::Tensor& t, const float* v, int64_t n, std::string_view what) {
  if (n != t.numel()) throw rt::KernelError(fmt::format("{}: internal size mismatch", what));
  rt::dispatch(FloatOnly{}, t.dtype(), what, [&]<class T>() {
    T* p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(v[i]);
  });
}

std::string shape_of(const rt::Tensor& t) {
  return rt::shape_str(t.shape());
}

int32_t scalar_int32(const rt::KernelContext& ctx, const rt::Tensor& t, std::string_view what) {
  if (t.dtype() != rt::DataType::kInt32) ctx.fail(fmt::format("{} must be int32", what));
  if (t.numel() != 1) ctx.fail(fmt::format("{} must hold one value, got shape {}", what, shape_of(t)));
  return t.data<int32_t>()[0];
}

void require_same_type(const rt::KernelContext& ctx, const rt::Tensor& t, rt::DataType want,
                       std::string_view what) {
  if (t.dtype() != want) {
    ctx.fail(fmt::format("{} has element type {} but must match the input's {}", what,
                         ir::dtype_name(t.dtype()), ir::dtype_name(want)));
  }
}

AttentionBias read_attention_bias(const rt::KernelContext& ctx, size_t input, rt::DataType dtype,
                                  int64_t batch, int64_t heads, int64_t q_seq, int64_t keys) {
  AttentionBias bias;
  const rt::Tensor* t = ctx.optional_input(input);
  if (!t) return bias;
  require_same_type(ctx, *t, dtype, "attention_bias");
  if (t->rank() != 4 || (t->dim(0) != batch && t->dim(0) != 1) || (t->dim(1) != heads && t->dim(1) != 1) ||
      t->dim(2) != q_seq || t->dim(3) != keys) {
    ctx.fail(
        fmt::format("attention_bias {} must be (batch or 1, num_heads or 1, sequence_length, "
                    "total_sequence_length) = ({} or 1, {} or 1, {}, {})",
                    shape_of(*t), batch, heads, q_seq, keys));
  }
  bias.present = true;
  bias.values = to_floats(*t, "attention_bias");
  bias.row_stride = keys;
  bias.head_stride = t->dim(1) == 1 ? 0 : q_seq * keys;
  bias.batch_stride = t->dim(0) == 1 ? 0 : t->dim(1) * q_seq * keys;
  return bias;
}

void AttentionCore::run(rt::KernelContext& ctx, const std::vector<float>& q, const std::vector<float>& k,
                        const std::vector<float>& v, std::vector<float>& y, std::vector<float>* qk) const {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const int64_t group = heads / kv_heads;
  y.assign(static_cast<size_t>(batch * q_seq * heads * v_head), 0.0f);
  if (qk) qk->assign(static_cast<size_t>(batch * heads * q_seq * qk_width), 0.0f);
  const int64_t rows = batch * heads * q_seq;
  const int64_t work = std::max<int64_t>(1, capacity * (head + v_head));
  ctx.threads().parallel_for(rows, std::max<int64_t>(1, 32768 / work), [&](int64_t begin, int64_t end) {
    std::vector<float> score(static_cast<size_t>(capacity));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t i = r % q_seq, h = (r / q_seq) % heads, b = r / (q_seq * heads);
      const int64_t n = keys[static_cast<size_t>(b)];
      const int64_t kvh = h / group;
      const float* qrow = q.data() + r * head;
      const float* kbase = k.data() + (b * kv_heads + kvh) * capacity * head;
      const float* vbase = v.data() + (b * kv_heads + kvh) * capacity * v_head;
      for (int64_t j = 0; j < n; ++j) {
        const float* krow = kbase + j * head;
        float dot = 0;
        for (int64_t e = 0; e < head; ++e) dot += qrow[e] * krow[e];
        float s = dot * scale;
        if (softcap > 0) s = softcap * std::tanh(s / softcap);
        score[static_cast<size_t>(j)] = s;
      }
      if (mask) mask(b, h, i, score.data());
      float* probe_row = qk ? qk->data() + r * qk_width : nullptr;
      if (probe_row && probe == Probe::kBeforeSoftmax) std::copy_n(score.data(), n, probe_row);

      float mx = kNegInf;
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, score[static_cast<size_t>(j)]);
      const float sink_logit = sink ? (*sink)[static_cast<size_t>(h)] : kNegInf;
      mx = std::max(mx, sink_logit);
      if (mx == kNegInf) {
        std::fill_n(score.data(), n, 0.0f);
      } else {
        float sum = sink ? std::exp(sink_logit - mx) : 0.0f;
        for (int64_t j = 0; j < n; ++j) {
          float& s = score[static_cast<size_t>(j)];
          s = std::exp(s - mx);
          sum += s;
        }
        for (int64_t j = 0; j < n; ++j) score[static_cast<size_t>(j)] /= sum;
      }
      if (probe_row && probe == Probe::kAfterSoftmax) std::copy_n(score.data(), n, probe_row);

      float* yrow = y.data() + ((b * q_seq + i) * heads + h) * v_head;
      for (int64_t j = 0; j < n; ++j) {
        const float p = score[static_cast<size_t>(j)];
        if (p == 0) continue;  // keys left out contribute nothing, even where V holds inf or NaN
        const float* vrow = vbase + j * v_head;
        for (int64_t e = 0; e < v_head; ++e) yrow[e] += p * vrow[e];
      }
    }
  });
}

void rotate(float* x, const float* cos, const float* sin, int64_t rotary_dim, bool interleaved) {
  const int64_t half = rotary_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const int64_t a = interleaved ? 2 * i : i;
    const int64_t b = interleaved ? 2 * i + 1 : i + half;
    const float x1 = x[a], x2 = x[b];
    x[a] = x1 * cos[i] - x2 * sin[i];
    x[b] = x2 * cos[i] + x1 * sin[i];
  }
}

std::vector<float> bsnh_to_bnsh(const float* src, int64_t batch, int64_t seq, int64_t heads, int64_t size,
                                int64_t row_stride, int64_t head_stride, int64_t offset) {
  std::vector<float> out(static_cast<size_t>(batch * heads * seq * size));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s) {
      const float* row = src + (b * seq + s) * row_stride + offset;
      for (int64_t h = 0; h < heads; ++h)
        std::copy_n(row + h * head_stride, size, out.data() + ((b * heads + h) * seq + s) * size);
    }
  return out;
}

KeyMask read_key_mask(const rt::KernelContext& ctx, size_t input, std::string_view what, int64_t batch,
                      int64_t q_seq, int64_t past, int64_t total, bool extended) {
  KeyMask m;
  const rt::Tensor* t = ctx.optional_input(input);
  if (!t) return m;
  if (t->dtype() != rt::DataType::kInt32) ctx.fail(fmt::format("{} must be int32", what));
  m.data = t->data<int32_t>();
  m.batch = batch;
  m.q_seq = q_seq;
  m.total = total;
  m.past = past;
  const auto& s = t->shape();
  if (s.size() == 1 && s[0] == batch) {
    m.kind = KeyMask::kEnd;
  } else if (extended && s.size() == 1 && s[0] == 2 * batch) {
    m.kind = KeyMask::kEndStart;
  } else if (s.size() == 1 && s[0] == 3 * batch + 2) {
    ctx.fail(fmt::format(
        "{} of shape (3 * batch_size + 2) (ONNX Runtime's CUDA fused-kernel format) is not supported", what));
  } else if (s.size() == 2 && s[0] == batch && s[1] == total) {
    m.kind = KeyMask::k2D;
  } else if (s.size() == 3 && s[0] == batch && s[1] == q_seq && s[2] == total) {
    m.kind = KeyMask::k3D;
  } else if (extended && s.size() == 4 && s[0] == batch && s[1] == 1 && s[2] == s[3] && s[2] >= total) {
    m.kind = KeyMask::k4D;
    m.max_seq = s[2];
  } else {
    ctx.fail(fmt::format(
        "{} {} must be (batch) = ({}){}, (batch, total_seq) = ({}, {}) or (batch, seq, total_seq) = "
        "({}, {}, {}){}",
        what, shape_of(*t), batch, extended ? fmt::format(", (2 * batch) = ({})", 2 * batch) : "", batch,
        total, batch, q_seq, total,
        extended ? fmt::format(" or (batch, 1, max_seq, max_seq) with max_seq >= {}", total) : ""));
  }
  return m;
}

AttentionCore masked_core(const MaskedAttention& a, const KeyMask& mask, const AttentionBias& bias) {
  AttentionCore core;
  core.batch = a.batch;
  core.heads = core.kv_heads = a.heads;
  core.q_seq = a.q_seq;
  core.capacity = a.capacity;
  core.head = a.head;
  core.v_head = a.v_head;
  core.keys.assign(static_cast<size_t>(a.batch), a.total);
  core.scale = a.scale && *a.scale != 0.0f ? *a.scale : 1.0f / std::sqrt(static_cast<float>(a.head));
  core.mask = [&mask, &bias, a](int64_t b, int64_t h, int64_t i, float* row) {
    const float* add = bias.present ? bias.row(b, h, i) : nullptr;
    for (int64_t j = 0; j < a.total; ++j) {
      if (mask.masked(b, i, j)) row[j] += a.filter;
      if (add) row[j] += add[j];
      if (a.causal && j > a.past + i) row[j] = std::numeric_limits<float>::lowest();
    }
  };
  return core;
}

}  // namespace tessera::ops::contrib_attn
