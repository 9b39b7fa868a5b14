// Data-type attributes (RandomNormal's `dtype`, the windows' `output_datatype`, the quantizers'
// `output_dtype`): read them and check them against the type constraint of the output they decide,
// so a model asking for, say, a string-typed random tensor is caught with a sentence naming both.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "ops/infer.h"

namespace tessera::ops {

// The data type named by integer attribute `name` (its schema default when unset); nullopt when the
// attribute is unset with no default, or holds 0 (UNDEFINED: "not given" for output_dtype). Fails when
// the value is no data type or one that the type parameter `param` does not allow.
inline std::optional<ir::DataType> dtype_attr(const InferenceContext& ctx, std::string_view name,
                                              std::string_view param) {
  const ir::Attribute* a = ctx.attr(name);
  if (!a || a->i == 0) return std::nullopt;
  if (a->i < 0 || a->i > ir::kMaxDataType) {
    ctx.fail(fmt::format("attribute '{}' is {}, which is not a data type", name, a->i));
  }
  auto t = static_cast<ir::DataType>(a->i);
  const TypeConstraint* tc = ctx.schema().find_type_param(param);
  if (!tc) return t;
  std::string s = fmt::format("tensor({})", ir::dtype_name(t));
  if (std::find(tc->allowed.begin(), tc->allowed.end(), s) == tc->allowed.end()) {
    ctx.fail(fmt::format("attribute '{}' asks for {}, which this operator cannot produce (allowed: {})", name,
                         ir::dtype_name(t), fmt::join(tc->allowed, ", ")));
  }
  return t;
}

// Whether element type `t` is one that type parameter `param` allows (true when the schema says nothing).
inline bool dtype_allowed(const InferenceContext& ctx, ir::DataType t, std::string_view param) {
  const TypeConstraint* tc = ctx.schema().find_type_param(param);
  if (!tc) return true;
  std::string s = fmt::format("tensor({})", ir::dtype_name(t));
  return std::find(tc->allowed.begin(), tc->allowed.end(), s) != tc->allowed.end();
}

}  // namespace tessera::ops
