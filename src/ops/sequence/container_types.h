// Type lists and type merging shared by the sequence, optional and control-flow operators.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/type.h"
#include "ops/infer.h"
#include "ops/schema.h"

namespace tessera::ops {

// Wraps each type string: seq_of({"tensor(float)"}) -> {"seq(tensor(float))"}.
std::vector<std::string> seq_of(const std::vector<std::string>& types);
std::vector<std::string> optional_of(const std::vector<std::string>& types);

// What If and Loop carry from a given opset on: tensors, sequences of tensors and, from opset 16,
// optionals of either.
std::vector<std::string> tensor_and_seq(const std::vector<std::string>& tensors);
std::vector<std::string> tensor_seq_optional(const std::vector<std::string>& tensors);

// `t` with the shapes of it and of its elements (sequence, optional) made unknown.
ir::Type without_shapes(const ir::Type& t);

// The type that describes a value which may be either `a` or `b` (two If branches, a loop-carried
// value before and after an iteration): dimensions that differ become unknown, ranks that differ make
// the rank unknown. A kNone side yields the other without its shapes. Fails through `ctx` naming `what` when
// the kinds or element types cannot be the same value.
ir::Type merge_types(const InferenceContext& ctx, const ir::Type& a, const ir::Type& b,
                     std::string_view what);
std::optional<ir::Shape> merge_shapes(const std::optional<ir::Shape>& a, const std::optional<ir::Shape>& b);

}  // namespace tessera::ops
