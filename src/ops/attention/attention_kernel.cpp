// Reference kernel of Attention (ai.onnx 23, 24, 25): softmax(softcap(Q K^T * scale) + bias) V per head,
// where the bias gathers the attention mask (additive, or boolean: false = -inf), the causal / sliding
// window limits, and (24+) the key padding of nonpad_kv_seqlen. Computed in double; rows whose keys are
// all masked give zero probabilities and a zero output rather than NaN, as the spec asks.
//
// Causal and window limits are aligned bottom-right on the key axis: query i sits at absolute position
// i + offset, with offset = past sequence length when a past_key cache is given, nonpad_kv_seqlen[b] -
// q_seq for an external (padded) cache, and 0 otherwise. Key j is visible when
// pos - left_window <= j <= pos + right_window (a negative window leaves that side open; is_causal sets
// the right window to 0).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ops/attention/attention_inputs.h"
#include "ops/attention/ref_util.h"
#include "runtime/dispatch.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
namespace refk = tessera::ops::refk;
using rt::KernelContext;
using rt::Shape;
using rt::Tensor;

using namespace tessera::ops::attention_io;

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// A (batch, heads, seq, size) tensor, read from either layout into double.
std::vector<double> to_bhsd(const Tensor& t, bool packed, int64_t heads, const char* what) {
  std::vector<double> flat = refk::to_doubles(t, what);
  if (!packed) return flat;
  const int64_t b = t.dim(0), s = t.dim(1), size = t.dim(2) / heads;
  std::vector<double> out(flat.size());
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t si = 0; si < s; ++si)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t d = 0; d < size; ++d)
          out[((bi * heads + h) * s + si) * size + d] = flat[(bi * s + si) * heads * size + h * size + d];
  return out;
}

// [past ; new] along the sequence axis of (batch, heads, seq, size) arrays.
std::vector<double> concat_seq(const std::vector<double>* past, const std::vector<double>& cur, int64_t bh,
                               int64_t past_seq, int64_t cur_seq, int64_t size) {
  if (!past) return cur;
  std::vector<double> out(static_cast<size_t>(bh * (past_seq + cur_seq) * size));
  for (int64_t i = 0; i < bh; ++i) {
    auto dst = out.begin() + i * (past_seq + cur_seq) * size;
    dst = std::copy_n(past->begin() + i * past_seq * size, past_seq * size, dst);
    std::copy_n(cur.begin() + i * cur_seq * size, cur_seq * size, dst);
  }
  return out;
}

// The attention mask broadcast to (batch, q_heads, q_seq, total): strides (0 on broadcast axes) and the
// key length it covers; keys past it are masked out (the spec pads a short mask with -inf / false).
struct Mask {
  std::vector<double> values;  // additive
  int64_t stride[4] = {0, 0, 0, 0};
  int64_t keys = 0;
  bool present = false;

  double at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (!present) return 0.0;
    if (j >= keys) return kNegInf;
    return values[b * stride[0] + h * stride[1] + i * stride[2] + j * stride[3]];
  }
};

Mask read_mask(const KernelContext& ctx, const Dims& d) {
  Mask m;
  const Tensor* t = ctx.optional_input(kMask);
  if (!t) return m;
  m.present = true;
  const int rank = t->rank();
  if (rank < 1 || rank > 4) {
    ctx.fail(
        fmt::format("attn_mask must have rank 1 to 4 (broadcastable to batch, heads, q_seq, total_seq), "
                    "got shape {}",
                    rt::shape_str(t->shape())));
  }
  const int64_t full[4] = {d.batch, d.q_heads, d.q_seq, d.total};
  int64_t dims[4] = {1, 1, 1, 1};
  for (int k = 0; k < rank; ++k) dims[4 - rank + k] = t->dim(k);
  for (int k = 0; k < 3; ++k) {
    if (dims[k] != 1 && dims[k] != full[k]) {
      ctx.fail(
          fmt::format("attn_mask {} does not broadcast to (batch, q_heads, q_seq, total_seq) = [{},{},{},{}]",
                      rt::shape_str(t->shape()), full[0], full[1], full[2], full[3]));
    }
  }
  if (dims[3] > d.total) {
    ctx.fail(fmt::format("attn_mask {} covers {} keys, more than the total sequence length {}",
                         rt::shape_str(t->shape()), dims[3], d.total));
  }
  m.keys = dims[3];
  int64_t stride = 1;
  for (int k = 3; k >= 0; --k) {
    m.stride[k] = dims[k] == 1 && k < 3 ? 0 : stride;
    stride *= dims[k];
  }
  if (t->dtype() == rt::DataType::kBool) {
    const bool* p = t->data<bool>();
    m.values.resize(static_cast<size_t>(t->numel()));
    for (size_t i = 0; i < m.values.size(); ++i) m.values[i] = p[i] ? 0.0 : kNegInf;
  } else {
    m.values = refk::to_doubles(*t, "Attention attn_mask");
  }
  return m;
}

