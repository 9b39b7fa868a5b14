// A subgraph or function body as a model of its own: for extraction, and for the value types of a
// subgraph, which the checker infers only with the graph as a main graph.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "ir/model.h"

namespace tessera::transforms {

using TypeLookup = std::function<std::optional<ir::Type>(const std::string& name)>;

// A model (IR version, opset imports and local functions of `m`) whose main graph is a copy of `g`,
// with every value `g` reads from enclosing scopes added as a graph input after its own, typed by
// `outer_type` where it knows the type.
ir::Model standalone_model(const ir::Model& m, const ir::Graph& g, const TypeLookup& outer_type);

// The types of the values of `g` as the checker infers them when `g` is checked on its own, its outer
// values typed by `outer_type`; declared types where inference gives none.
std::unordered_map<std::string, ir::Type> graph_value_types(const ir::Model& m, const ir::Graph& g,
                                                            const TypeLookup& outer_type);

// The first call of function f among g's own nodes; null when none.
const ir::Node* find_call(const ir::Graph& g, const ir::Function& f);
// Replaces the attribute references of g's nodes (nested graphs too) with the call's attribute values or
// the function's defaults. Throws TransformError naming a parameter with neither.
void bind_references(ir::Graph& g, const ir::Node* call, const ir::Function& f);

// The value types of a local function's body as the main graph's calls type it (`main_types`: the main
// graph's value types), its attribute references bound from the call; nullopt when the main graph never
// calls it, or its calls differ in input element types or attributes (shapes that differ are merged:
// those dimensions unknown; specialise.h makes a copy per signature).
std::optional<std::unordered_map<std::string, ir::Type>> function_value_types(
    const ir::Model& m, const ir::Function& f, const std::unordered_map<std::string, ir::Type>& main_types);

}  // namespace tessera::transforms
