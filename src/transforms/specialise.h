// One copy of a local function per way the main graph calls it. A body is typed from its calls
// (standalone.h: function_value_types), which needs every call to pass the same element types and
// attribute values; a function called once with float32 and once with float16 inputs (or with
// different attribute values) has no one typing, so convert amp could not keep any of its nodes float32
// and the fp16 conversion could not block one. Specialising gives each signature a copy of its own.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>

#include "ir/model.h"

namespace tessera::transforms {

// For each local function the main graph calls with more than one signature (input element types and
// attribute values; shapes may differ) and `select` accepts (all when empty): the calls of the first
// signature keep calling it, each other signature's calls call a copy named NAME_2, NAME_3... (free names
// in its domain). With `rename_nodes` the copies' node names are made unique in the model (a block list
// names nodes: convert amp decides per copy), else they keep the original's (a block list naming one
// blocks it in every copy). `main_types`: the main graph's value types. Returns the number of copies added.
int specialise_functions(ir::Model& m, const std::unordered_map<std::string, ir::Type>& main_types,
                         bool rename_nodes, const std::function<bool(const ir::Function&)>& select = {});

}  // namespace tessera::transforms
