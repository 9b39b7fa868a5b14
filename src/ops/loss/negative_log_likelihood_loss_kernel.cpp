// Reference kernel of NegativeLogLikelihoodLoss: loss = -input[n, target, d...] * weight[target], with
// entries equal to ignore_index left out; reduced by none, sum or weighted mean.
#include "ops/loss/loss_kernel_util.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;

void nll_loss(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  const ClassLossDims d = check_class_loss(ctx, "input", "target");
  nll_from_log_prob(ctx, d, float_values(x, "NegativeLogLikelihoodLoss"), x.dtype());
}

}  // namespace

TESSERA_REGISTER_KERNELS(loss_negative_log_likelihood_loss) {
  reg.add(tessera::rt::KernelDef::fn("NegativeLogLikelihoodLoss", nll_loss));
}
