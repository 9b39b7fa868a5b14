// Reference kernels of ONNX Runtime's contrib layer normalisations (com.microsoft 1):
//   LayerNormalization             y = (x - mean) / sqrt(var + eps) * scale + bias over the axes from `axis`
//   SimplifiedLayerNormalization   y = x / sqrt(mean(x^2) + eps) * scale (RMSNorm)
//   SkipLayerNormalization         LayerNormalization of input + skip (+ bias) over the last axis
//   SkipSimplifiedLayerNormalization   the same with RMS normalisation
// Statistics are accumulated in float (double for double tensors), as ONNX Runtime does. The skip forms
// can also return the sum they normalised (output 3), which the next residual block reads.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "runtime/dispatch.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

using tessera::rt::DataType;
using tessera::rt::KernelContext;
using tessera::rt::Shape;
using tessera::rt::Tensor;
namespace rt = tessera::rt;

// A per-feature parameter read along the normalised elements: one value per element, or one for all.
template <class T>
struct Param {
  const T* data = nullptr;
  int64_t size = 0;
  template <class A>
  A at(int64_t j, A fallback) const {
    if (!data) return fallback;
    return static_cast<A>(data[size == 1 ? 0 : j]);
  }
};

template <class T>
Param<T> param(KernelContext& ctx, size_t i, int64_t h, const char* what) {
  const Tensor* t = ctx.optional_input(i);
  if (!t) return {};
  if (t->dtype() != ctx.input(0).dtype())
    ctx.fail(fmt::format("{} must have the input's element type (mixed precision is not supported)", what));
  if (t->numel() != h && t->numel() != 1)
    ctx.fail(fmt::format("{} has {} elements; the normalised dimensions have {}", what, t->numel(), h));
  return {t->data<T>(), t->numel()};
}

// Where one normalisation writes: y (and the optional statistics and sum outputs).
template <class T, class Acc>
struct Sinks {
  T* y = nullptr;
  Acc* mean = nullptr;  // per row; nullptr when not wanted
  Acc* inv_std = nullptr;
  T* sum = nullptr;  // skip forms: input + skip + bias
};

// Normalises `rows` rows of `h` values; `load(r, buf)` fills buf with row r as Acc values.
template <class T, class Acc, class Load>
void normalize(KernelContext& ctx, int64_t rows, int64_t h, float eps, bool simplified, const Param<T>& scale,
               const Param<T>& bias, const Sinks<T, Acc>& out, Load&& load) {
  int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(h, 1));
  ctx.threads().parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
    std::vector<Acc> buf(static_cast<size_t>(h));
    for (int64_t r = r0; r < r1; ++r) {
      load(r, buf);
      Acc mean = 0, sq = 0;
      for (Acc v : buf) mean += v;
      mean = simplified ? Acc(0) : mean / static_cast<Acc>(h);
      for (Acc v : buf) sq += (v - mean) * (v - mean);
      Acc inv = Acc(1) / std::sqrt(sq / static_cast<Acc>(h) + static_cast<Acc>(eps));
      T* y = out.y + r * h;
      for (int64_t j = 0; j < h; ++j) {
        Acc v = (buf[static_cast<size_t>(j)] - mean) * inv * scale.at(j, Acc(1)) + bias.at(j, Acc(0));
        y[j] = static_cast<T>(v);
      }
      if (out.sum)
        for (int64_t j = 0; j < h; ++j) out.sum[r * h + j] = static_cast<T>(buf[static_cast<size_t>(j)]);
      if (out.mean) out.mean[r] = mean;
      if (out.inv_std) out.inv_std[r] = inv;
    }
  });
}

