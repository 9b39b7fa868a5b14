// Node attributes of every ONNX kind, typed: no positional parameter arrays.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/box.h"
#include "ir/tensor.h"
#include "ir/type.h"

namespace tessera::ir {

struct Graph;

// Numbered as AttributeProto.AttributeType.
enum class AttrType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kInt = 2,
  kString = 3,
  kTensor = 4,
  kGraph = 5,
  kFloats = 6,
  kInts = 7,
  kStrings = 8,
  kTensors = 9,
  kGraphs = 10,
  kSparseTensor = 11,
  kSparseTensors = 12,
  kTypeProto = 13,
  kTypeProtos = 14,
};

std::string_view attr_type_name(AttrType t);  // "float", "ints", "graph"...
bool attr_type_is_list(AttrType t);

struct Attribute {
  std::string name;
  AttrType type = AttrType::kUndefined;
  std::string ref_attr_name;  // inside a function body: takes the value of the caller's attribute
  std::string doc_string;

  // Exactly the members that match `type` are meaningful; singular kinds use element 0 of the lists
  // for tensors, graphs, sparse tensors and types.
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<Box<Graph>> graphs;
  std::vector<SparseTensor> sparse_tensors;
  std::vector<Type> types;
  std::string unknown_fields;

  static Attribute of_float(std::string name, float v);
  static Attribute of_int(std::string name, int64_t v);
  static Attribute of_string(std::string name, std::string v);
  static Attribute of_floats(std::string name, std::vector<float> v);
  static Attribute of_ints(std::string name, std::vector<int64_t> v);
  static Attribute of_strings(std::string name, std::vector<std::string> v);
  static Attribute of_tensor(std::string name, Tensor v);
  static Attribute of_graph(std::string name, Graph g);

  bool is_reference() const { return !ref_attr_name.empty(); }
  // The value as a person would write it in the parameter editor: 3, 1.5, 'same', [1, 2], <graph body>.
  std::string value_string() const;

  bool operator==(const Attribute& o) const;
};

}  // namespace tessera::ir

// Attributes hold graphs by value, so whoever uses an Attribute needs Graph complete too.
#include "ir/graph.h"  // IWYU pragma: export
