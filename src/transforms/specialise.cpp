#include "transforms/specialise.h"

#include <fmt/format.h>

#include <set>
#include <utility>
#include <vector>

#include "transforms/transform.h"

namespace tessera::transforms {

namespace {

struct Signature {
  std::vector<std::string> inputs;  // element types (type_string), "" where unknown
  std::vector<ir::Attribute> attributes;
  bool operator==(const Signature& o) const { return inputs == o.inputs && attributes == o.attributes; }
};

bool calls(const ir::Node& n, const ir::Function& f) {
  return n.op_type == f.name && ir::canonical_domain(n.domain) == ir::canonical_domain(f.domain) &&
         n.overload == f.overload;
}

Signature signature(const ir::Node& call, const std::unordered_map<std::string, ir::Type>& types) {
  Signature s;
  for (const auto& v : call.inputs) {
    auto t = types.find(v);
    s.inputs.push_back(v.empty() || t == types.end() ? std::string() : t->second.type_string());
  }
  s.attributes = call.attributes;
  return s;
}

void rename_body_nodes(ir::Graph& g, NameTable& names) {
  for (auto& n : g.nodes) {
    if (!n.name.empty()) n.name = names.fresh(n.name);
    for (auto& a : n.attributes)
      for (auto& sub : a.graphs) rename_body_nodes(*sub, names);
  }
}

std::string free_function_name(const ir::Model& m, const ir::Function& f, int k) {
  std::string name = fmt::format("{}_{}", f.name, k);
  while (m.find_function(f.domain, name, f.overload)) name += "_";
  return name;
}

}  // namespace

int specialise_functions(ir::Model& m, const std::unordered_map<std::string, ir::Type>& main_types,
                         bool rename_nodes, const std::function<bool(const ir::Function&)>& select) {
  NameTable names(m);
  int added = 0;
  size_t count = m.functions.size();  // copies are appended: not visited again
  for (size_t k = 0; k < count; ++k) {
    if (select && !select(m.functions[k])) continue;
    std::vector<Signature> seen;
    std::vector<std::vector<size_t>> callers;  // main-graph node positions per signature
    for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
      if (!calls(m.graph.nodes[i], m.functions[k])) continue;
      Signature s = signature(m.graph.nodes[i], main_types);
      size_t j = 0;
      while (j < seen.size() && !(seen[j] == s)) ++j;
      if (j == seen.size()) {
        seen.push_back(std::move(s));
        callers.emplace_back();
      }
      callers[j].push_back(i);
    }
    for (size_t j = 1; j < callers.size(); ++j) {
      ir::Function copy = m.functions[k];
      copy.name = free_function_name(m, copy, static_cast<int>(j) + 1);
      if (rename_nodes) rename_body_nodes(copy.body, names);
      for (size_t i : callers[j]) m.graph.nodes[i].op_type = copy.name;
      m.functions.push_back(std::move(copy));
      ++added;
    }
  }
  return added;
}

}  // namespace tessera::transforms
