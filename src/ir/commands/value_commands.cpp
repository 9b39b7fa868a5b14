#include "ir/commands/value_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "ir/commands/scope.h"

namespace tessera::ir {

namespace {

template <class T>
size_t index_of(const std::vector<T>& list, std::string_view name) {
  auto it = std::find_if(list.begin(), list.end(), [&](const T& x) { return x.name == name; });
  return it == list.end() ? SIZE_MAX : static_cast<size_t>(it - list.begin());
}
template <class T>
void insert_at(std::vector<T>& v, size_t i, T x) {
  v.insert(v.begin() + static_cast<ptrdiff_t>(std::min(i, v.size())), std::move(x));
}
template <class T>
void erase_at(std::vector<T>& v, size_t i) {
  v.erase(v.begin() + static_cast<ptrdiff_t>(i));
}

void check_position(size_t position, size_t count, const Graph& g, const char* what) {
  if (position == SIZE_MAX || position <= count) return;
  throw CommandError(fmt::format("position {} is out of range for the {} of graph {} ({})", position, what,
                                 graph_label(g), count));
}

// An initializer and a graph input may share a name (an input with a default value), so adding either
// checks every other kind of definition: node outputs, sparse initializers, enclosing and nested graphs.
void require_free_for_input_or_initializer(const std::vector<Graph*>& scopes, const std::string& name) {
  const Graph& g = *scopes.back();
  bool sparse = std::any_of(g.sparse_initializers.begin(), g.sparse_initializers.end(),
                            [&](const SparseTensor& t) { return t.values.name == name; });
  const Graph* owner = node_produces(g, name) || sparse ? &g : outer_definition(scopes, name);
  if (!owner) owner = nested_definition(g, name);
  if (owner)
    throw CommandError(
        fmt::format("a value named '{}' already exists in graph {}", name, graph_label(*owner)));
}

}  // namespace

AddInitializer::AddInitializer(GraphPath path, Tensor tensor)
    : GraphCommand(std::move(path)), tensor_(std::move(tensor)) {}

void AddInitializer::apply(Model& m) {
  std::vector<Graph*> scopes = resolve_scopes(m, path_);
  Graph& g = *scopes.back();
  require_name(tensor_.name, "an initializer");
  if (g.find_initializer(tensor_.name)) {
    throw CommandError(
        fmt::format("an initializer named '{}' already exists in graph {}", tensor_.name, graph_label(g)));
  }
  require_free_for_input_or_initializer(scopes, tensor_.name);
  g.initializers.push_back(tensor_);
}

void AddInitializer::undo(Model& m) {
  graph(m).initializers.pop_back();
}

std::string AddInitializer::description() const {
  return fmt::format("Add initializer '{}'", tensor_.name);
}

ReplaceInitializer::ReplaceInitializer(GraphPath path, Tensor tensor)
    : GraphCommand(std::move(path)), tensor_(std::move(tensor)) {}

void ReplaceInitializer::apply(Model& m) {
  Graph& g = graph(m);
  index_ = index_of(g.initializers, tensor_.name);
  if (index_ == SIZE_MAX) {
    throw CommandError(
        fmt::format("initializer '{}' does not exist in graph {}", tensor_.name, graph_label(g)));
  }
  std::swap(g.initializers[index_], tensor_);
}

void ReplaceInitializer::undo(Model& m) {
  std::swap(graph(m).initializers[index_], tensor_);
}

std::string ReplaceInitializer::description() const {
  return fmt::format("Replace initializer '{}'", tensor_.name);
}

RemoveInitializer::RemoveInitializer(GraphPath path, std::string name)
    : GraphCommand(std::move(path)), name_(std::move(name)) {}

void RemoveInitializer::apply(Model& m) {
  Graph& g = graph(m);
  index_ = index_of(g.initializers, name_);
  if (index_ == SIZE_MAX) {
    throw CommandError(fmt::format("initializer '{}' does not exist in graph {}", name_, graph_label(g)));
  }
  removed_ = std::move(g.initializers[index_]);
  erase_at(g.initializers, index_);
}

void RemoveInitializer::undo(Model& m) {
  insert_at(graph(m).initializers, index_, std::move(removed_));
}

std::string RemoveInitializer::description() const {
  return fmt::format("Remove initializer '{}'", name_);
}

AddGraphInput::AddGraphInput(GraphPath path, ValueInfo input, size_t position)
    : GraphCommand(std::move(path)), input_(std::move(input)), position_(position) {}

void AddGraphInput::apply(Model& m) {
  std::vector<Graph*> scopes = resolve_scopes(m, path_);
  Graph& g = *scopes.back();
  require_name(input_.name, "a graph input");
  check_position(position_, g.inputs.size(), g, "inputs");
  if (g.find_input(input_.name)) {
    throw CommandError(fmt::format("graph {} already has an input named '{}'", graph_label(g), input_.name));
  }
  require_free_for_input_or_initializer(scopes, input_.name);
  index_ = std::min(position_, g.inputs.size());
  insert_at(g.inputs, index_, input_);
}

void AddGraphInput::undo(Model& m) {
  erase_at(graph(m).inputs, index_);
}

std::string AddGraphInput::description() const {
  return fmt::format("Add graph input '{}'", input_.name);
}

RemoveGraphInput::RemoveGraphInput(GraphPath path, std::string name)
    : GraphCommand(std::move(path)), name_(std::move(name)) {}

void RemoveGraphInput::apply(Model& m) {
  Graph& g = graph(m);
  index_ = index_of(g.inputs, name_);
  if (index_ == SIZE_MAX) {
    throw CommandError(fmt::format("graph {} has no input named '{}'", graph_label(g), name_));
  }
  removed_ = std::move(g.inputs[index_]);
  erase_at(g.inputs, index_);
}

void RemoveGraphInput::undo(Model& m) {
  insert_at(graph(m).inputs, index_, std::move(removed_));
}

std::string RemoveGraphInput::description() const {
  return fmt::format("Remove graph input '{}'", name_);
}

AddGraphOutput::AddGraphOutput(GraphPath path, ValueInfo output, size_t position)
    : GraphCommand(std::move(path)), output_(std::move(output)), position_(position) {}

void AddGraphOutput::apply(Model& m) {
  std::vector<Graph*> scopes = resolve_scopes(m, path_);
  Graph& g = *scopes.back();
  require_name(output_.name, "a graph output");
  check_position(position_, g.outputs.size(), g, "outputs");
  if (g.find_output(output_.name)) {
    throw CommandError(
        fmt::format("graph {} already has an output named '{}'", graph_label(g), output_.name));
  }
  require_visible_value(scopes, output_.name);
  index_ = std::min(position_, g.outputs.size());
  insert_at(g.outputs, index_, output_);
}

void AddGraphOutput::undo(Model& m) {
  erase_at(graph(m).outputs, index_);
}

std::string AddGraphOutput::description() const {
  return fmt::format("Add graph output '{}'", output_.name);
}

RemoveGraphOutput::RemoveGraphOutput(GraphPath path, std::string name)
    : GraphCommand(std::move(path)), name_(std::move(name)) {}

void RemoveGraphOutput::apply(Model& m) {
  Graph& g = graph(m);
  index_ = index_of(g.outputs, name_);
  if (index_ == SIZE_MAX) {
    throw CommandError(fmt::format("graph {} has no output named '{}'", graph_label(g), name_));
  }
  removed_ = std::move(g.outputs[index_]);
  erase_at(g.outputs, index_);
}

void RemoveGraphOutput::undo(Model& m) {
  insert_at(graph(m).outputs, index_, std::move(removed_));
}

std::string RemoveGraphOutput::description() const {
  return fmt::format("Remove graph output '{}'", name_);
}

SetValueInfo::SetValueInfo(GraphPath path, ValueInfo info)
    : GraphCommand(std::move(path)), info_(std::move(info)) {}

std::vector<ValueInfo>& SetValueInfo::list_of(Graph& g, List l) {
  switch (l) {
    case List::kInputs:
      return g.inputs;
    case List::kOutputs:
      return g.outputs;
    case List::kValueInfo:
      break;
  }
  return g.value_info;
}

void SetValueInfo::apply(Model& m) {
  Graph& g = graph(m);
  require_name(info_.name, "a value");
  if (!mentions_value(g, info_.name)) {
    throw CommandError(fmt::format("value '{}' does not exist in graph {}", info_.name, graph_label(g)));
  }
  edits_.clear();
  for (List l : {List::kInputs, List::kOutputs}) {
    size_t i = index_of(list_of(g, l), info_.name);
    if (i != SIZE_MAX) edits_.push_back({l, i, std::exchange(list_of(g, l)[i], info_)});
  }
  if (!edits_.empty()) return;
  size_t i = index_of(g.value_info, info_.name);
  if (i != SIZE_MAX) {
    edits_.push_back({List::kValueInfo, i, std::exchange(g.value_info[i], info_)});
    return;
  }
  edits_.push_back({List::kValueInfo, g.value_info.size(), std::nullopt});
  g.value_info.push_back(info_);
}

void SetValueInfo::undo(Model& m) {
  Graph& g = graph(m);
  for (Edit& c : edits_) {
    std::vector<ValueInfo>& list = list_of(g, c.list);
    if (c.previous) {
      list[c.index] = std::move(*c.previous);
    } else {
      erase_at(list, c.index);
    }
  }
}

std::string SetValueInfo::description() const {
  return fmt::format("Set type of '{}' to {}", info_.name, info_.type.to_string());
}

RemoveValueInfo::RemoveValueInfo(GraphPath path, std::string name)
    : GraphCommand(std::move(path)), name_(std::move(name)) {}

void RemoveValueInfo::apply(Model& m) {
  Graph& g = graph(m);
  index_ = index_of(g.value_info, name_);
  if (index_ == SIZE_MAX) {
    throw CommandError(fmt::format("value '{}' has no value_info entry in graph {}", name_, graph_label(g)));
  }
  removed_ = std::move(g.value_info[index_]);
  erase_at(g.value_info, index_);
}

void RemoveValueInfo::undo(Model& m) {
  insert_at(graph(m).value_info, index_, std::move(removed_));
}

std::string RemoveValueInfo::description() const {
  return fmt::format("Remove value info of '{}'", name_);
}

}  // namespace tessera::ir
