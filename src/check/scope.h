// What the checker knows about the values visible in one graph: their types, constant values and
// propagated shape values. Subgraphs get a child scope that sees the outer one (ONNX lets If/Loop
// bodies read outer values by name).
#pragma once

#include <list>
#include <memory_resource>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/tensor.h"
#include "ir/type.h"

namespace tessera::check {

struct ValueFacts {
  ir::Type type;  // kind kNone when unknown
  const ir::Tensor* constant = nullptr;
  const std::vector<ir::Dim>* shape_value = nullptr;
  std::string producer;  // node name ("" for inputs/initializers), for messages
};

// Lets the maps below be searched with a string_view without building a std::string per lookup.
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class Scope {
 public:
  explicit Scope(const Scope* parent = nullptr) : parent_(parent), values_(&arena_) {}

  // Looks a value up here, then in enclosing scopes.
  const ValueFacts* find(std::string_view name) const;
  bool defined_here(std::string_view name) const { return values_.find(name) != values_.end(); }
  // `name` must outlive the scope: it points into the model being checked.
  ValueFacts& define(std::string_view name) { return values_[name]; }
  ValueFacts* find_here(std::string_view name);
  void reserve(size_t n) { values_.reserve(n); }

  // Storage that outlives the facts pointing into it (materialised Constant values, shape values).
  const ir::Tensor* keep(ir::Tensor t) { return &kept_tensors_.emplace_back(std::move(t)); }
  const std::vector<ir::Dim>* keep(std::vector<ir::Dim> v) {
    return &kept_values_.emplace_back(std::move(v));
  }

  const std::pmr::unordered_map<std::string_view, ValueFacts, NameHash>& values() const { return values_; }
  std::pmr::unordered_map<std::string_view, ValueFacts, NameHash>& values() { return values_; }

 private:
  const Scope* parent_;
  // Keys are views of names in the model, which outlives every check: no copy per value.
  // Map nodes come from an arena released with the scope: no malloc/free per value.
  std::pmr::monotonic_buffer_resource arena_;
  std::pmr::unordered_map<std::string_view, ValueFacts, NameHash> values_;
  // Lists, not deques: a default-constructed deque allocates, and the incremental checker makes a scope
  // per node it checks (50,000 on an edit at the head of a long chain); most keep nothing.
  std::list<ir::Tensor> kept_tensors_;
  std::list<std::vector<ir::Dim>> kept_values_;
};

}  // namespace tessera::check
