// Reference kernels of RandomNormalLike and RandomUniformLike: samples in a tensor of the input's shape
// and of type 'dtype' (the input's type without it); the input's values are not read.
#include "ops/random/random_kernel_util.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;

template <bool kNormal>
void generate_like(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  const rt::DataType dt = random_float_dtype(ctx, x.dtype());
  fill_distribution(ctx, ctx.output(0, dt, x.shape()), kNormal);
}

}  // namespace

TESSERA_REGISTER_KERNELS(random_random_like) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("RandomNormalLike", generate_like<true>));
  reg.add(KernelDef::fn("RandomUniformLike", generate_like<false>));
}
