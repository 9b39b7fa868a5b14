// Reference kernel of Multinomial: for each row of unnormalised log-probabilities [batch, classes],
// 'sample_size' class indices drawn from softmax(row), as int32 or int64 ('dtype'). See
// random_kernel_util.h on seeds.
#include <cmath>

#include "ops/random/random_kernel_util.h"

namespace {

namespace rt = tessera::rt;
using namespace tessera::ops::kernels;

void multinomial(rt::KernelContext& ctx) {
  const rt::Tensor& x = ctx.input(0);
  if (x.rank() != 2)
    ctx.fail(fmt::format("input must be [batch_size, class_size], got {}", rt::shape_str(x.shape())));
  const int64_t samples = ctx.info().get_int("sample_size", 1);
  if (samples < 1) ctx.fail(fmt::format("attribute 'sample_size' must be at least 1, got {}", samples));
  const auto dt = static_cast<rt::DataType>(ctx.info().get_int("dtype", 6));
  if (dt != rt::DataType::kInt32 && dt != rt::DataType::kInt64)
    ctx.fail(fmt::format("attribute 'dtype' must be int32 or int64, got {}", static_cast<int>(dt)));
  const int64_t batch = x.dim(0), classes = x.dim(1);
  if (classes == 0 && batch > 0) ctx.fail("input has no classes to draw from");
  std::mt19937 gen = random_engine(ctx.info());
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const std::vector<double> logits = float_values(x, "Multinomial");
  rt::Tensor& y = ctx.output(0, dt, {batch, samples});
  std::vector<double> cdf(static_cast<size_t>(classes));
  for (int64_t b = 0; b < batch; ++b) {
    const double* row = logits.data() + b * classes;
    double mx = -INFINITY;
    for (int64_t c = 0; c < classes; ++c) mx = std::max(mx, row[c]);
    double total = 0;
    for (int64_t c = 0; c < classes; ++c) {
      total += std::isinf(mx) && mx < 0 ? 1.0 : std::exp(row[c] - mx);
      cdf[static_cast<size_t>(c)] = total;
    }
    for (int64_t s = 0; s < samples; ++s) {
      const double u = uniform(gen) * total;
      const auto it = std::upper_bound(cdf.begin(), cdf.end(), u);
      const int64_t pick = std::min<int64_t>(it - cdf.begin(), classes - 1);
      if (dt == rt::DataType::kInt32)
        y.data<int32_t>()[b * samples + s] = static_cast<int32_t>(pick);
      else
        y.data<int64_t>()[b * samples + s] = pick;
    }
  }
}

}  // namespace

TESSERA_REGISTER_KERNELS(random_multinomial) {
  reg.add(tessera::rt::KernelDef::fn("Multinomial", multinomial));
}