template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// LayerNormalization and SimplifiedLayerNormalization: inputs X, scale (, B); outputs Y and the
// statistics (Mean, InvStdDev / inv_std_var), which have X's shape with the normalised axes set to 1.
class LayerNorm : public rt::OpKernel {
 public:
  LayerNorm(const rt::KernelInfo& info, bool simplified)
      : simplified_(simplified),
        axis_(info.get_int("axis", -1)),
        eps_(info.get_float("epsilon", 1e-5f)),
        stash_(static_cast<DataType>(info.get_int("stash_type", 1))) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    rt::dispatch(rt::FloatTypes{}, x.dtype(), ctx.info().op_type(), [&]<class T>() { run<T>(ctx, x); });
  }

 private:
  template <class T>
  void run(KernelContext& ctx, const Tensor& x) const {
    using Acc = acc_t<T>;
    int64_t axis = axis_ < 0 ? axis_ + x.rank() : axis_;
    if (axis < 0 || axis >= x.rank())
      ctx.fail(fmt::format("axis {} is out of range for rank {}", axis_, x.rank()));
    int64_t h = 1;
    for (int k = static_cast<int>(axis); k < x.rank(); ++k) h *= x.dim(k);
    int64_t rows = h == 0 ? 0 : x.numel() / h;
    Param<T> scale = param<T>(ctx, 1, h, "scale");
    Param<T> bias = simplified_ ? Param<T>{} : param<T>(ctx, 2, h, "B");
    Sinks<T, Acc> out;
    out.y = ctx.output(0, x.dtype(), x.shape()).template data<T>();
    Shape stats = x.shape();
    for (size_t k = static_cast<size_t>(axis); k < stats.size(); ++k) stats[k] = 1;
    size_t first_stat = 1;
    Tensor mean = stat_output(ctx, simplified_ ? SIZE_MAX : first_stat, stats);
    Tensor inv = stat_output(ctx, simplified_ ? first_stat : first_stat + 1, stats);
    std::vector<Acc> mean_tmp, inv_tmp;
    out.mean = stat_ptr<Acc>(mean, rows, mean_tmp);
    out.inv_std = stat_ptr<Acc>(inv, rows, inv_tmp);
    const T* px = x.data<T>();
    normalize<T, Acc>(ctx, rows, h, eps_, simplified_, scale, bias, out,
                      [&](int64_t r, std::vector<Acc>& buf) {
                        for (int64_t j = 0; j < h; ++j)
                          buf[static_cast<size_t>(j)] = static_cast<Acc>(px[r * h + j]);
                      });
    copy_stat(mean, mean_tmp);
    copy_stat(inv, inv_tmp);
  }

  Tensor stat_output(KernelContext& ctx, size_t i, const Shape& shape) const {
    if (i == SIZE_MAX || !ctx.wants_output(i)) return {};
    if (stash_ != DataType::kFloat && stash_ != DataType::kDouble)
      ctx.fail(fmt::format("stash_type {} is not supported (float or double)", ir_name(stash_)));
    return ctx.output(i, stash_, shape);
  }
  static std::string ir_name(DataType t) { return std::string(tessera::ir::dtype_name(t)); }

  // The statistics are computed in Acc and stored in stash_type: straight into the output when they
  // agree, else through a temporary converted afterwards.
  template <class Acc>
  static Acc* stat_ptr(Tensor& t, int64_t rows, std::vector<Acc>& tmp) {
    if (!t.defined()) return nullptr;
    if (t.dtype() == rt::dtype_of<Acc>) return t.data<Acc>();
    tmp.resize(static_cast<size_t>(rows));
    return tmp.data();
  }
  template <class Acc>
  static void copy_stat(Tensor& t, const std::vector<Acc>& tmp) {
    if (!t.defined() || tmp.empty()) return;
    for (size_t r = 0; r < tmp.size(); ++r) {
      if (t.dtype() == DataType::kFloat) t.data<float>()[r] = static_cast<float>(tmp[r]);
      if (t.dtype() == DataType::kDouble) t.data<double>()[r] = static_cast<double>(tmp[r]);
    }
  }

  bool simplified_;
  int64_t axis_;
  float eps_;
  DataType stash_;
};

class ContribLayerNorm : public LayerNorm {
 public:
  explicit ContribLayerNorm(const rt::KernelInfo& info) : LayerNorm(info, false) {}
};
class SimplifiedLayerNorm : public LayerNorm {
 public:
  explicit SimplifiedLayerNorm(const rt::KernelInfo& info) : LayerNorm(info, true) {}
};

