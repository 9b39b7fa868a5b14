// Reference kernel of Scaler (ai.onnx.ml): y = (x - offset) * scale per column, as float. offset and
// scale hold one value per column or a single value for all.
#include <fmt/format.h>

#include "ops/ml/ml_kernel_util.h"

namespace {

using namespace tessera::ops::kernels::ml;
using tessera::rt::KernelContext;

class Scaler : public tessera::rt::OpKernel {
 public:
  explicit Scaler(const tessera::rt::KernelInfo& info)
      : offset_(info.get_floats("offset", {})), scale_(info.get_floats("scale", {})) {}

  void compute(KernelContext& ctx) const override {
    Rows x = read_rows(ctx);
    auto per_column = [&](const std::vector<float>& v, const char* name, float fallback) {
      if (v.empty()) return std::vector<float>(static_cast<size_t>(x.c), fallback);
      if (v.size() == 1) return std::vector<float>(static_cast<size_t>(x.c), v[0]);
      if (static_cast<int64_t>(v.size()) != x.c)
        ctx.fail(fmt::format("attribute '{}' has {} values but X has {} columns", name, v.size(), x.c));
      return v;
    };
    std::vector<float> off = per_column(offset_, "offset", 0.0f), sc = per_column(scale_, "scale", 1.0f);
    float* y = ctx.output(0, tessera::ir::DataType::kFloat, ctx.input(0).shape()).data<float>();
    for (int64_t r = 0; r < x.n; ++r)
      for (int64_t j = 0; j < x.c; ++j) {
        auto k = static_cast<size_t>(j);
        y[r * x.c + j] = static_cast<float>((x.row(r)[j] - off[k]) * sc[k]);
      }
  }

 private:
  std::vector<float> offset_, scale_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(ml_scaler) {
  reg.add(tessera::rt::KernelDef::of<Scaler>("Scaler").in_domain("ai.onnx.ml"));
}
