#include "ir/commands/wiring_commands.h"

#include <fmt/format.h>

#include <utility>

namespace tessera::ir {

namespace {
void check_index(size_t index, size_t count, bool may_append, const char* what, const std::string& label) {
  if (index < count || (may_append && index == count)) return;
  throw CommandError(fmt::format("{} index {} is out of range for node {} ({} {}{})", what, index, label,
                                 count, what, count == 1 ? "" : "s"));
}
}  // namespace

Connect::Connect(GraphPath path, NodeRef node, size_t index, std::string value)
    : NodeCommand(std::move(path), std::move(node)), index_(index), value_(std::move(value)) {}

void Connect::apply(Model& m) {
  std::vector<Graph*> scopes = resolve_scopes(m, path_);
  Node& n = node(*scopes.back());
  check_index(index_, n.inputs.size(), true, "input", label_);
  if (value_.empty()) throw CommandError("Connect needs a value name; use Disconnect to omit an input");
  require_visible_value(scopes, value_);
  if (index_ == n.inputs.size()) {
    previous_.reset();
    n.inputs.push_back(value_);
    return;
  }
  previous_ = std::exchange(n.inputs[index_], value_);
}

void Connect::undo(Model& m) {
  Node& n = *graph(m).find_node(ref_.id);
  if (previous_) {
    n.inputs[index_] = *previous_;
  } else {
    n.inputs.pop_back();
  }
}

std::string Connect::description() const {
  return fmt::format("Connect '{}' to input {} of node {}", value_, index_, label_);
}

Disconnect::Disconnect(GraphPath path, NodeRef node, size_t index)
    : NodeCommand(std::move(path), std::move(node)), index_(index) {}

void Disconnect::apply(Model& m) {
  Node& n = node(graph(m));
  check_index(index_, n.inputs.size(), false, "input", label_);
  previous_ = n.inputs[index_];
  dropped_ = index_ + 1 == n.inputs.size();
  if (dropped_) {
    n.inputs.pop_back();
  } else {
    n.inputs[index_].clear();
  }
}

void Disconnect::undo(Model& m) {
  Node& n = *graph(m).find_node(ref_.id);
  if (dropped_) {
    n.inputs.push_back(previous_);
  } else {
    n.inputs[index_] = previous_;
  }
}

std::string Disconnect::description() const {
  return fmt::format("Disconnect input {} of node {}", index_, label_);
}

SetNodeOutput::SetNodeOutput(GraphPath path, NodeRef node, size_t index, std::string value)
    : NodeCommand(std::move(path), std::move(node)), index_(index), value_(std::move(value)) {}

void SetNodeOutput::apply(Model& m) {
  std::vector<Graph*> scopes = resolve_scopes(m, path_);
  Node& n = node(*scopes.back());
  check_index(index_, n.outputs.size(), !value_.empty(), "output", label_);
  bool same = index_ < n.outputs.size() && n.outputs[index_] == value_;
  if (!value_.empty() && !same) require_new_value(scopes, value_);
  dropped_ = value_.empty() && index_ + 1 == n.outputs.size();
  if (dropped_) {
    previous_ = n.outputs.back();
    n.outputs.pop_back();
  } else if (index_ == n.outputs.size()) {
    previous_.reset();
    n.outputs.push_back(value_);
  } else {
    previous_ = std::exchange(n.outputs[index_], value_);
  }
}

void SetNodeOutput::undo(Model& m) {
  Node& n = *graph(m).find_node(ref_.id);
  if (dropped_) {
    n.outputs.push_back(*previous_);
  } else if (previous_) {
    n.outputs[index_] = *previous_;
  } else {
    n.outputs.pop_back();
  }
}

std::string SetNodeOutput::description() const {
  if (value_.empty()) return fmt::format("Remove output {} of node {}", index_, label_);
  return fmt::format("Set output {} of node {} to '{}'", index_, label_, value_);
}

}  // namespace tessera::ir