// SkipLayerNormalization (input, skip, gamma, beta, bias) and SkipSimplifiedLayerNormalization (input,
// skip, gamma, bias): normalise input + skip + bias over the last axis. skip has input's shape or a
// shape it broadcasts from over the leading axes ((S, H) or (1, S, H) for a (B, S, H) input).
class SkipLayerNorm : public rt::OpKernel {
 public:
  SkipLayerNorm(const rt::KernelInfo& info, bool simplified)
      : simplified_(simplified), eps_(info.get_float("epsilon", 1e-12f)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    rt::dispatch(rt::TypeList<float, rt::Float16, rt::BFloat16, double>{}, x.dtype(), ctx.info().op_type(),
                 [&]<class T>() { run<T>(ctx, x); });
  }

 private:
  template <class T>
  void run(KernelContext& ctx, const Tensor& x) const {
    using Acc = acc_t<T>;
    const Tensor& skip = ctx.input(1);
    if (x.rank() < 1) ctx.fail("input must have rank 1 or more");
    if (skip.dtype() != x.dtype()) ctx.fail("skip must have the input's element type");
    int64_t h = x.dim(-1);
    if (skip.numel() == 0 || x.numel() % std::max<int64_t>(skip.numel(), 1) != 0 || skip.rank() < 1 ||
        skip.dim(-1) != h) {
      ctx.fail(fmt::format("skip {} does not broadcast to the input {}", rt::shape_str(skip.shape()),
                           rt::shape_str(x.shape())));
    }
    int64_t rows = h == 0 ? 0 : x.numel() / h;
    Param<T> gamma = param<T>(ctx, 2, h, "gamma");
    Param<T> beta = simplified_ ? Param<T>{} : param<T>(ctx, 3, h, "beta");
    Param<T> bias = param<T>(ctx, simplified_ ? 3 : 4, h, "bias");
    Sinks<T, Acc> out;
    out.y = ctx.output(0, x.dtype(), x.shape()).template data<T>();
    Shape stats = x.shape();
    stats.back() = 1;
    std::vector<Acc> mean_tmp(static_cast<size_t>(rows)), inv_tmp(static_cast<size_t>(rows));
    out.mean = ctx.wants_output(1) ? mean_tmp.data() : nullptr;
    out.inv_std = ctx.wants_output(2) ? inv_tmp.data() : nullptr;
    if (ctx.wants_output(3)) out.sum = ctx.output(3, x.dtype(), x.shape()).template data<T>();
    const T* px = x.data<T>();
    const T* ps = skip.data<T>();
    int64_t skip_n = skip.numel();
    normalize<T, Acc>(ctx, rows, h, eps_, simplified_, gamma, beta, out,
                      [&](int64_t r, std::vector<Acc>& buf) {
                        for (int64_t j = 0; j < h; ++j) {
                          int64_t i = r * h + j;
                          buf[static_cast<size_t>(j)] =
                              static_cast<Acc>(px[i]) + static_cast<Acc>(ps[i % skip_n]) + bias.at(j, Acc(0));
                        }
                      });
    write_stat(ctx, 1, stats, mean_tmp);
    write_stat(ctx, 2, stats, inv_tmp);
  }

  template <class Acc>
  static void write_stat(KernelContext& ctx, size_t i, const Shape& shape, const std::vector<Acc>& v) {
    if (!ctx.wants_output(i)) return;
    float* p = ctx.output(i, DataType::kFloat, shape).data<float>();
    for (size_t r = 0; r < v.size(); ++r) p[r] = static_cast<float>(v[r]);
  }

  bool simplified_;
  float eps_;
};

class SkipLayerNormFull : public SkipLayerNorm {
 public:
  explicit SkipLayerNormFull(const rt::KernelInfo& info) : SkipLayerNorm(info, false) {}
};
class SkipSimplifiedLayerNorm : public SkipLayerNorm {
 public:
  explicit SkipSimplifiedLayerNorm(const rt::KernelInfo& info) : SkipLayerNorm(info, true) {}
};

}  // namespace

TESSERA_REGISTER_KERNELS(contrib_layer_norm) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::of<ContribLayerNorm>("LayerNormalization").in_domain("com.microsoft"));
  reg.add(KernelDef::of<SimplifiedLayerNorm>("SimplifiedLayerNormalization").in_domain("com.microsoft"));
  reg.add(KernelDef::of<SkipLayerNormFull>("SkipLayerNormalization").in_domain("com.microsoft"));
  reg.add(
      KernelDef::of<SkipSimplifiedLayerNorm>("SkipSimplifiedLayerNormalization").in_domain("com.microsoft"));
}
