#include "transforms/merge_constants.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/tensor.h"

namespace tessera::transforms {

namespace {

void reads_in_subgraphs(const ir::Graph& g, std::unordered_set<std::string>& reads) {
  for (const auto& o : g.outputs) reads.insert(o.name);
  for (const auto& n : g.nodes) {
    for (const auto& in : n.inputs) reads.insert(in);
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs) reads_in_subgraphs(*sub, reads);
  }
}

// Type, shape and bytes: equal keys are equal tensors.
std::string key_of(const ir::Tensor& t) {
  std::string key = fmt::format("{}:", static_cast<int>(t.dtype));
  for (int64_t d : t.dims) key += fmt::format("{},", d);
  auto b = t.bytes();
  key.append(reinterpret_cast<const char*>(b.data()), b.size());
  return key;
}

}  // namespace

int merge_equal_constants(ir::Graph& g, std::vector<std::string>& details, size_t max_bytes) {
  std::unordered_set<std::string> excluded;
  for (const auto& n : g.nodes)
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs) reads_in_subgraphs(*sub, excluded);
  for (const auto& v : g.inputs) excluded.insert(v.name);
  for (const auto& v : g.outputs) excluded.insert(v.name);
  std::unordered_map<std::string, std::string> first;   // key -> the first initializer's name
  std::unordered_map<std::string, std::string> rename;  // duplicate -> that name
  for (const auto& t : g.initializers) {
    if (excluded.count(t.name) || t.external || t.dtype == ir::DataType::kString || !t.data) continue;
    if (t.bytes().size() > max_bytes) continue;
    auto [it, fresh] = first.emplace(key_of(t), t.name);
    if (!fresh) rename.emplace(t.name, it->second);
  }
  if (rename.empty()) return 0;
  for (auto& n : g.nodes)
    for (auto& in : n.inputs)
      if (auto r = rename.find(in); r != rename.end()) in = r->second;
  std::erase_if(g.initializers, [&](const ir::Tensor& t) { return rename.count(t.name) > 0; });  // unread now
  for (const auto& [from, to] : rename)
    details.push_back(fmt::format("merge_equal_constants: '{}' read as '{}'", from, to));
  return static_cast<int>(rename.size());
}

}  // namespace tessera::transforms
