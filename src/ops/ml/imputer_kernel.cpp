// Reference kernel of Imputer (ai.onnx.ml): replaces every element equal to the replaced value (NaN
// matches NaN) by the imputed value of its column, or by the single imputed value given.
#include <fmt/format.h>

#include <cmath>

#include "runtime/dispatch.h"
#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::Tensor;

class Imputer : public tessera::rt::OpKernel {
 public:
  explicit Imputer(const tessera::rt::KernelInfo& info)
      : floats_(info.get_floats("imputed_value_floats", {})),
        ints_(info.get_ints("imputed_value_int64s", {})),
        replaced_float_(info.get_float("replaced_value_float", 0.0f)),
        replaced_int_(info.get_int("replaced_value_int64", 0)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() == 0) ctx.fail("input 'X' must have at least one dimension");
    const int64_t c = x.dim(-1);
    bool is_float = x.dtype() == DataType::kFloat || x.dtype() == DataType::kDouble;
    size_t count = is_float ? floats_.size() : ints_.size();
    if (count != 1 && static_cast<int64_t>(count) != c)
      ctx.fail(fmt::format("{} has {} values; X ({}) needs 1 or one per column ({})",
                           is_float ? "imputed_value_floats" : "imputed_value_int64s", count,
                           tessera::ir::dtype_name(x.dtype()), c));
    tessera::rt::dispatch(
        tessera::rt::TypeList<float, double, int32_t, int64_t>{}, x.dtype(), "Imputer", [&]<class T>() {
          const T* in = x.data<T>();
          T* out = ctx.output(0, x.dtype(), x.shape()).template data<T>();
          for (int64_t i = 0; i < x.numel(); ++i) {
            size_t k = count == 1 ? 0 : static_cast<size_t>(i % c);
            bool hit;
            if constexpr (std::is_floating_point_v<T>)
              hit =
                  std::isnan(replaced_float_) ? std::isnan(in[i]) : in[i] == static_cast<T>(replaced_float_);
            else
              hit = static_cast<int64_t>(in[i]) == replaced_int_;
            if (!hit) {
              out[i] = in[i];
            } else if constexpr (std::is_floating_point_v<T>) {
              out[i] = static_cast<T>(floats_[k]);
            } else {
              out[i] = static_cast<T>(ints_[k]);
            }
          }
        });
  }

 private:
  std::vector<float> floats_;
  std::vector<int64_t> ints_;
  float replaced_float_;
  int64_t replaced_int_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(ml_imputer) {
  reg.add(tessera::rt::KernelDef::of<Imputer>("Imputer").in_domain("ai.onnx.ml"));
}
