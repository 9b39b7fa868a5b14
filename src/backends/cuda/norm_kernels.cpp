// The CUDA backend's normalisations: LayerNormalization (with its optional Mean/InvStdDev outputs),
// RMSNormalization, InstanceNormalization, GroupNormalization (opset 18: scale and bias per group; 21:
// per channel) and BatchNormalization in inference mode. Statistics are float32 (two passes), which
// is what stash_type 1 asks; other stash types keep the node on the CPU when it wants the statistics.
// Also LpNormalization and MeanVarianceNormalization, whose statistics run over any set of axes.
#include <fmt/format.h>

#include "backends/cuda/kernel_util.h"
#include "backends/cuda/norm_ops.h"
#include "backends/cuda/reduce_util.h"

namespace tessera::cuda {

namespace {

int64_t product(const rt::Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= s[i];
  return n;
}

const void* raw_or_null(const rt::Tensor* t) {
  return t ? t->raw() : nullptr;
}

// Input i's inferred shape equals X's dims from `axis` on (so it needs no broadcasting).
bool matches_trailing(const rt::KernelInfo& info, size_t i, int64_t axis) {
  const ir::Type& x = info.input_type(0);
  const ir::Type& p = info.input_type(i);
  if (!x.has_shape() || !p.has_shape()) return false;
  const auto rank = static_cast<int64_t>(x.shape->size());
  if (axis < -rank || axis >= rank) return false;
  const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  if (p.shape->size() != x.shape->size() - a) return false;
  for (size_t k = 0; k < p.shape->size(); ++k) {
    const ir::Dim &pd = (*p.shape)[k], &xd = (*x.shape)[a + k];
    if (pd.is_unknown() || !(pd == xd)) return false;
  }
  return true;
}

// LayerNormalization (ai.onnx 17) and RMSNormalization (ai.onnx 23).
class LayerNormKernel : public rt::OpKernel {
 public:
  LayerNormKernel(const rt::KernelInfo& info, bool rms)
      : rms_(rms), axis_(info.get_int("axis", -1)), eps_(info.get_float("epsilon", 1e-5f)) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Shape& s = x.shape();
    const auto a = static_cast<size_t>(normalized_axis(axis_, x.rank()));
    NormParams p;
    p.rows = product(s, 0, a);
    p.n = product(s, a, s.size());
    p.eps = eps_;
    p.rms = rms_;
    p.param_div = 1;
    const rt::Tensor& scale = ctx.input(1);
    const rt::Tensor* bias = rms_ ? nullptr : ctx.optional_input(2);
    for (const rt::Tensor* t : {&scale, bias})
      if (t && t->numel() != p.n)
        ctx.fail(fmt::format("{} {} does not match the normalized axes {} of X", t == &scale ? "Scale" : "B",
                             rt::shape_str(t->shape()),
                             rt::shape_str(rt::Shape(s.begin() + static_cast<std::ptrdiff_t>(a), s.end()))));
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), s);
    float* stats[2] = {nullptr, nullptr};
    rt::Shape stat_shape(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(a));
    stat_shape.resize(s.size(), 1);
    for (size_t o = 1; o <= 2 && !rms_; ++o)
      if (o < ctx.output_count() && ctx.wants_output(o))
        stats[o - 1] =
            static_cast<float*>(ctx.output_uninitialized(o, rt::DataType::kFloat, stat_shape).raw());
    launch_row_norm(*elem_type(x.dtype()), x.raw(), scale.raw(), raw_or_null(bias), y.raw(), stats[0],
                    stats[1], p, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  bool rms_;
  int64_t axis_;
  float eps_;
};

bool layer_norm_supported(const rt::KernelInfo& info, bool rms) {
  if (!all_tensors(info) || !rank_known(info, 0, 1) || !float_like_input0(info, 1, rms ? 1 : 2)) return false;
  const int64_t axis = info.get_int("axis", -1);
  if (!info.has_input(1) || !matches_trailing(info, 1, axis)) return false;
  if (!rms && info.has_input(2) && !matches_trailing(info, 2, axis)) return false;
  if (rms) return info.output_count() == 1;
  const bool stats = info.has_output(1) || info.has_output(2);
  return !stats || info.get_int("stash_type", 1) == static_cast<int64_t>(rt::DataType::kFloat);
}

// InstanceNormalization and GroupNormalization: rows of (sample, group) over channels and positions.
class GroupNormKernel : public rt::OpKernel {
 public:
  GroupNormKernel(const rt::KernelInfo& info, bool instance)
      : instance_(instance),
        per_group_(!instance && info.since_version() < 21),
        groups_(instance ? 0 : info.get_int("num_groups")),
        eps_(info.get_float("epsilon", 1e-5f)) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Shape& s = x.shape();
    if (s.size() < 2)
      ctx.fail(fmt::format("input 'X' must be [N, C, ...] (rank 2 or more), got {}", rt::shape_str(s)));
    const int64_t channels = s[1], spatial = product(s, 2, s.size());
    const int64_t groups = instance_ ? channels : groups_;
    if (groups < 1 || channels % groups != 0)
      ctx.fail(fmt::format("X {} has {} channels, which num_groups {} does not divide", rt::shape_str(s),
                           channels, groups));
    NormParams p;
    p.rows = s[0] * groups;
    p.n = channels / groups * spatial;
    p.eps = eps_;
    p.param_rows = groups;
    p.param_step = per_group_ || instance_ ? 1 : channels / groups;
    p.param_div = per_group_ || instance_ ? std::max<int64_t>(p.n, 1) : std::max<int64_t>(spatial, 1);
    const int64_t want = per_group_ ? groups : channels;
    const rt::Tensor& scale = ctx.input(1);
    const rt::Tensor& bias = ctx.input(2);
    for (const rt::Tensor* t : {&scale, &bias})
      if (t->numel() != want)
        ctx.fail(fmt::format("input '{}' has {} values; X {} needs {}", t == &scale ? "scale" : "B",
                             t->numel(), rt::shape_str(s), want));
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), s);
    launch_row_norm(*elem_type(x.dtype()), x.raw(), scale.raw(), bias.raw(), y.raw(), nullptr, nullptr, p,
                    native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  bool instance_, per_group_;
  int64_t groups_;
  float eps_;
};

