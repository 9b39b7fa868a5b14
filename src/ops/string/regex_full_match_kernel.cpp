// Reference kernel of RegexFullMatch: whether each string matches the pattern as a whole.
//
// The spec names RE2 syntax; this kernel compiles the pattern with std::regex (ECMAScript grammar), which
// shares RE2's common core (classes \w \d \s \b, groups, alternation, counted repetition, anchors).
// RE2-only constructs such as named groups (?P<name>...), Unicode classes \pL or inline flags (?i) are
// rejected when the session is built, with the regex library's message.
#include <fmt/format.h>

#include <regex>

#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::Tensor;

class RegexFullMatch : public tessera::rt::OpKernel {
 public:
  explicit RegexFullMatch(const tessera::rt::KernelInfo& info) {
    std::string pattern = info.get_string("pattern", "");
    try {
      re_ = std::regex(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw tessera::rt::KernelError(fmt::format(
          "attribute 'pattern' '{}' is not a supported regular expression: {}", pattern, e.what()));
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DataType::kString)
      ctx.fail(fmt::format("input 'X' must be a string tensor, got {}", tessera::ir::dtype_name(x.dtype())));
    Tensor& y = ctx.output(0, DataType::kBool, x.shape());
    const std::string* in = x.data<std::string>();
    bool* out = y.data<bool>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = std::regex_match(in[i], re_);
  }

 private:
  std::regex re_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(string_regex_full_match) {
  reg.add(tessera::rt::KernelDef::of<RegexFullMatch>("RegexFullMatch"));
}
