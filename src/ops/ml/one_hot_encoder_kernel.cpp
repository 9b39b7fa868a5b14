// Reference kernel of OneHotEncoder (ai.onnx.ml): each element becomes a row of len(cats) floats with a
// 1 at its category's position. Output shape is X's plus that axis. An element outside the categories
// gives an all-zero row, or an error when zeros=0.
#include <fmt/format.h>

#include <cmath>
#include <unordered_map>

#include "runtime/dispatch.h"
#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::Tensor;

class OneHotEncoder : public tessera::rt::OpKernel {
 public:
  explicit OneHotEncoder(const tessera::rt::KernelInfo& info) : zeros_(info.get_int("zeros", 1) != 0) {
    auto ints = info.get_ints("cats_int64s", {});
    auto strs = info.get_strings("cats_strings", {});
    if (ints.empty() == strs.empty())
      throw tessera::rt::KernelError("exactly one of 'cats_int64s' and 'cats_strings' must be given");
    for (size_t i = 0; i < ints.size(); ++i) ints_.emplace(ints[i], static_cast<int64_t>(i));
    for (size_t i = 0; i < strs.size(); ++i) strs_.emplace(strs[i], static_cast<int64_t>(i));
    count_ = static_cast<int64_t>(ints.size() + strs.size());
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    bool strings = x.dtype() == DataType::kString;
    if (strings == strs_.empty())
      ctx.fail(fmt::format("input 'X' is {} but the categories are {}", tessera::ir::dtype_name(x.dtype()),
                           strs_.empty() ? "integers" : "strings"));
    tessera::rt::Shape s = x.shape();
    s.push_back(count_);
    tessera::rt::shape_numel(s);
    float* y = ctx.output(0, DataType::kFloat, s).data<float>();
    std::fill(y, y + x.numel() * count_, 0.0f);
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t at = -1;
      if (strings) {
        auto it = strs_.find(x.data<std::string>()[i]);
        if (it != strs_.end()) at = it->second;
      } else {
        int64_t v = 0;
        bool integral = true;
        tessera::rt::dispatch(tessera::rt::TypeList<float, double, int32_t, int64_t>{}, x.dtype(),
                              "OneHotEncoder", [&]<class T>() {
                                T e = x.data<T>()[i];
                                if constexpr (std::is_floating_point_v<T>) {
                                  // NaN, infinities and fractions match no category.
                                  integral = std::isfinite(e) && std::abs(e) < 9.2e18 && std::floor(e) == e;
                                  v = integral ? static_cast<int64_t>(e) : 0;
                                } else {
                                  v = static_cast<int64_t>(e);
                                }
                              });
        auto it = integral ? ints_.find(v) : ints_.end();
        if (it != ints_.end()) at = it->second;
      }
      if (at < 0 && !zeros_)
        ctx.fail(fmt::format("element {} of X is not one of the categories (zeros=0)", i));
      if (at >= 0) y[i * count_ + at] = 1.0f;
    }
  }

 private:
  bool zeros_;
  int64_t count_ = 0;
  std::unordered_map<int64_t, int64_t> ints_;
  std::unordered_map<std::string, int64_t> strs_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(ml_one_hot_encoder) {
  reg.add(tessera::rt::KernelDef::of<OneHotEncoder>("OneHotEncoder").in_domain("ai.onnx.ml"));
}
