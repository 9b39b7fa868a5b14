// Reference kernel of DictVectorizer (ai.onnx.ml): writes the values of a map into a [1, V] tensor at
// the positions of their keys in the vocabulary; keys not in the vocabulary are ignored, and positions
// without a key hold 0 (or "" for strings).
#include <fmt/format.h>

#include <unordered_map>

#include "ops/control/tensor_slices.h"
#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::Tensor;

class DictVectorizer : public tessera::rt::OpKernel {
 public:
  explicit DictVectorizer(const tessera::rt::KernelInfo& info) {
    strings_ = info.has_attr("string_vocabulary");
    if (strings_ == info.has_attr("int64_vocabulary"))
      throw tessera::rt::KernelError(
          "exactly one of 'string_vocabulary' and 'int64_vocabulary' must be given");
    auto s = info.get_strings("string_vocabulary", {});
    auto n = info.get_ints("int64_vocabulary", {});
    for (size_t i = 0; i < s.size(); ++i) str_.emplace(s[i], static_cast<int64_t>(i));
    for (size_t i = 0; i < n.size(); ++i) int_.emplace(n[i], static_cast<int64_t>(i));
    size_ = static_cast<int64_t>(s.size() + n.size());
  }

  void compute(KernelContext& ctx) const override {
    const tessera::rt::Value& in = ctx.value(0);
    if (!in.is_map()) ctx.fail(fmt::format("input 'X' must be a map, got {}", in.describe()));
    const Tensor& keys = in.map().keys;
    const Tensor& vals = in.map().values;
    if ((keys.dtype() == DataType::kString) != strings_ || keys.numel() != vals.numel())
      ctx.fail(fmt::format("input 'X' has {} keys ({} of them, {} values) but the vocabulary is of {}",
                           tessera::ir::dtype_name(keys.dtype()), keys.numel(), vals.numel(),
                           strings_ ? "strings" : "integers"));
    Tensor& y = ctx.output(0, vals.dtype(), {1, size_});
    if (vals.dtype() != DataType::kString) std::memset(y.raw(), 0, y.nbytes());
    for (int64_t i = 0; i < keys.numel(); ++i) {
      int64_t at = -1;
      if (strings_) {
        auto it = str_.find(keys.data<std::string>()[i]);
        if (it != str_.end()) at = it->second;
      } else {
        auto it = int_.find(keys.data<int64_t>()[i]);
        if (it != int_.end()) at = it->second;
      }
      if (at >= 0) tessera::ops::kernels::copy_elements(vals, i, y, at, 1);
    }
  }

 private:
  bool strings_ = false;
  int64_t size_ = 0;
  std::unordered_map<std::string, int64_t> str_;
  std::unordered_map<int64_t, int64_t> int_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(ml_dict_vectorizer) {
  reg.add(tessera::rt::KernelDef::of<DictVectorizer>("DictVectorizer").in_domain("ai.onnx.ml"));
}
