// Reference kernel of Bernoulli: each output element is 1 with the probability its input element
// gives, else 0, in type 'dtype' (the input's type without it). Probabilities outside [0, 1] (or NaN)
// are an error. See random_kernel_util.h on seeds.
#include "ops/random/random_kernel_util.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;

void bernoulli(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  const rt::DataType dt =
      ctx.info().has_attr("dtype") ? static_cast<rt::DataType>(ctx.info().get_int("dtype")) : x.dtype();
  std::mt19937 gen = random_engine(ctx.info());
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> p = float_values(x, "Bernoulli");
  rt::Tensor& y = ctx.output(0, dt, x.shape());
  rt::dispatch(rt::NumericBoolTypes{}, dt, "Bernoulli output", [&]<class T>() {
    T* out = y.data<T>();
    for (size_t i = 0; i < p.size(); ++i) {
      if (!(p[i] >= 0 && p[i] <= 1))
        ctx.fail(fmt::format("input probability {} at position {} is outside [0, 1]", p[i], i));
      const bool one = uniform(gen) < p[i];
      if constexpr (std::is_same_v<T, bool>)
        out[i] = one;
      else
        store_d(out, static_cast<int64_t>(i), one ? 1.0 : 0.0);
    }
  });
}

}  // namespace

TESSERA_REGISTER_KERNELS(random_bernoulli) {
  reg.add(tessera::rt::KernelDef::fn("Bernoulli", bernoulli));
}
