// The CUDA backend's kernels for reductions (Reduce*, ArgMax, ArgMin); register_reduce_kernels also
// registers the softmax, normalisation and TopK families (softmax_kernels.cpp, norm_kernels.cpp,
// reduce_topk_kernels.cpp).
//
// Axes come from the attribute (before opset 13 for ReduceSum, 18 for the others) or from the optional
// second input, which the kernel reads in host memory; an empty set reduces every axis, or none with
// noop_with_empty_axes (each element is then reduced on its own, as the reference does).
#include <fmt/format.h>

#include <array>

#include "backends/cuda/kernel_util.h"
#include "backends/cuda/reduce_util.h"

namespace tessera::cuda {

namespace {

// Reductions the integer types have (the logarithmic and root ones stay on the CPU for them).
bool integer_reduction(ReduceKind k) {
  return k != ReduceKind::kL2 && k != ReduceKind::kLogSum && k != ReduceKind::kLogSumExp;
}

class ReduceKernel : public rt::OpKernel {
 public:
  ReduceKernel(const rt::KernelInfo& info, ReduceKind kind, int input_axes_at)
      : kind_(kind),
        axes_from_input_(info.since_version() >= input_axes_at),
        keepdims_(info.get_int("keepdims", 1) != 0),
        noop_if_empty_(axes_from_input_ && info.get_int("noop_with_empty_axes", 0) != 0) {
    if (!axes_from_input_) attr_axes_ = info.get_ints("axes", {});
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const auto rank = static_cast<int64_t>(x.rank());
    if (rank > kMaxRank)
      ctx.fail(fmt::format("the CUDA kernel reduces up to rank {}, got {}", kMaxRank, rank));
    bool noop = false;
    std::vector<bool> mask = reduce_mask(ctx, rank, noop);
    rt::Shape out;
    for (size_t i = 0; i < mask.size(); ++i) {
      if (!mask[i])
        out.push_back(x.shape()[i]);
      else if (keepdims_ || noop)
        out.push_back(1);
    }
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), out);
    launch_reduce(kind_, *num_type(x.dtype()), x.raw(), y.raw(), make_reduce_geom(x.shape(), mask),
                  native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  std::vector<bool> reduce_mask(rt::KernelContext& ctx, int64_t rank, bool& noop) const {
    std::vector<int64_t> axes = attr_axes_;
    if (axes_from_input_) {
      if (const rt::Tensor* a = ctx.optional_input(1)) {
        if (a->rank() > 1)
          ctx.fail(fmt::format("input 'axes' must be 1-D, got shape {}", rt::shape_str(a->shape())));
        axes = a->to_int64_vector();
      }
    }
    noop = axes.empty() && noop_if_empty_;
    if (axes.empty()) return std::vector<bool>(static_cast<size_t>(rank), !noop);
    std::vector<bool> mask(static_cast<size_t>(rank), false);
    for (int64_t a : axes) {
      const auto k = static_cast<size_t>(normalized_axis(a, rank, "axes value"));
      if (mask[k]) ctx.fail(fmt::format("axis {} is listed twice in 'axes'", a));
      mask[k] = true;
    }
    return mask;
  }

  ReduceKind kind_;
  bool axes_from_input_, keepdims_, noop_if_empty_;
  std::vector<int64_t> attr_axes_;
};

class ArgKernel : public rt::OpKernel {
 public:
  ArgKernel(const rt::KernelInfo& info, bool max)
      : max_(max),
        last_(info.since_version() >= 12 && info.get_int("select_last_index", 0) != 0),
        keepdims_(info.get_int("keepdims", 1) != 0),
        axis_(info.get_int("axis", 0)) {}

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const auto rank = static_cast<int64_t>(x.rank());
    const auto axis = static_cast<size_t>(normalized_axis(axis_, rank));
    std::vector<bool> mask(static_cast<size_t>(rank), false);
    mask[axis] = true;
    rt::Shape out = x.shape();
    if (keepdims_)
      out[axis] = 1;
    else
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(axis));
    if (x.shape()[axis] == 0 && rt::shape_numel(out) > 0)
      ctx.fail(fmt::format("{} along axis {} of size 0 has no index to return", ctx.info().op_type(), axis_));
    rt::Tensor& y = ctx.output_uninitialized(0, rt::DataType::kInt64, out);
    launch_arg_reduce(max_, last_, *num_type(x.dtype()), x.raw(), static_cast<int64_t*>(y.raw()),
                      make_reduce_geom(x.shape(), mask), native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  bool max_, last_, keepdims_;
  int64_t axis_;
};

bool reduce_supported(const rt::KernelInfo& info, ReduceKind kind) {
  if (!all_tensors(info) || !info.has_input(0) || !rank_fits(info, 0, 0)) return false;
  auto t = num_type(info.input_dtype(0));
  if (!t) return false;
  if ((*t == NumType::kInt32 || *t == NumType::kInt64) && !integer_reduction(kind)) return false;
  if (*t == NumType::kBool && kind != ReduceKind::kMax && kind != ReduceKind::kMin) return false;
  return !info.has_input(1) || info.input_dtype(1) == rt::DataType::kInt64;
}

bool arg_supported(const rt::KernelInfo& info) {
  return all_tensors(info) && info.input_count() == 1 && rank_known(info, 0, 1) &&
         common_num_type(info.input_dtype(0));
}

struct ReduceOp {
  const char* name;
  ReduceKind kind;
  int input_axes_at;  // the version from which the axes are an input
};

}  // namespace

void register_reduce_kernels(KernelTable& t) {
  constexpr std::array<ReduceOp, 10> kOps{{{"ReduceSum", ReduceKind::kSum, 13},
                                           {"ReduceMean", ReduceKind::kMean, 18},
                                           {"ReduceMax", ReduceKind::kMax, 18},
                                           {"ReduceMin", ReduceKind::kMin, 18},
                                           {"ReduceProd", ReduceKind::kProd, 18},
                                           {"ReduceL1", ReduceKind::kL1, 18},
                                           {"ReduceL2", ReduceKind::kL2, 18},
                                           {"ReduceLogSum", ReduceKind::kLogSum, 18},
                                           {"ReduceLogSumExp", ReduceKind::kLogSumExp, 18},
                                           {"ReduceSumSquare", ReduceKind::kSumSquare, 18}}};
  for (const ReduceOp& op : kOps) {
    t.add(cuda_def(
              op.name, [kind = op.kind](const rt::KernelInfo& i) { return reduce_supported(i, kind); },
              [op](const rt::KernelInfo& info) -> rt::KernelPtr {
                return std::make_unique<ReduceKernel>(info, op.kind, op.input_axes_at);
              }),
          HostIo{{1}, {}});
  }
  for (auto [name, max] : {std::pair{"ArgMax", true}, std::pair{"ArgMin", false}}) {
    t.add(cuda_def(name, arg_supported, [max](const rt::KernelInfo& info) -> rt::KernelPtr {
      return std::make_unique<ArgKernel>(info, max);
    }));
  }
  register_softmax_kernels(t);
  register_norm_kernels(t);
  register_top_k_kernels(t);
  register_norm_contrib_kernels(t);
  register_softmax_loss_kernels(t);
}

}  // namespace tessera::cuda
