// Small graph queries and edits shared by the rewrite rules: who reads a value (subgraphs included),
// which values are constants, removing or bypassing nodes without renaming graph outputs, fresh names,
// the static types the checker infers, and whether a kernel exists for a node a rule wants to create.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/model.h"
#include "passes/rule.h"

namespace tessera::passes {

// Where a value is read: node `node` of the graph, at input slot `input`, or inside one of that node's
// subgraphs (input == kInSubgraph: an If/Loop body naming the value from the enclosing scope).
struct Use {
  static constexpr size_t kInSubgraph = SIZE_MAX;
  size_t node;
  size_t input;
};

// Every read of `value` in `g`, subgraphs included (a subgraph that redefines the name shadows it).
std::vector<Use> uses(const ir::Graph& g, std::string_view value);
// Whether anything reads `value`: a node input, a subgraph, or a graph output.
bool is_used(const ir::Graph& g, std::string_view value);
// The single node reading `value` through its direct inputs (once or several times), or nothing when
// the value has no reader, several readers, is read inside a subgraph or is a graph output.
std::optional<size_t> sole_consumer(const ir::Graph& g, std::string_view value);

bool is_graph_output(const ir::Graph& g, std::string_view value);
// The initializer behind `value` when it is a constant: an initializer that no graph input overrides
// (an initializer listed among the inputs is only a default). Constant nodes are turned into
// initializers by fold_constants, which runs first. nullptr otherwise.
const ir::Tensor* constant_value(const ir::Graph& g, std::string_view value);
// The index of the node producing `value` in `g`, if a node of `g` does.
std::optional<size_t> producer(const ir::Graph& g, std::string_view value);

// A constant's elements as doubles (numeric types), or nullopt when `value` is not a numeric constant.
std::optional<std::vector<double>> constant_doubles(const ir::Graph& g, std::string_view value);
// A constant holding one element (of any shape with one element and rank <= 1), as a double.
std::optional<double> constant_scalar(const ir::Graph& g, std::string_view value);
// A constant's elements as int64 (integer types), for shape-like inputs (axes, pads, perm...).
std::optional<std::vector<int64_t>> constant_ints(const ir::Graph& g, std::string_view value);

// A float or double tensor of `dims` holding `values` (converted to `dtype`), for rewritten weights.
ir::Tensor make_float_tensor(ir::DataType dtype, std::vector<int64_t> dims,
                             const std::vector<double>& values);
// The values of a constant that broadcasts against a [N, C, ...] tensor of rank `rank` along the channel
// axis only (shape [C,1,1], [1,C,1,1], [1] or a scalar...), expanded to C values; nullopt otherwise.
std::optional<std::vector<double>> per_channel(const ir::Graph& g, std::string_view value, size_t rank,
                                               int64_t channels);

// A Conv whose weights a following per-channel operation can be folded into: the Conv producing
// `value`, read only by node `consumer`, with constant float/double W (and B, or zeros when absent).
struct FoldableConv {
  size_t index = 0;
  ir::DataType dtype = ir::DataType::kFloat;
  std::vector<int64_t> w_dims;
  std::vector<double> w, b;
  int64_t channels() const { return w_dims[0]; }
  size_t rank() const { return w_dims.size(); }  // of the Conv's input and output
};
std::optional<FoldableConv> foldable_conv(const ir::Graph& g, std::string_view value, size_t consumer);
// Replaces the Conv and the node `consumer` folded into it by one Conv with the new weights, writing the
// consumer's output; the new node takes the consumer's place.
void replace_folded_conv(ir::Graph& g, const FoldableConv& conv, size_t consumer);

// Replaces every read of `from` by `to` (node inputs, subgraphs; not graph outputs).
void replace_uses(ir::Graph& g, const std::string& from, const std::string& to);
// Removes the node whose single output equals the value `replacement` (an Identity, a no-op Reshape):
// its readers read `replacement` instead. When the output is a graph output, the producer of
// `replacement` is renamed instead, so the graph output keeps its name; when neither is possible
// (`replacement` is a graph input, an initializer or itself a graph output) nothing changes. Returns
// whether the node was removed.
bool bypass_node(ir::Graph& g, size_t node_index, const std::string& replacement);
// Removes the nodes (by id) and then the initializers among their inputs that nothing reads any more.
void remove_nodes(ir::Graph& g, const std::vector<ir::NodeId>& ids);
// Removes the initializers named in `names` that nothing reads and no graph input or output names.
void drop_unused_initializers(ir::Graph& g, const std::vector<std::string>& names);
// Adds `n` in place of the node at `index` (same position, fresh id) and removes the nodes `gone` (by
// id, the replaced one included when it is among them).
void replace_with(ir::Graph& g, size_t index, ir::Node n, const std::vector<ir::NodeId>& gone);

// A value or initializer name not used anywhere in `g` (subgraphs included), derived from `base`.
std::string fresh_name(const ir::Graph& g, std::string_view base);
// Adds an initializer under a fresh name derived from `base`; returns the name.
std::string add_initializer(ir::Graph& g, ir::Tensor t, std::string_view base);

// The type the checker infers for `value` of the main graph (cached until the graph changes), or, in
// any graph, the dtype and dims of a constant. nullopt when unknown.
std::optional<ir::Type> value_type(const RuleContext& ctx, std::string_view value);
// The value's shape when every dimension is known.
std::optional<std::vector<int64_t>> static_shape(const RuleContext& ctx, std::string_view value);
// The value's element type when known.
ir::DataType elem_type(const RuleContext& ctx, std::string_view value);
// Tells the type cache that a rule changed the graph without changing any surviving value's type (e.g.
// a node replaced by an initializer of the same name), so the next query need not re-run the checker.
void keep_type_cache(const RuleContext& ctx);
// Drops the cached types; each optimisation starts with it. The cache knows a model by its address, and
// keep_type_cache adopts whatever it holds for that address: a model optimised later at the same address
// (convert amp's part-runs build one session after another) took the earlier model's types, and
// eliminate_nop removed a Cast that mattered (test Amp.SessionsOfModelsThatDifferOnlyInPrecision...).
void forget_type_cache();

// Whether the target's engine has a kernel for `n` under the model's opset imports (a rule must not
// fuse into an op the session cannot run); false when the target names no engine.
bool kernel_available(const RuleContext& ctx, const ir::Node& n);
// Imports `domain` at `version` when the model does not import it (for com.microsoft fusions).
void ensure_opset_import(ir::Model& model, const std::string& domain, int64_t version);

// The node's attribute as int / ints / float, or the fallback when absent.
int64_t attr_int(const ir::Node& n, std::string_view name, int64_t fallback);
float attr_float(const ir::Node& n, std::string_view name, float fallback);
std::optional<std::vector<int64_t>> attr_ints(const ir::Node& n, std::string_view name);

// For a two-input node of ai.onnx op `op` that reads `x`, the other input; nullopt otherwise (also when
// both inputs are `x`).
std::optional<std::string> other_input(const ir::Node& n, std::string_view op, std::string_view x);
// Whether `value` is a constant of one element close to `want` (relative 1e-3: exporters round).
bool is_constant_near(const ir::Graph& g, std::string_view value, double want);

// float, double, float16 or bfloat16: the types the fused kernels compute in.
bool is_compute_float(ir::DataType t);

// The parameters of an activation that FusedConv / BlockedConv can apply (Relu, Sigmoid, Tanh,
// LeakyRelu [alpha], HardSigmoid [alpha, beta], Clip [min, max] with constant bounds), in ONNX Runtime's
// activation_params order; nullopt when `n` is not one.
std::optional<std::vector<float>> fusable_activation(const RuleContext& ctx, const ir::Node& n);

// Whether the node has a graph attribute (If, Loop, Scan...).
bool has_subgraph(const ir::Node& n);
// Whether `n` is of ai.onnx op `op` (domain "" or "ai.onnx").
bool is_op(const ir::Node& n, std::string_view op);
// The opset version of the default domain the model imports (0 when none).
int64_t onnx_opset(const ir::Model& m);

}  // namespace tessera::passes
