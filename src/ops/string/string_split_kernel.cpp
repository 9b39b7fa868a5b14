// Reference kernel of StringSplit, with Python's str.split semantics: a delimiter splits at every
// occurrence (empty pieces kept); no or an empty delimiter splits at runs of whitespace (no empty pieces,
// leading/trailing whitespace ignored). At most maxsplit splits happen. Y pads every row of substrings
// with empty strings to the longest; Z gives each string's substring count.
#include <fmt/format.h>

#include <optional>

#include "runtime/kernel.h"

namespace {

using tessera::ir::DataType;
using tessera::rt::KernelContext;
using tessera::rt::Tensor;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::vector<std::string> split_whitespace(const std::string& s, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t i = 0, n = s.size();
  while (true) {
    while (i < n && is_space(s[i])) ++i;
    if (i == n) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
      // The rest is one piece, trailing whitespace included (as Python does).
      out.push_back(s.substr(i));
      break;
    }
    size_t j = i;
    while (j < n && !is_space(s[j])) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::vector<std::string> split_delimiter(const std::string& s, const std::string& d, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t start = 0;
  while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
    size_t at = s.find(d, start);
    if (at == std::string::npos) break;
    out.push_back(s.substr(start, at - start));
    start = at + d.size();
  }
  out.push_back(s.substr(start));
  return out;
}

class StringSplit : public tessera::rt::OpKernel {
 public:
  explicit StringSplit(const tessera::rt::KernelInfo& info)
      : delimiter_(info.get_string("delimiter", "")), maxsplit_(info.get_int("maxsplit", -1)) {
    if (info.has_attr("maxsplit") && maxsplit_ < 0)
      throw tessera::rt::KernelError(
          fmt::format("attribute 'maxsplit' must not be negative, got {}", maxsplit_));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DataType::kString)
      ctx.fail(fmt::format("input 'X' must be a string tensor, got {}", tessera::ir::dtype_name(x.dtype())));
    const std::string* in = x.data<std::string>();
    std::vector<std::vector<std::string>> parts(static_cast<size_t>(x.numel()));
    int64_t width = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      auto& p = parts[static_cast<size_t>(i)];
      p = delimiter_.empty() ? split_whitespace(in[i], maxsplit_)
                             : split_delimiter(in[i], delimiter_, maxsplit_);
      width = std::max<int64_t>(width, static_cast<int64_t>(p.size()));
    }
    tessera::rt::Shape ys = x.shape();
    ys.push_back(width);
    Tensor& y = ctx.output(0, DataType::kString, ys);
    Tensor& z = ctx.output(1, DataType::kInt64, x.shape());
    std::string* out = y.data<std::string>();
    int64_t* counts = z.data<int64_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      auto& p = parts[static_cast<size_t>(i)];
      counts[i] = static_cast<int64_t>(p.size());
      for (size_t k = 0; k < p.size(); ++k) out[i * width + static_cast<int64_t>(k)] = std::move(p[k]);
      // Padding stays as allocated: empty strings.
    }
  }

 private:
  std::string delimiter_;
  int64_t maxsplit_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(string_string_split) {
  reg.add(tessera::rt::KernelDef::of<StringSplit>("StringSplit"));
}
