#include "ir/commands/node_commands.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/commands/add_node_index.h"
#include "ir/commands/name_index.h"

namespace tessera::ir {

namespace {
template <class T>
void insert_at(std::vector<T>& v, size_t i, T x) {
  v.insert(v.begin() + static_cast<ptrdiff_t>(i), std::move(x));
}
template <class T>
void erase_at(std::vector<T>& v, size_t i) {
  v.erase(v.begin() + static_cast<ptrdiff_t>(i));
}
}  // namespace

AddNode::AddNode(GraphPath path, Node node, size_t position)
    : GraphCommand(std::move(path)), node_(std::move(node)), position_(position) {}

void AddNode::apply(Model& m) {
  std::vector<Graph*> scopes = resolve_scopes(m, path_);
  apply_to(scopes, nullptr);
}

void AddNode::apply_indexed(Model& m, AddNodeIndex& index) {
  std::vector<Graph*> scopes = resolve_scopes(m, path_);
  apply_to(scopes, &index);
}

// With an index, a name found there goes through the scanning check, which names the graph that holds
// it: errors read the same either way, and only the error path pays for the scan.
void AddNode::apply_to(std::vector<Graph*>& scopes, AddNodeIndex* index) {
  Graph& g = *scopes.back();
  if (node_.op_type.empty()) throw CommandError("a node needs an op type");
  if (position_ != SIZE_MAX && position_ > g.nodes.size()) {
    throw CommandError(fmt::format("position {} is out of range for graph {} ({} nodes)", position_,
                                   graph_label(g), g.nodes.size()));
  }
  // Outside a batch's run of additions, the history's name index (name_index.h) when one is active.
  const NameIndex* names = index ? nullptr : NameIndex::active_for(g);
  bool name_taken = !node_.name.empty() && (!index || index->node_names.count(node_.name)) &&
                    (!names || names->has_node_name(node_.name)) && g.find_node(node_.name);
  if (name_taken) {
    throw CommandError(
        fmt::format("a node named '{}' already exists in graph {}", node_.name, graph_label(g)));
  }
  for (size_t i = 0; i < node_.outputs.size(); ++i) {
    const std::string& out = node_.outputs[i];
    if (out.empty()) continue;
    if (std::find(node_.outputs.begin(), node_.outputs.begin() + static_cast<ptrdiff_t>(i), out) !=
        node_.outputs.begin() + static_cast<ptrdiff_t>(i)) {
      throw CommandError(fmt::format("output '{}' appears twice in the new node", out));
    }
    bool maybe_taken = index ? index->taken_values.count(out) > 0 : !names || names->has_value(out);
    if (maybe_taken) require_new_value(scopes, out);
  }
  // The id is a function of the graph's state, so redo, which sees the state the first apply saw,
  // gives the node the same id again and commands recorded after this one still find it. (A
  // remembered id could be taken by then if this command were replayed elsewhere.)
  next_id_before_ = g.next_node_id;
  id_ = g.next_node_id;
  auto id_taken = [&](NodeId id) {
    if (index) return index->ids.count(id) > 0;
    return names ? names->has_node_id(id) : g.find_node(id) != nullptr;
  };
  while (id_taken(id_)) ++id_;  // a graph built by hand may have ids at or past its counter
  Node n = node_;
  n.id = id_;
  size_t at = std::min(position_, g.nodes.size());
  insert_at(g.nodes, at, std::move(n));
  g.next_node_id = id_ + 1;
  if (index) index->added(g.nodes[at]);
}

// Batches undo last first, so the node is most often the graph's last: search from the back.
void AddNode::undo(Model& m) {
  Graph& g = graph(m);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    if (g.nodes[i].id != id_) continue;
    erase_at(g.nodes, i);
    break;
  }
  g.next_node_id = next_id_before_;
}

std::string AddNode::description() const {
  if (node_.name.empty()) return fmt::format("Add {} node", node_.op_type);
  return fmt::format("Add node '{}' ({})", node_.name, node_.op_type);
}

void RemoveNode::apply(Model& m) {
  Graph& g = graph(m);
  index_ = g.node_index(node(g).id);
  removed_ = std::move(g.nodes[index_]);
  erase_at(g.nodes, index_);
}

// Undo moves what apply kept back into the model: redo's apply takes it out again.
void RemoveNode::undo(Model& m) {
  insert_at(graph(m).nodes, index_, std::move(removed_));
}

RenameNode::RenameNode(GraphPath path, NodeRef node, std::string new_name)
    : NodeCommand(std::move(path), std::move(node)), new_name_(std::move(new_name)) {}

void RenameNode::apply(Model& m) {
  Graph& g = graph(m);
  Node& n = node(g);
  // A name the history's index does not hold is free without a scan (name_index.h).
  const NameIndex* names = NameIndex::active_for(g);
  bool maybe_taken = !new_name_.empty() && (!names || names->has_node_name(new_name_));
  const Node* other = maybe_taken ? g.find_node(new_name_) : nullptr;
  if (other && other != &n) {
    throw CommandError(
        fmt::format("a node named '{}' already exists in graph {}", new_name_, graph_label(g)));
  }
  old_name_ = n.name;
  n.name = new_name_;
}

void RenameNode::undo(Model& m) {
  graph(m).find_node(ref_.id)->name = old_name_;
}

std::string RenameNode::description() const {
  return fmt::format("Rename node {} to '{}'", label_, new_name_);
}

SetAttribute::SetAttribute(GraphPath path, NodeRef node, Attribute attr)
    : NodeCommand(std::move(path), std::move(node)), attr_(std::move(attr)) {}

void SetAttribute::apply(Model& m) {
  Graph& g = graph(m);
  Node& n = node(g);
  require_name(attr_.name, "an attribute");
  if (attr_.type == AttrType::kUndefined && !attr_.is_reference()) {
    throw CommandError(fmt::format("attribute '{}' has no type", attr_.name));
  }
  auto it = std::find_if(n.attributes.begin(), n.attributes.end(),
                         [&](const Attribute& a) { return a.name == attr_.name; });
  index_ = static_cast<size_t>(it - n.attributes.begin());
  if (it == n.attributes.end()) {
    previous_.reset();
    n.attributes.push_back(attr_);
    return;
  }
  previous_ = std::move(*it);
  *it = attr_;
}

void SetAttribute::undo(Model& m) {
  Node& n = *graph(m).find_node(ref_.id);
  if (previous_) {
    n.attributes[index_] = std::move(*previous_);
  } else {
    erase_at(n.attributes, index_);
  }
}

std::string SetAttribute::description() const {
  return fmt::format("Set attribute '{}' of node {}", attr_.name, label_);
}

ResetAttribute::ResetAttribute(GraphPath path, NodeRef node, std::string attr_name)
    : NodeCommand(std::move(path), std::move(node)), name_(std::move(attr_name)) {}

void ResetAttribute::apply(Model& m) {
  Graph& g = graph(m);
  Node& n = node(g);
  auto it = std::find_if(n.attributes.begin(), n.attributes.end(),
                         [&](const Attribute& a) { return a.name == name_; });
  if (it == n.attributes.end()) {
    throw CommandError(fmt::format("node {} has no attribute '{}'", label_, name_));
  }
  index_ = static_cast<size_t>(it - n.attributes.begin());
  removed_ = std::move(*it);
  n.attributes.erase(it);
}

void ResetAttribute::undo(Model& m) {
  insert_at(graph(m).find_node(ref_.id)->attributes, index_, std::move(removed_));
}

std::string ResetAttribute::description() const {
  return fmt::format("Reset attribute '{}' of node {}", name_, label_);
}

}  // namespace tessera::ir
