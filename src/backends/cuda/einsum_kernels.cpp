// The CUDA backend's Einsum: the equation parsed and planned on the host as the CPU reference does
// (ops/nn/einsum_kernel.cpp: '...' broadcast from the right, repeated labels walking diagonals, the
// implicit output of the ellipsis and the labels used once in ASCII order), the loop on the GPU.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "backends/cuda/data_util.h"
#include "backends/cuda/einsum_ops.h"
#include "backends/cuda/kernel_util.h"

namespace tessera::cuda {

namespace {

using rt::DataType;
using rt::KernelContext;
using rt::Tensor;

// The equation's terms, '.' standing for the ellipsis; a KernelError for a malformed one.
struct Equation {
  std::string text;
  std::vector<std::string> terms;
  std::string out;
  bool explicit_out = false;
};

std::string parse_term(const std::string& s, const std::string& eq) {
  std::string t;
  bool ellipsis = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '.') {
      if (ellipsis || s.compare(i, 3, "...") != 0)
        throw rt::KernelError(fmt::format("equation '{}': '{}' has a stray '.'", eq, s));
      ellipsis = true;
      t.push_back('.');
      i += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(ch)))
      throw rt::KernelError(
          fmt::format("equation '{}': '{}' is not a subscript letter", eq, std::string(1, ch)));
    t.push_back(ch);
  }
  return t;
}

Equation parse(const rt::KernelInfo& info) {
  Equation e;
  for (char ch : info.get_string("equation"))
    if (!std::isspace(static_cast<unsigned char>(ch))) e.text.push_back(ch);
  const size_t arrow = e.text.find("->");
  const std::string lhs = e.text.substr(0, arrow);
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    e.terms.push_back(parse_term(lhs.substr(start, comma - start), e.text));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    e.explicit_out = true;
    e.out = parse_term(e.text.substr(arrow + 2), e.text);
  }
  return e;
}

bool einsum_supported(const rt::KernelInfo& info) {
  if (!all_tensors(info) || info.input_count() == 0 || info.input_count() > kEinsumOperands) return false;
  const DataType t = info.input_dtype(0);
  if (t != DataType::kFloat && t != DataType::kFloat16 && t != DataType::kBFloat16 &&
      t != DataType::kDouble && t != DataType::kInt32 && t != DataType::kInt64)
    return false;
  for (size_t i = 0; i < info.input_count(); ++i)
    if (!info.has_input(i) || info.input_dtype(i) != t) return false;
  try {
    return parse(info).terms.size() == info.input_count();
  } catch (const rt::KernelError&) {
    return false;  // the CPU says what is wrong
  }
}

class Einsum : public rt::OpKernel {
 public:
  explicit Einsum(const rt::KernelInfo& info) : eq_(parse(info)) {}

