// Fast float32 layer normalisations: ai.onnx LayerNormalization (17) and RMSNormalization (23), and
// com.microsoft LayerNormalization, SimplifiedLayerNormalization, SkipLayerNormalization and
// SkipSimplifiedLayerNormalization. A transformer runs one or two of these per block over rows of a few
// hundred to a few thousand values: memory-bound work that the reference kernels (statistics in double,
// a per-element parameter lookup, a scratch vector per chunk) run at a fraction of memory speed.
//
// Hand-written rather than oneDNN's layer_normalization: oneDNN has no skip/bias/sum fusion and no RMS
// form, and returns the variance rather than 1 / sqrt(var + eps); one row loop covers all six ops. The
// row functions are plain loops with `omp simd` reductions, compiled by GCC's target_clones for AVX-512,
// AVX2 and baseline x86-64 and picked once at load time by CPU detection (the project builds without
// -march). Statistics accumulate in float (ONNX Runtime does too) with a two-pass variance, which is
// exact enough for rows of any length we meet (error ~1e-7 relative against the double reference).
//
// Taken: float32 input and parameters, parameters of exactly the normalised size (ai.onnx: a shape that
// equals the normalised axes up to leading ones), statistics outputs in float (stash_type 1). Everything
// else (other types, scalar parameters, broadcast skips that are not whole rows, invalid shapes that the
// reference reports) goes to the reference kernel.
#include <algorithm>
#include <cmath>

#include "backends/cpu/dnnl_common.h"
#include "runtime/thread_pool.h"

namespace tessera::cpu {
namespace {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TESSERA_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TESSERA_SIMD_CLONES
#endif

// One row: s = x (+ skip) (+ bias); optionally written to sum; then y = (s - mean) * inv * gamma (+ beta).
// mean is 0 for the simplified (RMS) forms. y doubles as the scratch row for s.
struct RowArgs {
  const float* x;
  const float* skip;   // nullable
  const float* bias;   // nullable: added before normalising (skip forms)
  const float* gamma;  // nullable: 1
  const float* beta;   // nullable: 0
  float* y;
  float* sum;  // nullable
  int64_t h;
  float eps;
  bool simplified;
};

TESSERA_SIMD_CLONES
void norm_row(const RowArgs& a, float* mean_out, float* inv_out) {
  const int64_t h = a.h;
  // No __restrict on x and y: y is also the scratch row s read below. `omp simd` still vectorises: no
  // iteration reads what another writes.
  const float* x = a.x;
  float* y = a.y;
  const float* s = x;
  if (a.skip || a.bias) {
    const float* k = a.skip;
    const float* b = a.bias;
    if (k && b) {
#pragma omp simd
      for (int64_t j = 0; j < h; ++j) y[j] = x[j] + k[j] + b[j];
    } else if (k) {
#pragma omp simd
      for (int64_t j = 0; j < h; ++j) y[j] = x[j] + k[j];
    } else {
#pragma omp simd
      for (int64_t j = 0; j < h; ++j) y[j] = x[j] + b[j];
    }
    s = y;
    if (a.sum) std::copy(y, y + h, a.sum);
  }
  float mean = 0.0f;
  if (!a.simplified) {
    float acc = 0.0f;
#pragma omp simd reduction(+ : acc)
    for (int64_t j = 0; j < h; ++j) acc += s[j];
    mean = acc / static_cast<float>(h);
  }
  float sq = 0.0f;
#pragma omp simd reduction(+ : sq)
  for (int64_t j = 0; j < h; ++j) {
    float d = s[j] - mean;
    sq += d * d;
  }
  const float inv = 1.0f / std::sqrt(sq / static_cast<float>(h) + a.eps);
  const float* g = a.gamma;
  const float* be = a.beta;
  // y may alias s (the scratch row): each element is read before it is written, at the same index.
  if (g && be) {
#pragma omp simd
    for (int64_t j = 0; j < h; ++j) y[j] = (s[j] - mean) * inv * g[j] + be[j];
  } else if (g) {
#pragma omp simd
    for (int64_t j = 0; j < h; ++j) y[j] = (s[j] - mean) * inv * g[j];
  } else {
#pragma omp simd
    for (int64_t j = 0; j < h; ++j) y[j] = (s[j] - mean) * inv;
  }
  if (mean_out) *mean_out = mean;
  if (inv_out) *inv_out = inv;
}

enum class Form { kOnnxLayerNorm, kOnnxRms, kContrib, kContribSimplified, kSkip, kSkipSimplified };

Form form_of(const std::string& op, const std::string& domain) {
  bool ms = domain == "com.microsoft";
  if (op == "RMSNormalization") return Form::kOnnxRms;
  if (op == "SimplifiedLayerNormalization") return Form::kContribSimplified;
  if (op == "SkipLayerNormalization") return Form::kSkip;
  if (op == "SkipSimplifiedLayerNormalization") return Form::kSkipSimplified;
  return ms ? Form::kContrib : Form::kOnnxLayerNorm;
}

class FastLayerNorm : public rt::OpKernel {
 public:
  explicit FastLayerNorm(const rt::KernelInfo& info)
      : reference_(make_reference_kernel(info)),
        form_(form_of(info.op_type(), info.node().domain)),
        axis_(info.get_int("axis", -1)),
        stash_(info.get_int("stash_type", 1)) {
    skip_ = form_ == Form::kSkip || form_ == Form::kSkipSimplified;
    simplified_ =
        form_ == Form::kOnnxRms || form_ == Form::kContribSimplified || form_ == Form::kSkipSimplified;
    // The skip forms default to BERT's 1e-12; the others to 1e-5 (the schemas' defaults).
    eps_ = info.get_float("epsilon", skip_ ? 1e-12f : 1e-5f);
  }