class Attention : public rt::OpKernel {
 public:
  explicit Attention(const rt::KernelInfo& info) : attrs_(read_attrs(info)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& q = ctx.input(kQ);
    const Tensor& k = ctx.input(kK);
    const Tensor& v = ctx.input(kV);
    refk::require_float(q, "Q");
    refk::require_float(v, "V");
    if (k.dtype() != q.dtype()) ctx.fail("K must have the element type of Q");
    Dims d = read_dims(ctx, q, k, v, attrs_.q_heads, attrs_.kv_heads);

    std::vector<double> qd = to_bhsd(q, d.packed, d.q_heads, "Attention Q");
    std::vector<double> kd = to_bhsd(k, d.packed, d.kv_heads, "Attention K");
    std::vector<double> vd = to_bhsd(v, d.packed, d.kv_heads, "Attention V");
    std::optional<std::vector<double>> pk, pv;
    if (const Tensor* t = ctx.optional_input(kPastKey)) pk = refk::to_doubles(*t, "Attention past_key");
    if (const Tensor* t = ctx.optional_input(kPastValue)) pv = refk::to_doubles(*t, "Attention past_value");
    const int64_t bh = d.batch * d.kv_heads;
    kd = concat_seq(pk ? &*pk : nullptr, kd, bh, d.past, d.kv_seq, d.head);
    vd = concat_seq(pv ? &*pv : nullptr, vd, bh, d.past, d.kv_seq, d.v_head);
    if (ctx.wants_output(kPresentKey))
      refk::store_doubles(ctx.output(kPresentKey, k.dtype(), {d.batch, d.kv_heads, d.total, d.head}), kd,
                          "Attention present_key");
    if (ctx.wants_output(kPresentValue))
      refk::store_doubles(ctx.output(kPresentValue, v.dtype(), {d.batch, d.kv_heads, d.total, d.v_head}), vd,
                          "Attention present_value");

    // Shapes of the outputs first: throws on overflow before anything is allocated.
    rt::shape_numel(rt::Shape{d.batch, d.q_heads, d.q_seq, d.total});
    rt::shape_numel(rt::Shape{d.batch, d.q_heads, d.q_seq, d.v_head});
    Mask mask = read_mask(ctx, d);
    std::vector<int64_t> nonpad = read_nonpad(ctx, d);
    std::vector<double> y(static_cast<size_t>(d.batch * d.q_heads * d.q_seq * d.v_head), 0.0);
    const bool want_qk = ctx.wants_output(kQkOut);
    std::vector<double> qk(want_qk ? static_cast<size_t>(d.batch * d.q_heads * d.q_seq * d.total) : 0);
    const double scale =
        attrs_.scale ? static_cast<double>(*attrs_.scale) : 1.0 / std::sqrt(static_cast<double>(d.head));

    const int64_t rows = d.batch * d.q_heads * d.q_seq;
    ctx.threads().parallel_for(rows, 16, [&](int64_t begin, int64_t end) {
      std::vector<double> raw(d.total), capped(d.total), x(d.total);
      for (int64_t r = begin; r < end; ++r) {
        const int64_t i = r % d.q_seq, h = (r / d.q_seq) % d.q_heads, b = r / (d.q_seq * d.q_heads);
        const int64_t kvh = h / (d.q_heads / d.kv_heads);
        const double* qrow = &qd[static_cast<size_t>(r * d.head)];
        const double* kbase = &kd[static_cast<size_t>((b * d.kv_heads + kvh) * d.total * d.head)];
        const double* vbase = &vd[static_cast<size_t>((b * d.kv_heads + kvh) * d.total * d.v_head)];
        const int64_t pos = i + (pk ? d.past : (nonpad.empty() ? 0 : nonpad[b] - d.q_seq));
        for (int64_t j = 0; j < d.total; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < d.head; ++e) dot += qrow[e] * kbase[j * d.head + e];
          raw[j] = dot * scale;
          capped[j] = attrs_.softcap > 0 ? attrs_.softcap * std::tanh(raw[j] / attrs_.softcap) : raw[j];
          double bias = mask.at(b, h, i, j);
          if ((attrs_.right >= 0 && j > pos + attrs_.right) || (attrs_.left >= 0 && j < pos - attrs_.left) ||
              (!nonpad.empty() && j >= nonpad[b]))
            bias = kNegInf;
          x[j] = capped[j] + bias;
        }
        if (want_qk) {
          // Mode 0: the scaled Q K^T; 1: after softcap; 2: with the mask added; 3: the probabilities.
          const std::vector<double>& src = attrs_.mode == 0 ? raw : attrs_.mode == 1 ? capped : x;
          if (attrs_.mode != 3) std::copy(src.begin(), src.end(), qk.begin() + r * d.total);
        }
        softmax_row(x);
        if (want_qk && attrs_.mode == 3) std::copy(x.begin(), x.end(), qk.begin() + r * d.total);
        double* yrow = &y[static_cast<size_t>(r * d.v_head)];
        for (int64_t j = 0; j < d.total; ++j) {
          if (x[j] == 0) continue;  // masked keys contribute nothing, even where V holds inf or NaN
          for (int64_t e = 0; e < d.v_head; ++e) yrow[e] += x[j] * vbase[j * d.v_head + e];
        }
      }
    });

