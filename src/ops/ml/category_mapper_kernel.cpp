// Reference kernel of CategoryMapper (ai.onnx.ml): maps strings to integers through the parallel lists
// cats_strings / cats_int64s, or integers back to strings; values not in the lists get the default.
#include <fmt/format.h>

#include <unordered_map>

#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::Tensor;

class CategoryMapper : public tessera::rt::OpKernel {
 public:
  explicit CategoryMapper(const tessera::rt::KernelInfo& info)
      : default_int_(info.get_int("default_int64", -1)),
        default_str_(info.get_string("default_string", "_Unused")) {
    auto ints = info.get_ints("cats_int64s", {});
    auto strs = info.get_strings("cats_strings", {});
    if (ints.size() != strs.size())
      throw tessera::rt::KernelError(
          fmt::format("cats_int64s has {} values but cats_strings has {}", ints.size(), strs.size()));
    for (size_t i = 0; i < ints.size(); ++i) {
      to_int_.emplace(strs[i], ints[i]);
      to_str_.emplace(ints[i], strs[i]);
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() == DataType::kString) {
      int64_t* y = ctx.output(0, DataType::kInt64, x.shape()).data<int64_t>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        auto it = to_int_.find(x.data<std::string>()[i]);
        y[i] = it == to_int_.end() ? default_int_ : it->second;
      }
    } else if (x.dtype() == DataType::kInt64) {
      std::string* y = ctx.output(0, DataType::kString, x.shape()).data<std::string>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        auto it = to_str_.find(x.data<int64_t>()[i]);
        y[i] = it == to_str_.end() ? default_str_ : it->second;
      }
    } else {
      ctx.fail(fmt::format("input 'X' must be string or int64, got {}", tessera::ir::dtype_name(x.dtype())));
    }
  }

 private:
  int64_t default_int_;
  std::string default_str_;
  std::unordered_map<std::string, int64_t> to_int_;
  std::unordered_map<int64_t, std::string> to_str_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(ml_category_mapper) {
  reg.add(tessera::rt::KernelDef::of<CategoryMapper>("CategoryMapper").in_domain("ai.onnx.ml"));
}
