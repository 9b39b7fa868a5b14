// Local functions (templates): listing, inlining ("Ungroup") and deleting. Creating a function from a
// group of nodes and importing another model as a layer are not done yet (see docs/transforms.md).
#pragma once

#include <string>
#include <vector>

#include "ir/commands/history.h"
#include "transforms/transform.h"

namespace tessera::transforms {

struct FunctionInfo {
  std::string key;  // "DOMAIN:NAME" (":NAME" without a domain)
  size_t nodes = 0;
  size_t calls = 0;  // in the main graph, its subgraphs and other functions' bodies
  std::vector<std::string> inputs, outputs, attributes;
};

std::vector<FunctionInfo> list_functions(const ir::Model& m);

// Replaces every call of the function `key` (every local function when empty) by its body, as one undo
// step; a function left without calls is removed. Throws TransformError for an unknown key or a
// recursive function, the model untouched.
Report inline_function(ir::History& h, const std::string& key);

// Removes the function `key`: its calls stay, as custom-operator nodes of its domain (what a runtime
// then needs a kernel for), as the seeds' "delete" does. One undo step restores it.
Report delete_function(ir::History& h, const std::string& key);

}  // namespace tessera::transforms
