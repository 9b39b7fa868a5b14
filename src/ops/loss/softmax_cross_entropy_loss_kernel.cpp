// Reference kernel of SoftmaxCrossEntropyLoss: log_prob = log(softmax(scores)) over the class axis 1,
// then the negative log-likelihood of the labels (weights, ignore_index, reduction as in
// NegativeLogLikelihoodLoss). The optional second output returns log_prob.
#include <cmath>

#include "ops/loss/loss_kernel_util.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;

void softmax_cross_entropy(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  const ClassLossDims d = check_class_loss(ctx, "scores", "labels");
  std::vector<double> logp = float_values(x, "SoftmaxCrossEntropyLoss");
  for (int64_t n = 0; n < d.batch; ++n) {
    for (int64_t p = 0; p < d.positions; ++p) {
      const int64_t base = n * d.classes * d.positions + p;
      auto at = [&](int64_t c) -> double& { return logp[static_cast<size_t>(base + c * d.positions)]; };
      double mx = -INFINITY;
      for (int64_t c = 0; c < d.classes; ++c) mx = std::max(mx, at(c));
      double sum = 0;
      for (int64_t c = 0; c < d.classes; ++c) sum += std::exp(at(c) - mx);
      const double lse = mx + std::log(sum);
      for (int64_t c = 0; c < d.classes; ++c) at(c) -= lse;
    }
  }
  nll_from_log_prob(ctx, d, logp, x.dtype());
  if (ctx.output_count() > 1 && ctx.wants_output(1)) {
    rt::Tensor& lp = ctx.output(1, x.dtype(), x.shape());
    rt::dispatch(rt::FloatTypes{}, x.dtype(), "SoftmaxCrossEntropyLoss", [&]<class T>() {
      T* o = lp.data<T>();
      for (size_t k = 0; k < logp.size(); ++k) store_d(o, static_cast<int64_t>(k), logp[k]);
    });
  }
}

}  // namespace

TESSERA_REGISTER_KERNELS(loss_softmax_cross_entropy_loss) {
  reg.add(tessera::rt::KernelDef::fn("SoftmaxCrossEntropyLoss", softmax_cross_entropy));
}
