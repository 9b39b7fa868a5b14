// Reference kernel of LinearAttention (ai.onnx 27): a recurrence over the sequence on a per-(batch,
// kv head) state S of shape (d_k, d_v), computed in double:
//   gated rules:  S *= exp(decay_t)                 (decay per key feature or per head, in log space)
//   delta rules:  v_t <- beta_t * (v_t - S^T k_t)   (beta per kv head or one per step)
//   always:       S += k_t v_t^T;   o_t = scale * q_t^T S   (query heads share their group's state)
// chunk_size is a tuning hint of chunked implementations and does not change the result.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "ops/attention/ref_util.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
namespace refk = tessera::ops::refk;
using rt::KernelContext;
using rt::Tensor;

enum In { kQuery, kKey, kValue, kPastState, kDecay, kBeta };
enum Out { kOutput, kPresentState };

class LinearAttention : public rt::OpKernel {
 public:
  explicit LinearAttention(const rt::KernelInfo& info)
      : q_heads_(info.get_int("q_num_heads")),
        kv_heads_(info.get_int("kv_num_heads")),
        scale_(info.get_float("scale", 0.0f)),
        rule_(info.get_string("update_rule", "gated_delta")) {
    if (q_heads_ <= 0 || kv_heads_ <= 0 || q_heads_ % kv_heads_ != 0)
      throw rt::KernelError(
          fmt::format("q_num_heads {} must be a positive multiple of kv_num_heads {}", q_heads_, kv_heads_));
    gated_ = rule_ == "gated" || rule_ == "gated_delta";
    delta_ = rule_ == "delta" || rule_ == "gated_delta";
    if (!gated_ && !delta_ && rule_ != "linear")
      throw rt::KernelError(
          fmt::format("update_rule '{}' is not one of linear, gated, delta, gated_delta", rule_));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& q = ctx.input(kQuery);
    const Tensor& k = ctx.input(kKey);
    const Tensor& v = ctx.input(kValue);
    refk::require_float(q, "query");
    if (k.dtype() != q.dtype() || v.dtype() != q.dtype())
      ctx.fail("query, key and value must share an element type");
    for (const Tensor* t : {&q, &k, &v}) {
      if (t->rank() != 3)
        ctx.fail(fmt::format("query, key and value must be 3-D, got {}", rt::shape_str(t->shape())));
    }
    const int64_t b = q.dim(0), steps = q.dim(1);
    if (k.dim(0) != b || v.dim(0) != b || k.dim(1) != steps || v.dim(1) != steps)
      ctx.fail(fmt::format("query {}, key {} and value {} differ in batch or sequence length",
                           rt::shape_str(q.shape()), rt::shape_str(k.shape()), rt::shape_str(v.shape())));
    if (q.dim(2) % q_heads_ != 0 || k.dim(2) % kv_heads_ != 0 || v.dim(2) % kv_heads_ != 0)
      ctx.fail("hidden sizes of query, key and value must divide by their head counts");
    const int64_t dk = q.dim(2) / q_heads_, dv = v.dim(2) / kv_heads_;
    if (k.dim(2) / kv_heads_ != dk)
      ctx.fail(fmt::format("key head size {} differs from query head size {}", k.dim(2) / kv_heads_, dk));

    const Tensor* decay = ctx.optional_input(kDecay);
    const Tensor* beta = ctx.optional_input(kBeta);
    if (gated_ != (decay != nullptr))
      ctx.fail(fmt::format("update_rule '{}' {} the decay input", rule_, gated_ ? "needs" : "does not take"));
    if (delta_ != (beta != nullptr))
      ctx.fail(fmt::format("update_rule '{}' {} the beta input", rule_, delta_ ? "needs" : "does not take"));
    const int64_t decay_per =
        decay ? gate_width(ctx, *decay, b, steps, {kv_heads_ * dk, kv_heads_}, "decay") : 0;
    const int64_t beta_per = beta ? gate_width(ctx, *beta, b, steps, {kv_heads_, 1}, "beta") : 0;

    std::vector<double> state(static_cast<size_t>(b * kv_heads_ * dk * dv), 0.0);
    rt::DataType state_type = q.dtype();
    if (const Tensor* p = ctx.optional_input(kPastState)) {
      if (p->shape() != rt::Shape{b, kv_heads_, dk, dv})
        ctx.fail(fmt::format("past_state {} must be [{},{},{},{}]", rt::shape_str(p->shape()), b, kv_heads_,
                             dk, dv));
      refk::require_float(*p, "past_state");
      state = refk::to_doubles(*p, "LinearAttention past_state");
      state_type = p->dtype();
    }
    const std::vector<double> qd = refk::to_doubles(q, "LinearAttention query");
    const std::vector<double> kd = refk::to_doubles(k, "LinearAttention key");
    const std::vector<double> vd = refk::to_doubles(v, "LinearAttention value");
    const std::vector<double> gd =
        decay ? refk::to_doubles(*decay, "LinearAttention decay") : std::vector<double>{};
    const std::vector<double> bd =
        beta ? refk::to_doubles(*beta, "LinearAttention beta") : std::vector<double>{};
    const double scale = scale_ != 0.0f ? scale_ : 1.0 / std::sqrt(static_cast<double>(dk));
    const int64_t group = q_heads_ / kv_heads_;
    std::vector<double> out(static_cast<size_t>(b * steps * q_heads_ * dv), 0.0);

    // Each (batch, kv head) recurrence is independent.
    ctx.threads().parallel_for(b * kv_heads_, 1, [&](int64_t begin, int64_t end) {
      std::vector<double> vt(static_cast<size_t>(dv));
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t bi = bh / kv_heads_, h = bh % kv_heads_;
        double* s = &state[static_cast<size_t>(bh * dk * dv)];
        for (int64_t t = 0; t < steps; ++t) {
          const int64_t row = bi * steps + t;
          const double* kt = &kd[static_cast<size_t>(row * kv_heads_ * dk + h * dk)];
          for (int64_t m = 0; m < dv; ++m) vt[m] = vd[row * kv_heads_ * dv + h * dv + m];
          if (decay) {
            for (int64_t d = 0; d < dk; ++d) {
              const double g =
                  decay_per == kv_heads_ ? gd[row * kv_heads_ + h] : gd[row * decay_per + h * dk + d];
              const double f = std::exp(g);
              for (int64_t m = 0; m < dv; ++m) s[d * dv + m] *= f;
            }
          }
          if (beta) {
            const double bt = bd[row * beta_per + (beta_per == 1 ? 0 : h)];
            for (int64_t m = 0; m < dv; ++m) {
              double retrieved = 0;
              for (int64_t d = 0; d < dk; ++d) retrieved += s[d * dv + m] * kt[d];
              vt[m] = bt * (vt[m] - retrieved);
            }
          }
          for (int64_t d = 0; d < dk; ++d)
            for (int64_t m = 0; m < dv; ++m) s[d * dv + m] += kt[d] * vt[m];
          for (int64_t qh = h * group; qh < (h + 1) * group; ++qh) {
            const double* qt = &qd[static_cast<size_t>(row * q_heads_ * dk + qh * dk)];
            double* o = &out[static_cast<size_t>(row * q_heads_ * dv + qh * dv)];
            for (int64_t m = 0; m < dv; ++m) {
              double acc = 0;
              for (int64_t d = 0; d < dk; ++d) acc += qt[d] * s[d * dv + m];
              o[m] = scale * acc;
            }
          }
        }
      }
    });
    refk::store_doubles(ctx.output(kOutput, q.dtype(), {b, steps, q_heads_ * dv}), out,
                        "LinearAttention output");
    if (ctx.wants_output(kPresentState))
      refk::store_doubles(ctx.output(kPresentState, state_type, {b, kv_heads_, dk, dv}), state,
                          "LinearAttention present_state");
  }

 private:
  // The last dimension of a (batch, seq, width) gate, which must be one of `allowed`.
  static int64_t gate_width(const KernelContext& ctx, const Tensor& g, int64_t b, int64_t steps,
                            std::initializer_list<int64_t> allowed, const char* what) {
    if (g.rank() != 3 || g.dim(0) != b || g.dim(1) != steps)
      ctx.fail(
          fmt::format("{} {} must be (batch {}, seq {}, width)", what, rt::shape_str(g.shape()), b, steps));
    for (int64_t w : allowed)
      if (g.dim(2) == w) return w;
    std::string want;
    for (int64_t w : allowed) want += (want.empty() ? "" : " or ") + std::to_string(w);
    ctx.fail(fmt::format("{} {} has last dimension {}, expected {}", what, rt::shape_str(g.shape()), g.dim(2),
                         want));
  }

  int64_t q_heads_, kv_heads_;
  float scale_;
  std::string rule_;
  bool gated_ = false, delta_ = false;
};

}  // namespace

TESSERA_REGISTER_KERNELS(attention_linear_attention) {
  reg.add(tessera::rt::KernelDef::of<LinearAttention>("LinearAttention"));
}
