// The CUDA backend's ONNX Runtime (com.microsoft) layer normalisations, which Tessera's fusion passes
// and transformer exports emit: LayerNormalization and SimplifiedLayerNormalization (RMS) over the axes
// from `axis`, SkipLayerNormalization and SkipSimplifiedLayerNormalization over the last axis of
// input + skip (+ bias), with the sum as the optional fourth output. Scale and bias hold one value per
// normalised element or one for all; statistics are float32 (stash_type 1).
#include <fmt/format.h>

#include "backends/cuda/kernel_util.h"
#include "backends/cuda/norm_ops.h"
#include "backends/cuda/reduce_util.h"

namespace tessera::cuda {

namespace {

enum class Form { kLayerNorm, kSimplified, kSkip, kSkipSimplified };

bool is_skip(Form f) {
  return f == Form::kSkip || f == Form::kSkipSimplified;
}
bool is_rms(Form f) {
  return f == Form::kSimplified || f == Form::kSkipSimplified;
}

// Input positions of each form: scale, bias (-1: none) and the skip forms' pre-normalisation bias.
struct Slots {
  int scale, bias, sum_bias;
};
Slots slots_of(Form f) {
  switch (f) {
    case Form::kLayerNorm:
      return {1, 2, -1};
    case Form::kSimplified:
      return {1, -1, -1};
    case Form::kSkip:
      return {2, 3, 4};
    case Form::kSkipSimplified:
      return {2, -1, 3};
  }
  return {1, -1, -1};
}

class ContribNormKernel : public rt::OpKernel {
 public:
  ContribNormKernel(const rt::KernelInfo& info, Form form)
      : form_(form),
        axis_(is_skip(form) ? -1 : info.get_int("axis", -1)),
        eps_(info.get_float("epsilon", is_skip(form) ? 1e-12f : 1e-5f)) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Shape& s = x.shape();
    const auto a = static_cast<size_t>(normalized_axis(axis_, x.rank()));
    NormParams p;
    p.n = 1;
    for (size_t k = a; k < s.size(); ++k) p.n *= s[k];
    p.rows = p.n == 0 ? 0 : x.numel() / p.n;
    p.eps = eps_;
    p.rms = is_rms(form_);
    const Slots sl = slots_of(form_);
    const rt::Tensor* scale = param(ctx, sl.scale, p.n, "scale", p.scale_mult);
    const rt::Tensor* bias = param(ctx, sl.bias, p.n, "bias", p.bias_mult);
    if (is_skip(form_)) {
      const rt::Tensor& skip = ctx.input(1);
      if (skip.rank() < 1 || skip.numel() == 0 || skip.shape().back() != p.n || x.numel() % skip.numel() != 0)
        ctx.fail(fmt::format("skip {} does not broadcast to the input {}", rt::shape_str(skip.shape()),
                             rt::shape_str(s)));
      p.skip = skip.raw();
      p.skip_n = skip.numel();
      int64_t mult = 1;
      if (const rt::Tensor* b = param(ctx, sl.sum_bias, p.n, "bias", mult)) {
        if (mult == 0) ctx.fail(fmt::format("bias must have {} elements, got 1", p.n));
        p.sum_bias = b->raw();
      }
    }
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), s);
    rt::Shape stat_shape = s;
    for (size_t k = a; k < stat_shape.size(); ++k) stat_shape[k] = 1;
    // Outputs 1 and 2 are Mean and InvStdDev (Mean is 0 in SkipSimplifiedLayerNormalization, as the
    // reference writes it); SimplifiedLayerNormalization has only InvStdDev, as output 1.
    float* stats[2] = {nullptr, nullptr};
    for (size_t o = 1; o <= 2; ++o) {
      if (o >= ctx.output_count() || !ctx.wants_output(o)) continue;
      const size_t which = form_ == Form::kSimplified ? o : o - 1;  // 0: mean, 1: inverse deviation
      if (which > 1) continue;
      stats[which] = static_cast<float*>(ctx.output_uninitialized(o, rt::DataType::kFloat, stat_shape).raw());
    }
    if (is_skip(form_) && ctx.output_count() > 3 && ctx.wants_output(3))
      p.sum_out = ctx.output_uninitialized(3, x.dtype(), s).raw();
    launch_row_norm(*elem_type(x.dtype()), x.raw(), scale ? scale->raw() : nullptr,
                    bias ? bias->raw() : nullptr, y.raw(), stats[0], stats[1], p, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  // Input i (nullptr when absent or i < 0), which holds n values (mult 1) or one for all (mult 0).
  static const rt::Tensor* param(rt::KernelContext& ctx, int i, int64_t n, const char* what, int64_t& mult) {
    if (i < 0) return nullptr;
    const rt::Tensor* t = ctx.optional_input(static_cast<size_t>(i));
    if (!t) return nullptr;
    if (t->numel() != n && t->numel() != 1)
      ctx.fail(fmt::format("{} has {} elements; the normalised dimensions have {}", what, t->numel(), n));
    mult = t->numel() == n ? 1 : 0;
    return t;
  }

  Form form_;
  int64_t axis_;
  float eps_;
};

bool contrib_norm_supported(const rt::KernelInfo& info, Form form) {
  if (!all_tensors(info) || !rank_known(info, 0, 1) || info.input_count() < 2) return false;
  if (!float_like_input0(info, 1, info.input_count() - 1)) return false;
  const bool stats = info.has_output(1) || info.has_output(2);
  return !stats || info.get_int("stash_type", 1) == static_cast<int64_t>(rt::DataType::kFloat);
}

}  // namespace

void register_norm_contrib_kernels(KernelTable& t) {
  for (auto [name, form] : {std::pair{"LayerNormalization", Form::kLayerNorm},
                            std::pair{"SimplifiedLayerNormalization", Form::kSimplified},
                            std::pair{"SkipLayerNormalization", Form::kSkip},
                            std::pair{"SkipSimplifiedLayerNormalization", Form::kSkipSimplified}}) {
    rt::KernelDef d = cuda_def(
        name, [form](const rt::KernelInfo& i) { return contrib_norm_supported(i, form); },
        [form](const rt::KernelInfo& info) -> rt::KernelPtr {
          return std::make_unique<ContribNormKernel>(info, form);
        });
    d.domain = "com.microsoft";
    t.add(std::move(d));
  }
}

}  // namespace tessera::cuda
