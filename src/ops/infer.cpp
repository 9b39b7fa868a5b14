#include "ops/infer.h"

#include <fmt/format.h>

namespace tessera::ops {

const ir::Attribute* InferenceContext::attr(std::string_view name) const {
  if (const ir::Attribute* a = node().attr(name)) return a;
  const AttrSchema* s = schema().find_attr(name);
  return s && s->default_value ? &*s->default_value : nullptr;
}

int64_t InferenceContext::attr_int(std::string_view name, int64_t fallback) const {
  const ir::Attribute* a = attr(name);
  return a && a->type == ir::AttrType::kInt ? a->i : fallback;
}

float InferenceContext::attr_float(std::string_view name, float fallback) const {
  const ir::Attribute* a = attr(name);
  return a && a->type == ir::AttrType::kFloat ? a->f : fallback;
}

std::string InferenceContext::attr_string(std::string_view name, std::string fallback) const {
  const ir::Attribute* a = attr(name);
  return a && a->type == ir::AttrType::kString ? a->s : fallback;
}

std::vector<int64_t> InferenceContext::attr_ints(std::string_view name, std::vector<int64_t> fallback) const {
  const ir::Attribute* a = attr(name);
  return a && a->type == ir::AttrType::kInts ? a->ints : fallback;
}

std::vector<float> InferenceContext::attr_floats(std::string_view name, std::vector<float> fallback) const {
  const ir::Attribute* a = attr(name);
  return a && a->type == ir::AttrType::kFloats ? a->floats : fallback;
}

std::vector<std::string> InferenceContext::attr_strings(std::string_view name) const {
  const ir::Attribute* a = attr(name);
  return a && a->type == ir::AttrType::kStrings ? a->strings : std::vector<std::string>{};
}

std::string InferenceContext::node_label() const {
  return fmt::format("node '{}' ({})", node().name, node().op_type);
}

}  // namespace tessera::ops
