#include "check/scope.h"

namespace tessera::check {

const ValueFacts* Scope::find(std::string_view name) const {
  for (const Scope* s = this; s; s = s->parent_) {
    auto it = s->values_.find(name);
    if (it != s->values_.end()) return &it->second;
  }
  return nullptr;
}

ValueFacts* Scope::find_here(std::string_view name) {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

}  // namespace tessera::check
