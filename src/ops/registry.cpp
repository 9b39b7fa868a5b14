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
  auto& list = ops_[std::string(ir::canonical_domain(schema.domain()))][schema.name()];
  auto pos = std::lower_bound(list.begin(), list.end(), schema.since_version(),
                              [](const OpSchema& s, int v) { return s.since_version() < v; });
  list.insert(pos, std::move(schema));
}

const OpRegistry::Versions* OpRegistry::lookup(std::string_view domain, std::string_view name) const {
  auto d = ops_.find(ir::canonical_domain(domain));
  if (d == ops_.end()) return nullptr;
  auto n = d->second.find(name);
  return n == d->second.end() ? nullptr : &n->second;
}

const OpSchema* OpRegistry::find(std::string_view domain, std::string_view name, int opset_version) const {
  const Versions* list = lookup(domain, name);
  if (!list) return nullptr;
  const OpSchema* best = nullptr;
  for (const OpSchema& s : *list) {
    if (s.since_version() <= opset_version) best = &s;
  }
  return best;
}

std::vector<const OpSchema*> OpRegistry::versions(std::string_view domain, std::string_view name) const {
  std::vector<const OpSchema*> out;
  if (const Versions* list = lookup(domain, name)) {
    for (const OpSchema& s : *list) out.push_back(&s);
  }
  return out;
}

std::vector<const OpSchema*> OpRegistry::all() const {
  std::vector<const OpSchema*> out;
  for (const auto& [domain, names] : ops_) {
    for (const auto& [name, list] : names) {
      for (const OpSchema& s : list) out.push_back(&s);
    }
  }
  return out;
}

int OpRegistry::latest_version(std::string_view domain) const {
  int best = 0;
  auto d = ops_.find(ir::canonical_domain(domain));
  if (d == ops_.end()) return best;
  for (const auto& [name, list] : d->second) {
    if (!list.empty()) best = std::max(best, list.back().since_version());
  }
  return best;
}

}  // namespace tessera::ops
