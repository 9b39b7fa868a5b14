// Nodes and graphs. Values are referred to by name, as in ONNX; each node also carries a stable id,
// assigned by its graph and never written to files, so that edit commands can find it again after
// other edits renamed or moved things.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"
#include "ir/tensor.h"
#include "ir/type.h"

namespace tessera::ir {

using NodeId = uint64_t;

struct ValueInfo {
  std::string name;
  Type type;  // kind kNone when the file gives no type
  std::string doc_string;
  std::vector<StringPair> metadata_props;
  bool operator==(const ValueInfo& o) const = default;
};

struct Node {
  NodeId id = 0;
  std::string name;
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain ("ai.onnx" is normalised to "")
  std::string overload;
  std::vector<std::string> inputs;  // "" marks an omitted optional input
  std::vector<std::string> outputs;
  std::vector<Attribute> attributes;
  std::string doc_string;
  std::vector<StringPair> metadata_props;
  std::vector<std::string> device_configurations;  // serialized, kept as is
  std::string unknown_fields;

  const Attribute* attr(std::string_view attr_name) const;
  Attribute* attr(std::string_view attr_name);
  // Equality of content, ignoring the id.
  bool operator==(const Node& o) const;
};

struct Graph {
  std::string name;
  std::string doc_string;
  std::vector<Node> nodes;  // in file order (ONNX requires topological order; the checker says if not)
  std::vector<Tensor> initializers;
  std::vector<SparseTensor> sparse_initializers;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<ValueInfo> value_info;
  std::vector<std::string> quantization_annotation;  // serialized TensorAnnotation, kept as is
  std::vector<StringPair> metadata_props;
  std::string unknown_fields;
  NodeId next_node_id = 1;

  // Appends (or inserts at `pos`) a node, giving it a fresh id; returns that id.
  NodeId add_node(Node n, size_t pos = SIZE_MAX);
  Node* find_node(NodeId id);
  const Node* find_node(NodeId id) const;
  Node* find_node(std::string_view node_name);
  size_t node_index(NodeId id) const;  // SIZE_MAX when absent
  Tensor* find_initializer(std::string_view tensor_name);
  const Tensor* find_initializer(std::string_view tensor_name) const;
  const ValueInfo* find_input(std::string_view value_name) const;
  const ValueInfo* find_output(std::string_view value_name) const;
  const ValueInfo* find_value_info(std::string_view value_name) const;

  bool operator==(const Graph& o) const;
};

}  // namespace tessera::ir
