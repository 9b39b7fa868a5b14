// JSON spellings of IR values, as the studio's HTTP API (docs/studio-api.md) writes and reads them:
// types and value infos, attributes, tensors (values, generated fills, .npy as base64), nodes,
// functions and graph paths. Reading never trusts its input: every problem is a JsonError whose
// message names the field ("'shape' must be an array", "attribute 'axis': 'value' must be an integer").
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "ir/commands/graph_path.h"
#include "ir/model.h"

namespace tessera::ir {

using json = nlohmann::json;

// A malformed request: a missing field, a field of the wrong JSON type, an unknown name.
class JsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Every reader takes `where`, the prefix of its messages: "" or text ending in ": " ("command 3: ").
// Field access that names what is wrong.
const json& require_field(const json& obj, const char* key, const std::string& where);
std::string string_field(const json& obj, const char* key, const std::string& where);
std::string optional_string_field(const json& obj, const char* key, const std::string& where);
int64_t int_field(const json& obj, const char* key, const std::string& where);
size_t index_field(const json& obj, const char* key, const std::string& where);  // non-negative
void require_object(const json& j, const std::string& what);

// [1, "N", null]: static sizes, symbols, unknown dimensions. A null shape is an unknown rank.
json shape_to_json(const Shape& s);
Shape shape_from_json(const json& j, const std::string& where);
// {name, type: "tensor(float)", shape: [..] | null}
json value_info_to_json(const ValueInfo& v);
ValueInfo value_info_from_json(const json& j, const std::string& where);

// Tensors. `max_values`: the most elements written as "values" (more: no "values"); SIZE_MAX for all.
// Numeric and bool tensors that cannot be written as numbers exactly (float16, sub-byte types) are
// written as "npy_base64" when `max_values` allows all of them.
json tensor_to_json(const Tensor& t, size_t max_values = SIZE_MAX);
// {name, dtype, shape, values? | fill? | npy_base64?}; without any of the three: zeros.
Tensor tensor_from_json(const json& j, const std::string& where = {});
// `limit` values from element `offset` on (flat, row-major) as numbers (strings for string tensors);
// empty when the dtype has no JSON number form.
json tensor_values_json(const Tensor& t, size_t limit, size_t offset = 0);

// {name, type, value} (or {name, type, ref} inside a function body). `full`: graphs as whole graph
// JSON and tensors with all their values (for round trips); otherwise graphs as counts and tensors
// with at most 64 values (the graph answer).
json attribute_to_json(const Attribute& a, bool full = true);
Attribute attribute_from_json(const json& j, const std::string& where = {});

// {name, op_type, domain, overload?, inputs, outputs, attributes}
json node_to_json(const Node& n);
Node node_from_json(const json& j, const std::string& where);
// A subgraph or function body: {name, inputs: [value], outputs: [value], initializers, nodes}.
json graph_to_json(const Graph& g);
Graph graph_from_json(const json& j, const std::string& where);
// {domain, name, overload, inputs: [names], outputs: [names], attributes: [names],
//  attribute_defaults: [attr], opset_imports: [{domain, version}], nodes: [node], doc_string}
json function_to_json(const Function& f);
Function function_from_json(const json& j, const std::string& where);

// {"function"?: {domain, name, overload?}, "steps": [{node, attribute, index}]}; null or {}: main.
json graph_path_to_json(const GraphPath& p);
GraphPath graph_path_from_json(const json& j, const std::string& where = {});
// A node by id (a number) or by name (a string).
json node_ref_to_json(const NodeRef& r);
NodeRef node_ref_from_json(const json& j, const std::string& where);

// Standard base64 (RFC 4648), for .npy files inside JSON.
std::string base64_encode(std::string_view bytes);
// Throws JsonError on a character outside the alphabet or a bad length.
std::string base64_decode(std::string_view text, const std::string& where = {});

}  // namespace tessera::ir
