#pragma once

#include <string>

#include "ir/commands/command.h"
#include "ir/commands/scope.h"

namespace tessera::ir {

// Base of the commands that edit one node. The node is found by id or name on each apply; after the
// first, the reference is pinned to the id so redo finds the same node whatever it is called by then.
class NodeCommand : public GraphCommand {
 protected:
  NodeCommand(GraphPath path, NodeRef node) : GraphCommand(std::move(path)), ref_(std::move(node)) {
    label_ = ref_.to_string();
  }
  Node& node(Graph& g) {
    Node& n = find_node_or_throw(g, ref_);
    ref_ = NodeRef(n.id);
    label_ = node_label(n);
    return n;
  }

  NodeRef ref_;
  std::string label_;  // how descriptions name the node: its name once found, the reference until then
};

}  // namespace tessera::ir
