#include "transforms/shape_floats.h"

#include <algorithm>
#include <unordered_map>

#include "transforms/transform.h"

namespace tessera::transforms {

namespace {

bool has_subgraph(const ir::Node& n) {
  return std::any_of(n.attributes.begin(), n.attributes.end(),
                     [](const ir::Attribute& a) { return !a.graphs.empty(); });
}

bool is_integer(ir::DataType t) {
  switch (t) {
    case ir::DataType::kInt8:
    case ir::DataType::kInt16:
    case ir::DataType::kInt32:
    case ir::DataType::kInt64:
    case ir::DataType::kUint8:
    case ir::DataType::kUint16:
    case ir::DataType::kUint32:
    case ir::DataType::kUint64:
    case ir::DataType::kBool:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::unordered_set<ir::NodeId> float_shape_arithmetic(
    const ir::Graph& g, const std::function<std::optional<ir::Type>(const std::string&)>& type_of) {
  auto elem = [&](const std::string& v) {
    auto t = v.empty() ? std::nullopt : type_of(v);
    return t && t->is_tensor() ? t->elem : ir::DataType::kUndefined;
  };
  auto is_float = [&](const std::string& v) { return elem(v) == ir::DataType::kFloat; };
  auto cast_to = [](const ir::Node& n) {
    const ir::Attribute* to = n.attr("to");
    return n.op_type == "Cast" && n.domain.empty() && to ? static_cast<ir::DataType>(to->i)
                                                         : ir::DataType::kUndefined;
  };
  std::unordered_set<std::string> constants, island_values;
  for (const auto& t : g.initializers) constants.insert(t.name);
  for (const auto& v : g.inputs) constants.erase(v.name);  // an input overrides its default
  std::vector<bool> in(g.nodes.size(), false);
  // Forward: Casts from integers, then nodes reading only the island's floats and constants.
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    if (!n.domain.empty() || has_subgraph(n)) continue;
    if (n.op_type == "Constant") {
      for (const auto& o : n.outputs) constants.insert(o);
      continue;
    }
    bool seed = cast_to(n) == ir::DataType::kFloat && !n.inputs.empty() && is_integer(elem(n.inputs[0]));
    bool from_island = false, other = false;
    for (const auto& v : n.inputs) {
      if (!is_float(v)) continue;
      if (island_values.count(v))
        from_island = true;
      else if (!constants.count(v))
        other = true;
    }
    bool back = is_integer(cast_to(n)) && from_island && !other;
    bool computes =
        from_island && !other &&
        std::any_of(n.outputs.begin(), n.outputs.end(), [&](const auto& o) { return is_float(o); });
    if (!seed && !back && !computes) continue;
    in[i] = true;
    for (const auto& o : n.outputs)
      if (is_float(o)) island_values.insert(o);
  }
  // Backward: a float result read outside the island (a graph output, a subgraph, any node not in it)
  // means the island's values are data after all.
  std::unordered_set<std::string> outside;
  for (const auto& o : g.outputs) outside.insert(o.name);
  std::unordered_map<std::string, std::vector<size_t>> readers;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const auto& v : g.nodes[i].inputs) readers[v].push_back(i);
    for (const auto& a : g.nodes[i].attributes)
      for (const auto& sub : a.graphs)
        for (const auto& v : outer_values(*sub)) outside.insert(v);
  }
  for (size_t i = g.nodes.size(); i-- > 0;) {
    if (!in[i]) continue;
    for (const auto& o : g.nodes[i].outputs) {
      if (!is_float(o)) continue;
      bool escapes = outside.count(o) > 0;
      for (size_t r : readers[o]) escapes |= !in[r];
      if (escapes) in[i] = false;
    }
  }
  std::unordered_set<ir::NodeId> ids;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (in[i]) ids.insert(g.nodes[i].id);
  return ids;
}

}  // namespace tessera::transforms
