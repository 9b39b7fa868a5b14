// Checks one graph (main graph, subgraph or function body) node by node, in order, the way a
// runtime would meet them: structure first (names, producers, order), then the operator's schema
// (arity, attributes, type constraints), then its shape inference.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "check/checker.h"
#include "check/scope.h"
#include "check/scratch.h"
#include "ir/model.h"
#include "ops/registry.h"

namespace tessera::check {

// Watches the main graph's node loop of a check (IncrementalChecker records each node's findings).
class MainGraphObserver {
 public:
  virtual ~MainGraphObserver() = default;
  // After the model-level checks and the local functions' bodies, before the main graph's own
  // (inputs, initializers, names, then nodes): `diagnostics` found so far, the symbol counter then.
  virtual void before_main_graph(size_t /*diagnostics*/, int64_t /*symbols*/) {}
  // Before the first node; `diagnostics`: how many there are by then.
  virtual void before_nodes(size_t diagnostics, int64_t symbols) = 0;
  // After node `k`: its findings are diagnostics [diag_start, now); it drew the fresh symbols
  // [symbols_before, symbols_after).
  virtual void after_node(const ir::Node& node, size_t k, size_t diag_start, int64_t symbols_before,
                          int64_t symbols_after) = 0;
  // At the end of the check, with the main graph's scope (every value's facts).
  virtual void after_check(const Scope& main_scope) = 0;
};

// What holds for every node of the graph being checked.
struct GraphEnv {
  const std::vector<ir::OpsetImport>* opsets = nullptr;
  // Inside a function body: the function, and the call node whose attributes fill its references
  // (nullptr when the body is checked on its own, without a caller).
  const ir::Function* function = nullptr;
  const ir::Node* caller = nullptr;
  int depth = 0;  // subgraph nesting
};

class Checker {
 public:
  Checker(const ir::Model& model, const CheckOptions& options, Diagnostics& diags);

  // Checks `g` in a new scope under `outer`. `input_types`, when given, are the types the caller
  // binds to the graph's formal inputs (If/Loop/Scan bodies, function calls); declared input types
  // are checked against them. Returns the types of the graph outputs (kNone where unknown).
  std::vector<ir::Type> check_graph(const ir::Graph& g, const std::string& path, const Scope* outer,
                                    const std::vector<ir::Type>* input_types, const GraphEnv& env,
                                    Scope* keep_scope = nullptr);

  void report(Severity sev, const std::string& graph, const ir::Node* node, int input, int output,
              std::string msg);
  ir::Dim new_symbol() { return ir::Dim::symbol("unk__" + std::to_string(symbol_counter_++)); }
  const ir::Model& model() const { return model_; }
  const CheckOptions& options() const { return options_; }
  bool full() const { return diags_.items.size() >= options_.max_diagnostics; }

  // For incremental checks (incremental.cpp): the main graph's loop reports to `observer`.
  void set_observer(MainGraphObserver* observer) { observer_ = observer; }
  // Checks node `node` of the main graph `g` against `scope`, as check_graph's loop does (declared
  // types of its outputs applied), with the symbol counter at `symbols`; returns the counter after.
  // `declared`, when given, is g's declared types by value (declared_types in incremental.cpp): looked
  // up instead of scanning the graph's outputs and value_info for each node.
  int64_t check_main_node(const ir::Graph& g, const ir::Node& node, Scope& scope, int64_t symbols,
                          const std::unordered_map<std::string, ir::Type>* declared = nullptr);
  int64_t symbols() const { return symbol_counter_; }
  // Defines the main graph `g`'s inputs and initializers in `scope` and reports their problems, as
  // check_graph does before the nodes (draws no fresh symbols).
  void check_main_graph_values(const ir::Graph& g, Scope& scope);

 private:
  void check_node(const ir::Node& node, const std::string& path, Scope& scope, const GraphEnv& env);
  // Graph inputs (against `input_types` when given) and initializers, defined in `scope`.
  void define_graph_values(const ir::Graph& g, const std::string& path, Scope& scope,
                           const std::vector<ir::Type>* input_types, bool top_level, bool in_function);
  void check_function_call(const ir::Node& node, const ir::Function& fn, const std::string& path,
                           Scope& scope, const GraphEnv& env);
  void check_attributes(const ir::Node& node, const ops::OpSchema& schema, const std::string& path,
                        const GraphEnv& env);
  void check_unvisited_subgraphs(const ir::Node& node, const std::string& path, Scope& scope,
                                 const GraphEnv& env, const std::vector<const ir::Graph*>& visited);
  // Merges the types declared for `node`'s outputs (graph outputs, value_info) into what was inferred.
  template <class Lookup>
  void apply_declared(const ir::Node& node, const std::string& path, Scope& scope, Lookup&& declared_type);
  void define_output(const ir::Node& node, size_t i, ir::Type inferred,
                     const std::vector<ir::Dim>* shape_value, const std::string& path, Scope& scope,
                     const ir::Graph& g);

  const ir::Model& model_;
  const CheckOptions& options_;
  Diagnostics& diags_;
  const ops::OpRegistry& registry_;
  int64_t symbol_counter_ = 0;
  // Per-node buffers, one set per nesting level (checking a node can check a subgraph's nodes
  // first), reused so that a node costs no allocations for them. A deque keeps references stable.
  std::deque<NodeScratch> scratch_;
  size_t scratch_depth_ = 0;
  const ir::Graph* current_graph_ = nullptr;
  MainGraphObserver* observer_ = nullptr;
};

// check_model with `observer` watching the main graph's nodes (default options).
void check_model_observed(const ir::Model& model, CheckResult& result, MainGraphObserver& observer);

// The part of a model check that comes before the main graph: IR version, opset imports and each
// local function's body on its own. Reports through `checker`.
void check_model_header(const ir::Model& model, Checker& checker);

// The names a node's subgraphs read from the graphs around them (none when it holds no subgraph):
// besides its inputs, what a node depends on. May name values a nesting level in between defines.
std::vector<std::string> subgraph_reads(const ir::Node& node);

// Merges what inference found with what the file declares. Reports a conflict through `conflict`
// (a sentence) and returns the more specific type.
ir::Type merge_types(const ir::Type& inferred, const ir::Type& declared, std::string* conflict);

// Type-parameter binding for one node: checks each input against the schema's constraints and
// binds each type parameter (TypeBinding, scratch.h). Problems go to `errors` as (input index,
// message). Fills `out` (cleared first, so its storage can be reused node after node).
void bind_type_params(const ops::OpSchema& schema, const std::vector<const ir::Type*>& input_types,
                      std::vector<std::pair<int, std::string>>& errors, TypeBinding& out);
// Whether `t` is allowed by a formal parameter type (a literal type string or a constrained param).
bool type_allowed(const ops::OpSchema& schema, const std::string& formal, const ir::Type& t);

}  // namespace tessera::check
