#include "ops/registry.h"

#include <algorithm>

namespace tessera::ops {

const OpRegistry& OpRegistry::global() {
  static const OpRegistry reg = [] {
    OpRegistry r;
    register_all_ops(r);
    return r;
  }();
  return reg;
}

void OpRegistry::add(OpSchema schema) {
  auto& list = ops_[{std::string(ir::canonical_domain(schema.domain())), schema.name()}];
  auto pos = std::lower_bound(list.begin(), list.end(), schema.since_version(),
                              [](const OpSchema& s, int v) { return s.since_version() < v; });
  list.insert(pos, std::move(schema));
}

const OpSchema* OpRegistry::find(std::string_view domain, std::string_view name, int opset_version) const {
  auto it = ops_.find(std::make_pair(std::string(ir::canonical_domain(domain)), std::string(name)));
  if (it == ops_.end()) return nullptr;
  const OpSchema* best = nullptr;
  for (const OpSchema& s : it->second) {
    if (s.since_version() <= opset_version) best = &s;
  }
  return best;
}

std::vector<const OpSchema*> OpRegistry::versions(std::string_view domain, std::string_view name) const {
  std::vector<const OpSchema*> out;
  auto it = ops_.find(std::make_pair(std::string(ir::canonical_domain(domain)), std::string(name)));
  if (it == ops_.end()) return out;
  for (const OpSchema& s : it->second) out.push_back(&s);
  return out;
}

std::vector<const OpSchema*> OpRegistry::all() const {
  std::vector<const OpSchema*> out;
  for (const auto& [key, list] : ops_) {
    for (const OpSchema& s : list) out.push_back(&s);
  }
  return out;
}

int OpRegistry::latest_version(std::string_view domain) const {
  int best = 0;
  for (const auto& [key, list] : ops_) {
    if (key.first == ir::canonical_domain(domain) && !list.empty()) best = std::max(best, list.back().since_version());
  }
  return best;
}

}  // namespace tessera::ops
