// Shape and attribute lookups shared by the work rules (work.cpp, work_attention.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/work.h"

namespace tessera::profiler::detail {

using Dims = std::vector<int64_t>;

inline const TensorInfo* info_of(const ValueInfos& values, const std::string& name) {
  if (name.empty()) return nullptr;
  auto it = values.find(name);
  return it == values.end() ? nullptr : &it->second;
}

// The shape of input (or output) i when known; null when omitted or unknown.
inline const Dims* input_dims(const ir::Node& n, const ValueInfos& values, size_t i) {
  if (i >= n.inputs.size()) return nullptr;
  const TensorInfo* t = info_of(values, n.inputs[i]);
  return t && t->shape ? &*t->shape : nullptr;
}
inline const Dims* output_dims(const ir::Node& n, const ValueInfos& values, size_t i) {
  if (i >= n.outputs.size()) return nullptr;
  const TensorInfo* t = info_of(values, n.outputs[i]);
  return t && t->shape ? &*t->shape : nullptr;
}
inline bool has_input(const ir::Node& n, size_t i) {
  return i < n.inputs.size() && !n.inputs[i].empty();
}

inline double product(const Dims& d, size_t from = 0, size_t to = SIZE_MAX) {
  double p = 1;
  for (size_t k = from; k < d.size() && k < to; ++k) p *= static_cast<double>(d[k]);
  return p;
}

inline int64_t int_attr(const ir::Node& n, std::string_view name, int64_t fallback) {
  const ir::Attribute* a = n.attr(name);
  return a ? a->i : fallback;
}
inline std::vector<int64_t> ints_attr(const ir::Node& n, std::string_view name,
                                      std::vector<int64_t> fallback) {
  const ir::Attribute* a = n.attr(name);
  return a ? a->ints : fallback;
}

// Whether the node is one of the attentions work_attention.cpp counts, and its FLOPs; `causal` says
// whether a causal mask limited the (query, key) pairs.
bool is_attention(const ir::Node& n);
std::optional<double> attention_flops(const ir::Node& n, const ValueInfos& values, bool& causal);

}  // namespace tessera::profiler::detail
