// Reference kernel of Normalizer (ai.onnx.ml): divides each row by its MAX (largest value, as ONNX
// Runtime does), L1 (sum of absolute values) or L2 (Euclidean) norm. A row whose norm is 0 is left as
// is rather than divided by zero.
#include <fmt/format.h>

#include <algorithm>

#include "ops/ml/ml_kernel_util.h"

namespace {

using namespace tessera::ops::kernels::ml;
using tessera::rt::KernelContext;

class Normalizer : public tessera::rt::OpKernel {
 public:
  explicit Normalizer(const tessera::rt::KernelInfo& info) : norm_(info.get_string("norm", "MAX")) {
    if (norm_ != "MAX" && norm_ != "L1" && norm_ != "L2")
      throw tessera::rt::KernelError(fmt::format("attribute 'norm' is '{}'; expected MAX, L1 or L2", norm_));
  }

  void compute(KernelContext& ctx) const override {
    Rows x = read_rows(ctx);
    float* y = ctx.output(0, tessera::ir::DataType::kFloat, ctx.input(0).shape()).data<float>();
    for (int64_t r = 0; r < x.n; ++r) {
      const double* row = x.row(r);
      double d = 0;
      if (norm_ == "MAX") {
        d = x.c > 0 ? *std::max_element(row, row + x.c) : 0.0;
      } else {
        for (int64_t j = 0; j < x.c; ++j) d += norm_ == "L1" ? std::abs(row[j]) : row[j] * row[j];
        if (norm_ == "L2") d = std::sqrt(d);
      }
      for (int64_t j = 0; j < x.c; ++j) y[r * x.c + j] = static_cast<float>(d == 0 ? row[j] : row[j] / d);
    }
  }

 private:
  std::string norm_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(ml_normalizer) {
  reg.add(tessera::rt::KernelDef::of<Normalizer>("Normalizer").in_domain("ai.onnx.ml"));
}
