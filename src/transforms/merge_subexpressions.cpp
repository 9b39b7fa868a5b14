#include "transforms/merge_subexpressions.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <unordered_map>
#include <unordered_set>

#include "ir/model.h"

namespace tessera::transforms {

namespace {

bool is_random(const ir::Node& n) {
  static constexpr std::array<std::string_view, 6> kOps = {
      "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli", "Multinomial"};
  return std::find(kOps.begin(), kOps.end(), n.op_type) != kOps.end();
}

bool has_subgraph(const ir::Node& n) {
  return std::any_of(n.attributes.begin(), n.attributes.end(),
                     [](const ir::Attribute& a) { return !a.graphs.empty(); });
}

void reads_in(const ir::Graph& g, std::unordered_set<std::string>& reads) {
  for (const auto& o : g.outputs) reads.insert(o.name);
  for (const auto& n : g.nodes) {
    for (const auto& in : n.inputs) reads.insert(in);
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs) reads_in(*sub, reads);
  }
}

// What two equal computations share: operator, domain, overload, inputs, which outputs exist, attribute
// names. Attribute values are compared exactly on a match.
std::string key_of(const ir::Node& n) {
  std::string key = fmt::format("{}\n{}\n{}", ir::canonical_domain(n.domain), n.op_type, n.overload);
  for (const auto& in : n.inputs) key += "\n<" + in;
  for (const auto& out : n.outputs) key += out.empty() ? "\n-" : "\n+";
  for (const auto& a : n.attributes) key += "\n@" + a.name;
  return key;
}

}  // namespace

int merge_common_subexpressions(ir::Graph& g, std::vector<std::string>& details) {
  std::unordered_set<std::string> pinned;  // graph outputs and values subgraphs read
  for (const auto& o : g.outputs) pinned.insert(o.name);
  for (const auto& n : g.nodes)
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs) reads_in(*sub, pinned);
  std::unordered_map<std::string, std::string> rename;
  std::unordered_map<std::string, std::vector<size_t>> seen;  // key -> nodes kept with it
  std::vector<bool> gone(g.nodes.size(), false);
  int removed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    ir::Node& n = g.nodes[i];
    for (auto& in : n.inputs)
      if (auto r = rename.find(in); r != rename.end()) in = r->second;
    if (is_random(n) || has_subgraph(n) || n.outputs.empty()) continue;
    bool movable = std::none_of(n.outputs.begin(), n.outputs.end(),
                                [&](const std::string& o) { return o.empty() || pinned.count(o); });
    auto& same = seen[key_of(n)];
    auto match = std::find_if(same.begin(), same.end(),
                              [&](size_t j) { return g.nodes[j].attributes == n.attributes; });
    if (match == same.end() || !movable) {
      same.push_back(i);
      continue;
    }
    const ir::Node& earlier = g.nodes[*match];
    for (size_t k = 0; k < n.outputs.size(); ++k) rename.emplace(n.outputs[k], earlier.outputs[k]);
    details.push_back(fmt::format("merge_common_subexpressions: node '{}' ({}) computes what '{}' does",
                                  n.name, n.op_type, earlier.name));
    gone[i] = true;
    ++removed;
  }
  if (removed == 0) return 0;
  size_t k = 0;
  std::erase_if(g.nodes, [&](const ir::Node&) { return gone[k++]; });
  std::erase_if(g.value_info, [&](const ir::ValueInfo& v) { return rename.count(v.name) > 0; });
  return removed;
}

}  // namespace tessera::transforms
