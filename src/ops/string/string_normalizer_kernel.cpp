// Reference kernel of StringNormalizer: drops stopwords, then changes case. X is [C] or [1, C].
//
// Case mapping and case-insensitive stopword matching are ASCII only (the "en_US" behaviour for ASCII
// text); bytes outside ASCII, such as UTF-8 sequences, are left as they are. The `locale` attribute is
// accepted but not used for anything else.
#include <fmt/format.h>

#include <unordered_set>

#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::Tensor;

std::string ascii_lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}
std::string ascii_upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

class StringNormalizer : public tessera::rt::OpKernel {
 public:
  explicit StringNormalizer(const tessera::rt::KernelInfo& info)
      : case_sensitive_(info.get_int("is_case_sensitive", 0) != 0) {
    std::string action = info.get_string("case_change_action", "NONE");
    if (action == "LOWER") {
      action_ = Action::kLower;
    } else if (action == "UPPER") {
      action_ = Action::kUpper;
    } else if (action != "NONE") {
      throw tessera::rt::KernelError(
          fmt::format("attribute 'case_change_action' is '{}'; expected LOWER, UPPER or NONE", action));
    }
    for (const std::string& w : info.get_strings("stopwords", {}))
      stopwords_.insert(case_sensitive_ ? w : ascii_lower(w));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DataType::kString)
      ctx.fail(fmt::format("input 'X' must be a string tensor, got {}", tessera::ir::dtype_name(x.dtype())));
    bool two_d = x.rank() == 2;
    if (x.rank() != 1 && !(two_d && x.dim(0) == 1))
      ctx.fail(fmt::format("input 'X' must be [C] or [1, C], got {}", tessera::rt::shape_str(x.shape())));
    std::vector<std::string> kept;
    const std::string* in = x.data<std::string>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (!stopwords_.empty() && stopwords_.count(case_sensitive_ ? in[i] : ascii_lower(in[i]))) continue;
      kept.push_back(action_ == Action::kLower   ? ascii_lower(in[i])
                     : action_ == Action::kUpper ? ascii_upper(in[i])
                                                 : in[i]);
    }
    // Everything removed: the output is a single empty string rather than an empty tensor.
    if (kept.empty() && x.numel() > 0) kept.emplace_back();
    auto c = static_cast<int64_t>(kept.size());
    Tensor& y = ctx.output(0, DataType::kString, two_d ? tessera::rt::Shape{1, c} : tessera::rt::Shape{c});
    std::string* out = y.data<std::string>();
    for (int64_t i = 0; i < c; ++i) out[i] = std::move(kept[static_cast<size_t>(i)]);
  }

 private:
  enum class Action { kNone, kLower, kUpper };
  Action action_ = Action::kNone;
  bool case_sensitive_;
  std::unordered_set<std::string> stopwords_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(string_string_normalizer) {
  reg.add(tessera::rt::KernelDef::of<StringNormalizer>("StringNormalizer"));
}
