// The CUDA backend's NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (log-softmax over the classes,
// then the same loss; its log_prob output is the log-softmax itself). The target is read in host memory,
// where each value is checked against [0, C) and ignore_index (a clear error naming the position, as the
// reference gives), then copied to the device as int64 for the kernel.
#include <fmt/format.h>

#include "backends/cuda/kernel_util.h"
#include "backends/cuda/reduce_util.h"
#include "backends/cuda/softmax_loss_ops.h"
#include "backends/cuda/softmax_ops.h"

namespace tessera::cuda {

namespace {

class NllKernel : public rt::OpKernel {
 public:
  NllKernel(const rt::KernelInfo& info, bool softmax) : softmax_(softmax) {
    p_.has_ignore = info.has_attr("ignore_index");
    if (p_.has_ignore) p_.ignore = info.get_int("ignore_index");
    const std::string r = info.get_string("reduction", "mean");
    p_.reduction = r == "none"  ? LossReduction::kNone
                   : r == "sum" ? LossReduction::kSum
                                : LossReduction::kMean;
  }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    NllParams p = p_;
    check_shapes(ctx, x, ctx.input(1), p);
    if (!softmax_) return run(ctx, x, p);
    // SoftmaxCrossEntropyLoss: log-softmax over the classes (into the log_prob output when it is
    // wanted), then the loss of those log-probabilities.
    rt::Tensor scratch;
    rt::Tensor* logp = nullptr;
    if (ctx.output_count() > 1 && ctx.wants_output(1)) {
      logp = &ctx.output_uninitialized(1, x.dtype(), x.shape());
    } else {
      scratch = ctx.scratch_uninitialized(x.dtype(), x.shape());
      logp = &scratch;
    }
    launch_softmax(SoftmaxKind::kLogSoftmax, *elem_type(x.dtype()), x.raw(), logp->raw(),
                   RowView{p.batch, p.classes, p.positions}, native(ctx.stream()));
    check_launch(ctx);
    run(ctx, *logp, p);
  }

 private:
  // The loss of log-probabilities `logp` (laid out as input 0) into output 0.
  void run(rt::KernelContext& ctx, const rt::Tensor& logp, const NllParams& p) const {
    const rt::Tensor& target = ctx.input(1);
    std::vector<int64_t> t = target.to_int64_vector();
    for (size_t i = 0; i < t.size(); ++i) {
      if (p.has_ignore && t[i] == p.ignore) continue;
      if (t[i] < 0 || t[i] >= p.classes)
        ctx.fail(fmt::format("target value {} at position {} is outside [0, {}) and is not ignore_index",
                             t[i], i, p.classes));
    }
    rt::Tensor dev_target = ctx.scratch_uninitialized(rt::DataType::kInt64, target.shape());
    if (!t.empty())
      check(cudaMemcpyAsync(dev_target.raw(), t.data(), t.size() * sizeof(int64_t), cudaMemcpyHostToDevice,
                            native(ctx.stream())),
            ctx.info().op_type().c_str());
    const rt::Tensor* weight = ctx.optional_input(2);
    rt::Tensor& out = p.reduction == LossReduction::kNone
                          ? ctx.output_uninitialized(0, logp.dtype(), target.shape())
                          : ctx.output_uninitialized(0, logp.dtype(), {});
    launch_nll(*elem_type(logp.dtype()), logp.raw(), static_cast<const int64_t*>(dev_target.raw()),
               weight ? weight->raw() : nullptr, out.raw(), p, native(ctx.stream()));
    check_launch(ctx);
  }

  static void check_shapes(rt::KernelContext& ctx, const rt::Tensor& x, const rt::Tensor& target,
                           NllParams& p) {
    if (x.rank() < 2)
      ctx.fail(fmt::format("input 'input' must be [N, C, d1, ...] (rank 2 or more), got {}",
                           rt::shape_str(x.shape())));
    bool ok = target.rank() + 1 == x.rank() && target.dim(0) == x.dim(0);
    for (int k = 1; ok && k < target.rank(); ++k) ok = target.dim(k) == x.dim(k + 1);
    if (!ok)
      ctx.fail(fmt::format("'target' {} does not match 'input' {}: it must be [N, d1, ...]",
                           rt::shape_str(target.shape()), rt::shape_str(x.shape())));
    p.batch = x.dim(0);
    p.classes = x.dim(1);
    p.positions = 1;
    for (int k = 2; k < x.rank(); ++k) p.positions *= x.dim(k);
    if (const rt::Tensor* w = ctx.optional_input(2); w && (w->rank() != 1 || w->dim(0) != p.classes))
      ctx.fail(
          fmt::format("the class weights must be [C] = [{}], got {}", p.classes, rt::shape_str(w->shape())));
  }

  bool softmax_;
  NllParams p_;
};

bool nll_supported(const rt::KernelInfo& info) {
  if (!all_tensors(info) || !info.has_input(0) || !info.has_input(1)) return false;
  if (!float_like_input0(info, 2, 2)) return false;
  const rt::DataType t = info.input_dtype(1);
  if (t != rt::DataType::kInt32 && t != rt::DataType::kInt64) return false;
  const std::string r = info.get_string("reduction", "mean");
  return r == "none" || r == "sum" || r == "mean";
}

}  // namespace

void register_softmax_loss_kernels(KernelTable& t) {
  for (auto [name, softmax] :
       {std::pair{"NegativeLogLikelihoodLoss", false}, std::pair{"SoftmaxCrossEntropyLoss", true}}) {
    t.add(cuda_def(name, nll_supported,
                   [softmax](const rt::KernelInfo& info) -> rt::KernelPtr {
                     return std::make_unique<NllKernel>(info, softmax);
                   }),
          HostIo{{1}, {}});
  }
}

}  // namespace tessera::cuda
