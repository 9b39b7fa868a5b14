#include "ir/commands/model_commands.h"

#include <fmt/format.h>

#include <algorithm>

namespace tessera::ir {

namespace {

GraphPath::FunctionKey key_of(const Function& f) {
  return {f.domain, f.name, f.overload};
}

size_t function_index(const Model& m, const GraphPath::FunctionKey& k) {
  auto it =
      std::find_if(m.functions.begin(), m.functions.end(), [&](const Function& f) { return key_of(f) == k; });
  return it == m.functions.end() ? SIZE_MAX : static_cast<size_t>(it - m.functions.begin());
}

size_t function_index_or_throw(const Model& m, const GraphPath::FunctionKey& k) {
  size_t i = function_index(m, k);
  if (i == SIZE_MAX)
    throw CommandError(fmt::format("function '{}' does not exist in the model", k.to_string()));
  return i;
}

}  // namespace

void AddFunction::apply(Model& m) {
  if (function_.name.empty()) throw CommandError("a function needs a name");
  if (function_index(m, key_of(function_)) != SIZE_MAX) {
    throw CommandError(
        fmt::format("function '{}' already exists in the model", key_of(function_).to_string()));
  }
  m.functions.push_back(function_);
}

void AddFunction::undo(Model& m) {
  m.functions.pop_back();
}

std::string AddFunction::description() const {
  return fmt::format("Add function '{}'", key_of(function_).to_string());
}

RemoveFunction::RemoveFunction(std::string domain, std::string name, std::string overload)
    : key_{std::move(domain), std::move(name), std::move(overload)} {}

void RemoveFunction::apply(Model& m) {
  index_ = function_index_or_throw(m, key_);
  removed_ = std::move(m.functions[index_]);
  m.functions.erase(m.functions.begin() + static_cast<ptrdiff_t>(index_));
}

void RemoveFunction::undo(Model& m) {
  m.functions.insert(m.functions.begin() + static_cast<ptrdiff_t>(index_), std::move(removed_));
}

std::string RemoveFunction::description() const {
  return fmt::format("Remove function '{}'", key_.to_string());
}

void ReplaceFunction::apply(Model& m) {
  index_ = function_index_or_throw(m, key_of(function_));
  std::swap(m.functions[index_], function_);
}

void ReplaceFunction::undo(Model& m) {
  std::swap(m.functions[index_], function_);
}

std::string ReplaceFunction::description() const {
  return fmt::format("Replace function '{}'", key_of(function_).to_string());
}

SetOpsetImport::SetOpsetImport(std::string domain, std::optional<int64_t> version)
    : domain_(std::move(domain)), version_(version) {}

void SetOpsetImport::apply(Model& m) {
  if (version_ && *version_ < 1) throw CommandError(fmt::format("opset version {} is not valid", *version_));
  auto it = std::find_if(m.opset_imports.begin(), m.opset_imports.end(), [&](const OpsetImport& o) {
    return canonical_domain(o.domain) == canonical_domain(domain_);
  });
  index_ = static_cast<size_t>(it - m.opset_imports.begin());
  if (it == m.opset_imports.end()) {
    if (!version_) throw CommandError(fmt::format("the model does not import domain '{}'", domain_));
    previous_.reset();
    m.opset_imports.push_back({domain_, *version_});
    return;
  }
  previous_ = *it;
  if (version_) {
    it->version = *version_;
  } else {
    m.opset_imports.erase(it);
  }
}

void SetOpsetImport::undo(Model& m) {
  if (!previous_) {
    m.opset_imports.pop_back();
  } else if (version_) {
    m.opset_imports[index_] = *previous_;
  } else {
    m.opset_imports.insert(m.opset_imports.begin() + static_cast<ptrdiff_t>(index_), *previous_);
  }
}

std::string SetOpsetImport::description() const {
  std::string d = domain_.empty() ? "ai.onnx" : domain_;
  if (!version_) return fmt::format("Remove opset import '{}'", d);
  return fmt::format("Import opset {} of '{}'", *version_, d);
}

namespace {
template <class T>
void swap_if(std::optional<T>& mine, T& model_field) {
  if (mine) std::swap(*mine, model_field);
}
}  // namespace

void SetModelMetadata::swap_with(Model& m) {
  swap_if(md_.doc_string, m.doc_string);
  swap_if(md_.producer_name, m.producer_name);
  swap_if(md_.producer_version, m.producer_version);
  swap_if(md_.domain, m.domain);
  swap_if(md_.model_version, m.model_version);
  swap_if(md_.metadata_props, m.metadata_props);
  swap_if(md_.graph_name, m.graph.name);
}

}  // namespace tessera::ir