  void compute(KernelContext& ctx) const override {
    const size_t k = eq_.terms.size();
    if (ctx.input_count() != k)
      ctx.fail(fmt::format("equation '{}' has {} operand terms but the node has {} inputs", eq_.text, k,
                           ctx.input_count()));
    std::vector<const Tensor*> ins;
    for (size_t i = 0; i < k; ++i) ins.push_back(&ctx.input(i));
    // Label ids: 0..E-1 the ellipsis axes, E + letter the letters.
    size_t ell = 0;
    std::vector<size_t> ell_rank(k, 0);
    for (size_t i = 0; i < k; ++i) {
      const std::string& t = eq_.terms[i];
      const bool has_ell = t.find('.') != std::string::npos;
      const size_t named = t.size() - (has_ell ? 1 : 0);
      const auto rank = static_cast<size_t>(ins[i]->rank());
      if (has_ell ? rank < named : rank != named)
        ctx.fail(fmt::format("input {} has shape {} but its term in equation '{}' names {} axes", i,
                             rt::shape_str(ins[i]->shape()), eq_.text, named));
      ell_rank[i] = rank - named;
      ell = std::max(ell, ell_rank[i]);
    }
    const size_t ids = ell + 128;
    std::vector<int64_t> sizes(ids, -1);
    std::vector<int> count(ids, 0);
    std::vector<std::vector<int64_t>> stride(k, std::vector<int64_t>(ids, 0));
    auto bind = [&](size_t id, int64_t size, bool ellipsis, size_t input) {
      ++count[id];
      int64_t& s = sizes[id];
      if (s < 0 || (ellipsis && s == 1)) {
        s = size;
      } else if (s != size && !(ellipsis && size == 1)) {
        ctx.fail(fmt::format("equation '{}': input {} has size {} for a subscript that has size {} elsewhere",
                             eq_.text, input, size, s));
      }
    };
    for (size_t i = 0; i < k; ++i) {
      const rt::Shape& shape = ins[i]->shape();
      const auto st = row_strides(shape);
      size_t axis = 0;
      for (char ch : eq_.terms[i]) {
        if (ch == '.') {
          for (size_t e = 0; e < ell_rank[i]; ++e, ++axis) {
            const size_t id = ell - ell_rank[i] + e;
            bind(id, shape[axis], true, i);
            if (shape[axis] != 1) stride[i][id] += st[axis];
          }
          continue;
        }
        const size_t id = ell + static_cast<unsigned char>(ch);
        bind(id, shape[axis], false, i);
        stride[i][id] += st[axis];
        ++axis;
      }
    }
    std::vector<bool> in_out(ids, false);
    std::vector<size_t> out_ids;
    auto add_out = [&](size_t id) {
      if (in_out[id]) ctx.fail(fmt::format("equation '{}': an output subscript appears twice", eq_.text));
      in_out[id] = true;
      out_ids.push_back(id);
    };
    if (eq_.explicit_out) {
      for (char ch : eq_.out) {
        if (ch == '.') {
          for (size_t e = 0; e < ell; ++e) add_out(e);
          continue;
        }
        const size_t id = ell + static_cast<unsigned char>(ch);
        if (count[id] == 0)
          ctx.fail(fmt::format("equation '{}': output subscript '{}' appears in no input", eq_.text, ch));
        add_out(id);
      }
    } else {
      for (size_t e = 0; e < ell; ++e) add_out(e);
      for (size_t c = 0; c < 128; ++c)
        if (count[ell + c] == 1) add_out(ell + c);
    }
    std::vector<size_t> sum_ids;
    for (size_t id = 0; id < ids; ++id)
      if (count[id] > 0 && !in_out[id]) sum_ids.push_back(id);
    if (out_ids.size() > static_cast<size_t>(kEinsumLabels) ||
        sum_ids.size() > static_cast<size_t>(kEinsumLabels))
      ctx.fail(fmt::format("the CUDA Einsum takes up to {} output and {} summed subscripts", kEinsumLabels,
                           kEinsumLabels));
    EinsumSpec s;
    s.operands = static_cast<int>(k);
    s.out_rank = static_cast<int>(out_ids.size());
    s.sum_rank = static_cast<int>(sum_ids.size());
    rt::Shape out_shape;
    for (size_t d = 0; d < out_ids.size(); ++d) {
      const int64_t n = sizes[out_ids[d]] < 0 ? 1 : sizes[out_ids[d]];
      out_shape.push_back(n);
      s.out_dims[d] = n;
      for (size_t i = 0; i < k; ++i) s.out_stride[i][d] = stride[i][out_ids[d]];
    }
    for (size_t d = 0; d < sum_ids.size(); ++d) {
      s.sum_dims[d] = sizes[sum_ids[d]];
      for (size_t i = 0; i < k; ++i) s.sum_stride[i][d] = stride[i][sum_ids[d]];
    }
    for (size_t i = 0; i < k; ++i) s.in[i] = ins[i]->raw();
    const int64_t n = rt::shape_numel(out_shape);
    Tensor& y = ctx.output_uninitialized(0, ins[0]->dtype(), out_shape);
    int64_t summed = 1;
    for (size_t d = 0; d < sum_ids.size(); ++d) summed *= s.sum_dims[d];
    if (summed == 0) {  // an empty sum: zeros
      if (y.nbytes() > 0)
        check(cudaMemsetAsync(y.raw(), 0, y.nbytes(), native(ctx.stream())), "cudaMemsetAsync");
      return;
    }
    launch_einsum(*scalar_type(ins[0]->dtype()), s, y.raw(), n, native(ctx.stream()));
    check_launch(ctx);
  }

 private:
  Equation eq_;
};

}  // namespace

void register_einsum_kernels(KernelTable& t) {
  t.add(cuda_def(
      "Einsum", einsum_supported,
      [](const rt::KernelInfo& i) -> rt::KernelPtr { return std::make_unique<Einsum>(i); }, 12));
}

}  // namespace tessera::cuda