bool group_norm_supported(const rt::KernelInfo& info) {
  return all_tensors(info) && info.input_count() == 3 && same_float_inputs(info, 3) &&
         rank_known(info, 0, 2) && info.output_count() == 1;
}

class BatchNormKernel : public rt::OpKernel {
 public:
  explicit BatchNormKernel(const rt::KernelInfo& info) : eps_(info.get_float("epsilon", 1e-5f)) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const rt::Shape& s = x.shape();
    if (s.size() < 2)
      ctx.fail(fmt::format("input 'X' must be [N, C, ...] (rank 2 or more), got {}", rt::shape_str(s)));
    const int64_t channels = s[1];
    const char* names[] = {"X", "scale", "B", "mean", "var"};
    for (size_t i = 1; i < 5; ++i)
      if (ctx.input(i).numel() != channels)
        ctx.fail(fmt::format("input {} ('{}') has {} values but X {} has {} channels", i, names[i],
                             ctx.input(i).numel(), rt::shape_str(s), channels));
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), s);
    launch_batch_norm(*elem_type(x.dtype()), x.raw(), ctx.input(1).raw(), ctx.input(2).raw(),
                      ctx.input(3).raw(), ctx.input(4).raw(), y.raw(), x.numel(), channels,
                      product(s, 2, s.size()), eps_, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  float eps_;
};

// Inference only: training_mode 0 (opset 14 on), no statistics outputs (before 14 they meant training),
// the per-channel form (spatial 1, before opset 9).
bool batch_norm_supported(const rt::KernelInfo& info) {
  if (!all_tensors(info) || !same_float_inputs(info, 5) || !rank_known(info, 0, 2)) return false;
  if (info.get_int("training_mode", 0) != 0 || info.get_int("spatial", 1) != 1) return false;
  for (size_t o = 1; o < info.output_count(); ++o)
    if (info.has_output(o)) return false;
  return true;
}

