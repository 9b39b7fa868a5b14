#include "ops/tensor/tensor_util.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "ops/infer_util.h"

namespace tessera::ops::tensor {

using ir::Dim;

const std::vector<std::string>& all_types(int opset) {
  if (opset < 13) return types::kAllTensor;
  if (opset < 19) return types::kAllTensorIr4;
  if (opset < 21) return types::kAllTensorIr9;
  if (opset < 23) return types::kAllTensorIr10;
  if (opset < 24) return types::kAllTensorIr11;
  if (opset < 25) return types::kAllTensorIr12;
  return types::kAllTensorIr13;
}

std::vector<std::string> without(const std::vector<std::string>& list,
                                 std::initializer_list<std::string_view> elems) {
  std::vector<std::string> drop = types::tensors(elems);
  std::vector<std::string> out;
  for (const auto& t : list) {
    if (std::find(drop.begin(), drop.end(), t) == drop.end()) out.push_back(t);
  }
  return out;
}

std::vector<std::string> cast_types(int opset) {
  if (opset < 9) return without(all_types(opset), {"complex64", "complex128", "string"});
  return without(all_types(opset), {"complex64", "complex128"});
}

void set_value(InferenceContext& ctx, size_t out, std::vector<Dim> value) {
  if (ctx.has_output(out)) ctx.set_output_shape_value(out, std::move(value));
}

std::optional<std::vector<int64_t>> static_ints(const InferenceContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return std::nullopt;
  if (auto c = constant_ints(ctx, i)) return c;
  const auto* v = ctx.input_shape_value(i);
  if (!v) return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim& d : *v) {
    if (!d.is_static()) return std::nullopt;
    out.push_back(d.value);
  }
  return out;
}

std::optional<int64_t> input_rank(const InferenceContext& ctx, size_t i) {
  const ir::Shape* s = input_shape(ctx, i);
  if (!s) return std::nullopt;
  return static_cast<int64_t>(s->size());
}

std::string dims_string(const std::vector<Dim>& dims) {
  std::string out = "[";
  for (size_t k = 0; k < dims.size(); ++k) {
    if (k) out += ",";
    out += dims[k].param.empty() ? std::to_string(dims[k].value) : dims[k].param;
  }
  return out + "]";
}

std::string ints_string(const std::vector<int64_t>& v) {
  return fmt::format("[{}]", fmt::join(v, ","));
}

Dim dims_product(const std::vector<Dim>& dims) {
  Dim acc = Dim::of(1);
  for (const Dim& d : dims) acc = dim_mul(acc, d);
  return acc;
}

std::vector<int64_t> normalize_axes(const InferenceContext& ctx, const std::vector<int64_t>& axes,
                                    int64_t rank, std::string_view what) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      ctx.fail(fmt::format("{} {} has axis {}, outside [{}, {}) for rank {}", what, ints_string(axes), a,
                           -rank, rank, rank));
    }
    int64_t n = a < 0 ? a + rank : a;
    if (std::find(out.begin(), out.end(), n) != out.end()) {
      ctx.fail(fmt::format("{} {} names axis {} twice", what, ints_string(axes), n));
    }
    out.push_back(n);
  }
  return out;
}

}  // namespace tessera::ops::tensor
