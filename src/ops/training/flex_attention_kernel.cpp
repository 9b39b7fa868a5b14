// Reference kernel of FlexAttention (ai.onnx.preview 1): Y = prob_mod(softmax(score_mod(Q K^T * scale))) V
// on 4-D (batch, heads, seq, size) tensors, key/value heads shared by groups of query heads. The optional
// subgraphs see the whole (batch, q_heads, q_seq, kv_seq) tensor in Q's element type; everything else
// is computed in double. A row whose scores are all -inf gets zero probabilities (and a zero output).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ops/attention/ref_util.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
namespace refk = tessera::ops::refk;
using rt::KernelContext;
using rt::Tensor;

class FlexAttention : public rt::OpKernel {
 public:
  explicit FlexAttention(const rt::KernelInfo& info)
      : has_score_mod_(info.has_attr("score_mod")), has_prob_mod_(info.has_attr("prob_mod")) {
    if (info.has_attr("scale")) scale_ = info.get_float("scale");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& q = ctx.input(0);
    const Tensor& k = ctx.input(1);
    const Tensor& v = ctx.input(2);
    refk::require_float(q, "Q");
    if (k.dtype() != q.dtype() || v.dtype() != q.dtype()) ctx.fail("Q, K and V must share an element type");
    if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4)
      ctx.fail(fmt::format("Q {}, K {} and V {} must be 4-D", rt::shape_str(q.shape()),
                           rt::shape_str(k.shape()), rt::shape_str(v.shape())));
    const int64_t b = q.dim(0), hq = q.dim(1), sq = q.dim(2), d = q.dim(3);
    const int64_t hkv = k.dim(1), skv = k.dim(2), dv = v.dim(3);
    if (k.dim(0) != b || v.dim(0) != b || v.dim(1) != hkv || v.dim(2) != skv || k.dim(3) != d)
      ctx.fail(fmt::format("Q {}, K {} and V {} disagree in batch, heads, sequence or head size",
                           rt::shape_str(q.shape()), rt::shape_str(k.shape()), rt::shape_str(v.shape())));
    if (hkv <= 0 || hq % hkv != 0)
      ctx.fail(fmt::format("query heads {} are not a multiple of key/value heads {}", hq, hkv));
    const double scale = scale_ ? static_cast<double>(*scale_) : 1.0 / std::sqrt(static_cast<double>(d));
    const std::vector<double> qd = refk::to_doubles(q, "FlexAttention Q");
    const std::vector<double> kd = refk::to_doubles(k, "FlexAttention K");
    const std::vector<double> vd = refk::to_doubles(v, "FlexAttention V");
    const rt::Shape score_shape = {b, hq, sq, skv};
    const int64_t rows = b * hq * sq, group = hq / hkv;
    auto kv_base = [&](int64_t r) { return (r / (sq * hq)) * hkv + ((r / sq) % hq) / group; };

    std::vector<double> s(static_cast<size_t>(rt::shape_numel(score_shape)));
    ctx.threads().parallel_for(rows, 16, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const double* qr = &qd[static_cast<size_t>(r * d)];
        const double* kb = &kd[static_cast<size_t>(kv_base(r) * skv * d)];
        for (int64_t j = 0; j < skv; ++j) {
          double acc = 0;
          for (int64_t e = 0; e < d; ++e) acc += qr[e] * kb[j * d + e];
          s[r * skv + j] = acc * scale;
        }
      }
    });
    if (has_score_mod_) s = modify(ctx, "score_mod", s, q.dtype(), score_shape);
    for (int64_t r = 0; r < rows; ++r) softmax(&s[static_cast<size_t>(r * skv)], skv);
    if (has_prob_mod_) s = modify(ctx, "prob_mod", s, q.dtype(), score_shape);

    std::vector<double> y(static_cast<size_t>(rows * dv), 0.0);
    ctx.threads().parallel_for(rows, 16, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const double* vb = &vd[static_cast<size_t>(kv_base(r) * skv * dv)];
        for (int64_t j = 0; j < skv; ++j) {
          const double p = s[r * skv + j];
          if (p == 0) continue;
          for (int64_t e = 0; e < dv; ++e) y[r * dv + e] += p * vb[j * dv + e];
        }
      }
    });
    refk::store_doubles(ctx.output(0, q.dtype(), {b, hq, sq, dv}), y, "FlexAttention Y");
  }

 private:
  static void softmax(double* x, int64_t n) {
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < n; ++j) mx = std::max(mx, x[j]);
    if (mx == -std::numeric_limits<double>::infinity()) {
      std::fill(x, x + n, 0.0);
      return;
    }
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += (x[j] = std::exp(x[j] - mx));
    for (int64_t j = 0; j < n; ++j) x[j] /= sum;
  }

  // Runs a modifier subgraph on the scores, handed over in the inputs' element type.
  static std::vector<double> modify(KernelContext& ctx, const char* attr, const std::vector<double>& s,
                                    rt::DataType dtype, const rt::Shape& shape) {
    Tensor t = ctx.scratch(dtype, shape);
    refk::store_doubles(t, s, attr);
    std::vector<rt::Value> in = {rt::Value(t)};
    std::vector<rt::Value> out = ctx.run_subgraph(attr, in);
    if (out.size() != 1 || !out[0].is_tensor())
      ctx.fail(fmt::format("subgraph '{}' must return one tensor", attr));
    const Tensor& r = out[0].tensor();
    if (r.shape() != shape)
      ctx.fail(fmt::format("subgraph '{}' returned shape {}, expected {}", attr, rt::shape_str(r.shape()),
                           rt::shape_str(shape)));
    refk::require_float(r, fmt::format("the output of subgraph '{}'", attr));
    return refk::to_doubles(r, attr);
  }

  bool has_score_mod_, has_prob_mod_;
  std::optional<float> scale_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(training_flex_attention) {
  reg.add(tessera::rt::KernelDef::of<FlexAttention>("FlexAttention").in_domain("ai.onnx.preview"));
}