    Shape y_shape = d.packed ? Shape{d.batch, d.q_seq, d.q_heads * d.v_head}
                             : Shape{d.batch, d.q_heads, d.q_seq, d.v_head};
    Tensor& yt = ctx.output(kY, q.dtype(), y_shape);
    if (d.packed) {
      std::vector<double> packed(y.size());
      for (int64_t b = 0; b < d.batch; ++b)
        for (int64_t h = 0; h < d.q_heads; ++h)
          for (int64_t i = 0; i < d.q_seq; ++i)
            for (int64_t e = 0; e < d.v_head; ++e)
              packed[((b * d.q_seq + i) * d.q_heads + h) * d.v_head + e] =
                  y[((b * d.q_heads + h) * d.q_seq + i) * d.v_head + e];
      y.swap(packed);
    }
    refk::store_doubles(yt, y, "Attention Y");
    if (want_qk)
      refk::store_doubles(ctx.output(kQkOut, q.dtype(), {d.batch, d.q_heads, d.q_seq, d.total}), qk,
                          "Attention qk_matmul_output");
  }

 private:
  // Softmax in place; a row with no finite score (every key masked) becomes all zeros.
  static void softmax_row(std::vector<double>& x) {
    double mx = kNegInf;
    for (double s : x) mx = std::max(mx, s);
    if (mx == kNegInf || std::isnan(mx)) {
      if (mx == kNegInf) std::fill(x.begin(), x.end(), 0.0);
      return;
    }
    double sum = 0;
    for (double& s : x) {
      s = std::exp(s - mx);
      sum += s;
    }
    for (double& s : x) s /= sum;
  }

  Attrs attrs_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(attention_attention) {
  reg.add(tessera::rt::KernelDef::of<Attention>("Attention"));
}
