// Constant floating-point inputs (Resize and Upsample scales, Resize roi) as doubles.
#pragma once

#include <optional>
#include <vector>

#include "ops/infer.h"

namespace tessera::ops {

// The values of constant input i when it is float or double; nullopt otherwise.
inline std::optional<std::vector<double>> constant_floats(const InferenceContext& ctx, size_t i) {
  const ir::Tensor* t = ctx.has_input(i) ? ctx.input_constant(i) : nullptr;
  if (!t) return std::nullopt;
  std::vector<double> out;
  if (t->dtype == ir::DataType::kFloat) {
    for (float f : t->as<float>()) out.push_back(f);
  } else if (t->dtype == ir::DataType::kDouble) {
    for (double d : t->as<double>()) out.push_back(d);
  } else {
    return std::nullopt;
  }
  auto n = t->numel();
  if (!n || static_cast<size_t>(*n) != out.size()) return std::nullopt;
  return out;
}

}  // namespace tessera::ops
