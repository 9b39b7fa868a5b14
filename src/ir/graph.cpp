#include "ir/graph.h"

#include <algorithm>

namespace tessera::ir {

const Attribute* Node::attr(std::string_view attr_name) const {
  for (const Attribute& a : attributes) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

Attribute* Node::attr(std::string_view attr_name) {
  return const_cast<Attribute*>(static_cast<const Node*>(this)->attr(attr_name));
}

bool Node::operator==(const Node& o) const {
  return name == o.name && op_type == o.op_type && domain == o.domain && overload == o.overload &&
         inputs == o.inputs && outputs == o.outputs && attributes == o.attributes &&
         doc_string == o.doc_string && metadata_props == o.metadata_props &&
         device_configurations == o.device_configurations && unknown_fields == o.unknown_fields;
}

NodeId Graph::add_node(Node n, size_t pos) {
  n.id = next_node_id++;
  NodeId id = n.id;
  if (pos >= nodes.size()) {
    nodes.push_back(std::move(n));
  } else {
    nodes.insert(nodes.begin() + static_cast<ptrdiff_t>(pos), std::move(n));
  }
  return id;
}

size_t Graph::node_index(NodeId id) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].id == id) return i;
  }
  return SIZE_MAX;
}

Node* Graph::find_node(NodeId id) {
  size_t i = node_index(id);
  return i == SIZE_MAX ? nullptr : &nodes[i];
}

const Node* Graph::find_node(NodeId id) const {
  size_t i = node_index(id);
  return i == SIZE_MAX ? nullptr : &nodes[i];
}

Node* Graph::find_node(std::string_view node_name) {
  for (Node& n : nodes) {
    if (n.name == node_name) return &n;
  }
  return nullptr;
}

Tensor* Graph::find_initializer(std::string_view tensor_name) {
  for (Tensor& t : initializers) {
    if (t.name == tensor_name) return &t;
  }
  return nullptr;
}

const Tensor* Graph::find_initializer(std::string_view tensor_name) const {
  return const_cast<Graph*>(this)->find_initializer(tensor_name);
}

namespace {
const ValueInfo* find_in(const std::vector<ValueInfo>& list, std::string_view name) {
  auto it = std::find_if(list.begin(), list.end(), [&](const ValueInfo& v) { return v.name == name; });
  return it == list.end() ? nullptr : &*it;
}
}  // namespace

const ValueInfo* Graph::find_input(std::string_view value_name) const {
  return find_in(inputs, value_name);
}
const ValueInfo* Graph::find_output(std::string_view value_name) const {
  return find_in(outputs, value_name);
}
const ValueInfo* Graph::find_value_info(std::string_view value_name) const {
  return find_in(value_info, value_name);
}

bool Graph::operator==(const Graph& o) const {
  return name == o.name && doc_string == o.doc_string && nodes == o.nodes && initializers == o.initializers &&
         sparse_initializers == o.sparse_initializers && inputs == o.inputs && outputs == o.outputs &&
         value_info == o.value_info && quantization_annotation == o.quantization_annotation &&
         metadata_props == o.metadata_props && unknown_fields == o.unknown_fields;
}

}  // namespace tessera::ir