  // Every input float (x, skip, scale, bias) and x of known rank 1 or more.
  static bool supports(const rt::KernelInfo& info) {
    return inputs_float(info, {0, 1, 2, 3, 4}) && inferred_rank(info, 0) >= 1;
  }

  void compute(rt::KernelContext& ctx) const override {
    if (!run(ctx)) {
      if (!reference_) ctx.fail("no reference kernel");
      reference_->compute(ctx);
    }
  }

 private:
  // A per-feature parameter of exactly h values; for ai.onnx, a shape equal to the normalised axes after
  // leading ones (the reference broadcasts other shapes; those go to it).
  bool param(const rt::KernelContext& ctx, size_t i, const rt::Shape& norm, int64_t h,
             const float** p) const {
    const rt::Tensor* t = ctx.optional_input(i);
    if (!t) return true;
    if (t->numel() != h) return false;
    if (form_ == Form::kOnnxLayerNorm || form_ == Form::kOnnxRms) {
      const rt::Shape& s = t->shape();
      if (s.size() > norm.size()) return false;
      for (size_t k = 0; k < s.size(); ++k)
        if (s[s.size() - 1 - k] != norm[norm.size() - 1 - k]) return false;
    }
    *p = t->data<float>();
    return true;
  }

  // False: the reference kernel takes the node.
  bool run(rt::KernelContext& ctx) const {
    const rt::Tensor& x = ctx.input(0);
    if (x.rank() < 1 || x.numel() == 0) return false;
    const int64_t rank = x.rank();
    int64_t axis = skip_ ? rank - 1 : (axis_ < 0 ? axis_ + rank : axis_);
    if (axis < 0 || axis >= rank) return false;
    const rt::Shape norm(x.shape().begin() + axis, x.shape().end());
    int64_t h = 1;
    for (int64_t d : norm) h *= d;
    if (h == 0) return false;
    const int64_t rows = x.numel() / h;

    RowArgs a{};
    a.h = h;
    a.eps = eps_;
    a.simplified = simplified_;
    const rt::Tensor* skip = nullptr;
    int64_t skip_rows = 0;
    size_t gamma_i = 1, beta_i = SIZE_MAX, bias_i = SIZE_MAX;
    switch (form_) {
      case Form::kOnnxLayerNorm:
      case Form::kContrib:
        beta_i = 2;
        break;
      case Form::kOnnxRms:
      case Form::kContribSimplified:
        break;
      case Form::kSkip:
        gamma_i = 2, beta_i = 3, bias_i = 4;
        break;
      case Form::kSkipSimplified:
        gamma_i = 2, bias_i = 3;
        break;
    }
    if (skip_) {
      skip = &ctx.input(1);
      // skip is whole rows repeated over the leading axes ((S, H) or (1, S, H) for (B, S, H)).
      if (skip->rank() < 1 || skip->dim(-1) != h || skip->numel() == 0 || x.numel() % skip->numel() != 0)
        return false;
      skip_rows = skip->numel() / h;
    }
    if (!ctx.optional_input(gamma_i) && form_ != Form::kSkip && form_ != Form::kSkipSimplified) {
      // Scale is required by every schema but the reference reports its absence.
      return false;
    }
    if (!param(ctx, gamma_i, norm, h, &a.gamma)) return false;
    if (beta_i != SIZE_MAX && !param(ctx, beta_i, norm, h, &a.beta)) return false;
    if (bias_i != SIZE_MAX && !param(ctx, bias_i, norm, h, &a.bias)) return false;

    // Statistics outputs: ai.onnx and contrib LayerNormalization give (Mean, InvStdDev) from output 1 in
    // stash_type, the simplified contrib form only InvStdDev at 1, RMSNormalization none; the skip forms
    // (mean, inv_std_var) at 1 and 2 in float and the sum at 3.
    size_t mean_i = SIZE_MAX, inv_i = SIZE_MAX;
    switch (form_) {
      case Form::kOnnxLayerNorm:
      case Form::kContrib:
        mean_i = 1, inv_i = 2;
        break;
      case Form::kContribSimplified:
        inv_i = 1;
        break;
      case Form::kSkip:
      case Form::kSkipSimplified:
        mean_i = 1, inv_i = 2;
        break;
      case Form::kOnnxRms:
        break;
    }
    auto wanted = [&](size_t i) { return i != SIZE_MAX && i < ctx.output_count() && ctx.wants_output(i); };
    bool want_mean = wanted(mean_i), want_inv = wanted(inv_i);
    if ((want_mean || want_inv) && !skip_ && stash_ != static_cast<int64_t>(ir::DataType::kFloat))
      return false;
    // Statistics of the simplified skip form: the reference writes its mean output as 0.
    rt::Shape stat_shape = x.shape();
    for (size_t k = static_cast<size_t>(axis); k < stat_shape.size(); ++k) stat_shape[k] = 1;

    a.y = ctx.output_uninitialized(0, ir::DataType::kFloat, x.shape()).data<float>();
    float* mean = want_mean ? ctx.output_uninitialized(mean_i, ir::DataType::kFloat, stat_shape).data<float>()
                            : nullptr;
    float* inv =
        want_inv ? ctx.output_uninitialized(inv_i, ir::DataType::kFloat, stat_shape).data<float>() : nullptr;
    float* sum = nullptr;
    if (skip_ && wanted(3)) sum = ctx.output_uninitialized(3, ir::DataType::kFloat, x.shape()).data<float>();

    const float* px = x.data<float>();
    const float* ps = skip ? skip->data<float>() : nullptr;
    float* py = a.y;
    // About 4K elements a chunk, so that BERT's [128, 768] rows spread over 16 threads: every thread of
    // the pool joins the parallel region anyway, so fewer chunks than threads only leave some idle.
    const int64_t grain = std::max<int64_t>(1, 4096 / h);
    ctx.threads().parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
      RowArgs ra = a;
      for (int64_t r = r0; r < r1; ++r) {
        ra.x = px + r * h;
        ra.y = py + r * h;
        ra.skip = ps ? ps + (r % skip_rows) * h : nullptr;
        ra.sum = sum ? sum + r * h : nullptr;
        norm_row(ra, mean ? mean + r : nullptr, inv ? inv + r : nullptr);
      }
    });
    return true;
  }

  rt::KernelPtr reference_;
  Form form_;
  int64_t axis_;
  int64_t stash_;
  float eps_;
  bool skip_ = false, simplified_ = false;
};

}  // namespace
}  // namespace tessera::cpu

TESSERA_REGISTER_KERNELS(cpu_dnnl_layer_norm) {
  using tessera::cpu::dnnl_kernel;
  using tessera::cpu::FastLayerNorm;
  reg.add(dnnl_kernel<FastLayerNorm>("LayerNormalization"));
  reg.add(dnnl_kernel<FastLayerNorm>("RMSNormalization"));
  for (const char* op : {"LayerNormalization", "SimplifiedLayerNormalization", "SkipLayerNormalization",
                         "SkipSimplifiedLayerNormalization"})
    reg.add(dnnl_kernel<FastLayerNorm>(op, "com.microsoft"));
}
