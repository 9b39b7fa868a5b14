// A rewrite rule: a named, small transformation of one node's neighbourhood (pattern + condition +
// apply in one function that returns false early when it does not match). Rules register themselves
// per level with TESSERA_REGISTER_RULES; run_rules applies them over every node until nothing changes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/model.h"
#include "passes/target.h"

namespace tessera::passes {

struct Rewrite;

// What a rule sees: the model (for opset versions and functions), the graph, the target.
struct RuleContext {
  ir::Model& model;
  ir::Graph& graph;
  bool is_main_graph;  // graph outputs of the main graph are the model's interface: never renamed
  const Target& target;
};

struct Rule {
  std::string name;  // "fold_constants", "fuse_conv_relu"...
  OptLevel level = OptLevel::kBasic;
  int order = 0;  // position within the level (see pipeline.cpp)
  // Tries the rule at node index i; returns true when it changed the graph.
  std::function<bool(RuleContext&, size_t node_index)> apply;
  // The backends whose kernels the rule's output is for; empty: every backend.
  std::vector<std::string> backends = {};
};

class RuleRegistry {
 public:
  static RuleRegistry& global();
  void add(Rule r);
  const std::vector<Rule>& rules() const { return rules_; }

 private:
  std::vector<Rule> rules_;
};

// The rules of one level, ordered.
std::vector<const Rule*> rules_for(OptLevel level);
// ... of those, the ones `target` runs: its backend among the rule's, not switched off.
std::vector<const Rule*> rules_for(OptLevel level, const Target& target);
// Applies the rules to every graph (subgraphs too) until a full sweep changes nothing, or a guard of
// sweeps is reached (a pair of rules undoing each other must not hang the session).
void run_rules(ir::Model& model, const std::vector<const Rule*>& rules, const Target& target,
               std::vector<Rewrite>& log);

// Each rule file defines one registration function through this macro; CMake collects them.
#define TESSERA_REGISTER_RULES(tag) void tessera_register_rules_##tag(::tessera::passes::RuleRegistry& reg)

void register_all_rules(RuleRegistry& reg);  // generated

}  // namespace tessera::passes
