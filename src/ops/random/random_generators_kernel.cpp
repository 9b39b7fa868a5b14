// Reference kernels of RandomNormal and RandomUniform: a tensor of attribute 'shape' and type 'dtype'
// filled with samples (see random_kernel_util.h on seeds).
#include "ops/random/random_kernel_util.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;

template <bool kNormal>
void generate(rt::KernelContext& ctx) {
  const rt::DataType dt = random_float_dtype(ctx, rt::DataType::kFloat);
  const std::vector<int64_t> shape = ctx.info().get_ints("shape");
  for (int64_t d : shape)
    if (d < 0) ctx.fail(fmt::format("attribute 'shape' {} has a negative dimension", rt::shape_str(shape)));
  rt::shape_numel(shape);  // throws on overflow
  fill_distribution(ctx, ctx.output(0, dt, shape), kNormal);
}

}  // namespace

TESSERA_REGISTER_KERNELS(random_random_generators) {
  using tessera::rt::KernelDef;
  reg.add(KernelDef::fn("RandomNormal", generate<true>));
  reg.add(KernelDef::fn("RandomUniform", generate<false>));
}
