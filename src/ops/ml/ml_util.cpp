#include "ops/ml/ml_util.h"

#include <fmt/format.h>

#include "ops/infer_util.h"

namespace tessera::ops::ml {

using ir::DataType;
using ir::Dim;

Dim batch_dim(const InferenceContext& ctx, size_t i) {
  const ir::Shape* s = input_shape(ctx, i);
  if (!s) return Dim::unknown();
  if (s->size() == 1) return Dim::of(1);
  if (s->size() == 2) return (*s)[0];
  return Dim::unknown();
}

void require_rows(const InferenceContext& ctx, size_t i) {
  const ir::Shape* s = input_shape(ctx, i);
  if (!s || s->size() == 1 || s->size() == 2) return;
  ctx.fail_input(i,
                 fmt::format("input {} must be 1-D (C) or 2-D (N, C), got {}", i, ir::shape_to_string(*s)));
}

DataType label_type(const InferenceContext& ctx, std::string_view ints_attr, std::string_view strings_attr) {
  bool ints = ctx.has_attr(ints_attr), strings = ctx.has_attr(strings_attr);
  if (ints && strings) ctx.fail(fmt::format("only one of '{}' and '{}' may be set", ints_attr, strings_attr));
  return strings ? DataType::kString : DataType::kInt64;
}

std::optional<int64_t> label_count(const InferenceContext& ctx, std::string_view ints_attr,
                                   std::string_view strings_attr) {
  if (ctx.has_attr(strings_attr)) return static_cast<int64_t>(ctx.attr_strings(strings_attr).size());
  if (ctx.has_attr(ints_attr)) return static_cast<int64_t>(ctx.attr_ints(ints_attr).size());
  return std::nullopt;
}

std::optional<DataType> cast_to_type(std::string_view name) {
  if (name == "TO_FLOAT") return DataType::kFloat;
  if (name == "TO_STRING") return DataType::kString;
  if (name == "TO_INT64") return DataType::kInt64;
  return std::nullopt;
}

}  // namespace tessera::ops::ml