// LpNormalization along one axis (p 1 or 2) and MeanVarianceNormalization over a set of axes.
class GroupStatNormKernel : public rt::OpKernel {
 public:
  GroupStatNormKernel(const rt::KernelInfo& info, bool lp) : lp_(lp) {
    if (lp) {
      kind_ = info.get_int("p", 2) == 1 ? GroupNormKind::kL1 : GroupNormKind::kL2;
      axes_ = {info.get_int("axis", -1)};
    } else {
      kind_ = GroupNormKind::kMeanVariance;
      axes_ = info.get_ints("axes", {0, 2, 3});
    }
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const auto rank = static_cast<int64_t>(x.rank());
    if (rank > kMaxRank)
      ctx.fail(fmt::format("the CUDA kernel normalises up to rank {}, got {}", kMaxRank, rank));
    std::vector<bool> mask(static_cast<size_t>(rank), false);
    for (int64_t a : axes_) {
      const auto k = static_cast<size_t>(normalized_axis(a, rank, lp_ ? "axis" : "axes value"));
      if (mask[k]) ctx.fail(fmt::format("axis {} is listed twice in 'axes'", a));
      mask[k] = true;
    }
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), x.shape());
    launch_group_stat_norm(kind_, *elem_type(x.dtype()), x.raw(), y.raw(), make_reduce_geom(x.shape(), mask),
                           native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  bool lp_;
  GroupNormKind kind_ = GroupNormKind::kL2;
  std::vector<int64_t> axes_;
};

bool group_stat_norm_supported(const rt::KernelInfo& info, bool lp) {
  if (!all_tensors(info) || !same_float_inputs(info, 1) || !rank_known(info, 0, 1)) return false;
  if (!lp) return true;
  const int64_t p = info.get_int("p", 2);
  return p == 1 || p == 2;
}

// LRN across channels of [N, C, spatial...].
void lrn(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  if (x.rank() < 2)
    ctx.fail(fmt::format("input 'X' must be [N, C, ...] (rank 2 or more), got {}", rt::shape_str(x.shape())));
  const int64_t size = ctx.info().get_int("size");
  if (size < 1) ctx.fail(fmt::format("attribute 'size' is {}; it must be at least 1", size));
  int64_t spatial = 1;
  for (int d = 2; d < x.rank(); ++d) spatial *= x.dim(d);
  rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), x.shape());
  launch_lrn(*elem_type(x.dtype()), x.raw(), y.raw(), x.dim(0), x.dim(1), spatial, size,
             ctx.info().get_float("alpha", 1e-4f), ctx.info().get_float("beta", 0.75f),
             ctx.info().get_float("bias", 1.0f), native(ctx.stream()));
  check_launch(ctx);
}

}  // namespace

void register_norm_kernels(KernelTable& t) {
  t.add(cuda_def(
      "LRN",
      [](const rt::KernelInfo& i) { return all_tensors(i) && same_float_inputs(i, 1) && i.has_attr("size"); },
      [](const rt::KernelInfo&) -> rt::KernelPtr { return std::make_unique<rt::FnKernel>(lrn); }));
  for (auto [name, lp] :
       {std::pair{"LpNormalization", true}, std::pair{"MeanVarianceNormalization", false}}) {
    t.add(cuda_def(
        name, [lp](const rt::KernelInfo& i) { return group_stat_norm_supported(i, lp); },
        [lp](const rt::KernelInfo& info) -> rt::KernelPtr {
          return std::make_unique<GroupStatNormKernel>(info, lp);
        }));
  }
  for (auto [name, rms, since] :
       {std::tuple{"LayerNormalization", false, 17}, std::tuple{"RMSNormalization", true, 23}}) {
    t.add(cuda_def(
        name, [rms](const rt::KernelInfo& i) { return layer_norm_supported(i, rms); },
        [rms](const rt::KernelInfo& info) -> rt::KernelPtr {
          return std::make_unique<LayerNormKernel>(info, rms);
        },
        since));
  }
  for (auto [name, instance] :
       {std::pair{"InstanceNormalization", true}, std::pair{"GroupNormalization", false}}) {
    t.add(cuda_def(name, group_norm_supported, [instance](const rt::KernelInfo& info) -> rt::KernelPtr {
      return std::make_unique<GroupNormKernel>(info, instance);
    }));
  }
  t.add(cuda_def(
      "BatchNormalization", batch_norm_supported,
      [](const rt::KernelInfo& info) -> rt::KernelPtr { return std::make_unique<BatchNormKernel>(info); },
      6));
}

}  // namespace tessera::cuda
