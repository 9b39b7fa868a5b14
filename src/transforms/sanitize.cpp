#include "transforms/sanitize.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "check/checker.h"
#include "passes/graph_util.h"
#include "passes/rule.h"
#include "runtime/pass_target.h"
#include "transforms/dead_nodes.h"
#include "transforms/fold_shape_elements.h"
#include "transforms/merge_constants.h"
#include "transforms/merge_subexpressions.h"

namespace tessera::transforms {

namespace {

constexpr int kMaxPasses = 64;

// The bytes a node's outputs would take once folded, when every output's size is known; nullopt
// otherwise (then the node is not folded).
std::optional<int64_t> folded_bytes(const ir::Model& model, const ir::Graph& g, const ir::Node& n) {
  ir::Model one;
  one.ir_version = model.ir_version;
  one.opset_imports = model.opset_imports;
  one.functions = model.functions;
  ir::Node copy = n;
  one.graph.add_node(std::move(copy));
  for (const auto& in : n.inputs) {
    if (in.empty() || one.graph.find_initializer(in)) continue;
    const ir::Tensor* t = passes::constant_value(g, in);
    if (!t) return std::nullopt;
    one.graph.initializers.push_back(*t);
  }
  for (const auto& out : n.outputs)
    if (!out.empty()) one.graph.outputs.push_back({out, {}, {}, {}});
  auto checked = check::check_model(one);
  int64_t total = 0;
  for (const auto& out : one.graph.outputs) {
    auto it = checked.value_types.find(out.name);
    if (it == checked.value_types.end() || !it->second.is_tensor() || !it->second.shape) return std::nullopt;
    auto count = ir::shape_numel(*it->second.shape);
    if (!count) return std::nullopt;
    total += *count * std::max(ir::dtype_bits(it->second.elem), 8) / 8;
  }
  return total;
}

// Which nodes a rule can possibly rewrite, decided from facts gathered once per sweep (the checker's
// types of the main graph, the constants, which nodes compute the same thing), so that each rule is
// asked only about those. The engine's rules answer questions about types through a cache that hashes
// the whole graph on every query, and eliminate_common_subexpressions compares each node with every
// earlier one: asked about every node of a 50,000-node graph, they take minutes. A gate only skips
// nodes the rule would refuse given the types at the start of the sweep, so the fixed point reached is
// the same: a sweep that changes nothing saw up-to-date types throughout.
class Gates {
 public:
  Gates(const ir::Model& m, const ir::Graph& g, bool is_main) : g_(g) {
    if (is_main) types_ = check::check_model(m).value_types;
    refresh_constants();
  }
  void changed() { refresh_constants(); }
  const std::unordered_map<std::string, ir::Type>& types() const { return types_; }

  bool allows(const std::string& rule, const ir::Node& n) {
    if (rule == "fold_constants") return n.op_type == "Constant" || all_constant(n);
    if (rule == "fold_shape") return (n.op_type == "Shape" || n.op_type == "Size") && static_input(n);
    if (rule == "eliminate_identity") return n.op_type == "Identity" || n.op_type == "Dropout";
    if (rule == "fold_unsqueeze_squeeze") return n.op_type == "Squeeze";
    if (rule == "eliminate_nop") return maybe_nop(n);

    return true;
  }

 private:
  void refresh_constants() {
    constants_.clear();
    for (const auto& t : g_.initializers) constants_.insert(t.name);
    for (const auto& v : g_.inputs) constants_.erase(v.name);  // an input overrides its default
  }
  bool all_constant(const ir::Node& n) const {
    if (n.inputs.empty()) return false;
    return std::all_of(n.inputs.begin(), n.inputs.end(),
                       [&](const std::string& in) { return in.empty() || constants_.count(in); });
  }
  const ir::Type* type(const std::string& v) const {
    auto it = types_.find(v);
    return it == types_.end() ? nullptr : &it->second;
  }
  bool static_shape(const std::string& v) const {
    if (constants_.count(v)) return true;
    const ir::Type* t = type(v);
    return t && t->shape && ir::shape_is_static(*t->shape);
  }
  bool static_input(const ir::Node& n) const { return !n.inputs.empty() && static_shape(n.inputs[0]); }
  bool maybe_nop(const ir::Node& n) const {
    const std::string& op = n.op_type;
    if (n.inputs.empty() || n.outputs.size() != 1) return false;
    if (op == "Transpose" || op == "Pad" || op == "Slice" || op == "Concat") return true;
    if (op == "Reshape" || op == "Expand") {
      const ir::Type* in = type(n.inputs[0]);
      const ir::Type* out = type(n.outputs[0]);
      return in && out && static_shape(n.inputs[0]) && static_shape(n.outputs[0]) &&
             *in->shape == *out->shape;
    }
    if (op == "Cast") {
      const ir::Type* in = type(n.inputs[0]);
      const ir::Attribute* to = n.attr("to");
      return in && in->is_tensor() && to && to->i == static_cast<int64_t>(in->elem);
    }
    return false;
  }
  const ir::Graph& g_;
  std::unordered_map<std::string, ir::Type> types_;
  std::unordered_set<std::string> constants_;
};

struct Sweeper {
  ir::Model& model;
  const SanitizeOptions& o;
  Report& report;
  passes::Target target;  // the CPU's kernels fold the constants
  std::vector<const passes::Rule*> rules;
  std::unordered_set<ir::NodeId> too_large;  // nodes whose folded result would exceed the threshold

  // Whether the threshold lets `fold_constants` try node i.
  bool may_fold(const ir::Graph& g, const ir::Node& n) {
    if (n.op_type == "Constant") return true;  // the rule decides
    if (too_large.count(n.id)) return false;
    auto bytes = folded_bytes(model, g, n);
    if (bytes && *bytes <= o.fold_threshold) return true;
    too_large.insert(n.id);
    report.details.push_back(
        fmt::format("not folded: node '{}' ({}): result of {} exceeds --fold-threshold {}", n.name, n.op_type,
                    bytes ? fmt::format("{} bytes", *bytes) : "unknown size", o.fold_threshold));
    return false;
  }

  bool sweep(ir::Graph& g, bool is_main) {
    bool changed = false;
    for (auto& n : g.nodes)
      for (auto& a : n.attributes)
        for (auto& sub : a.graphs) changed |= sweep(*sub, false);
    passes::RuleContext ctx{model, g, is_main, target};
    if (int merged = merge_equal_constants(g, report.details); merged > 0) {
      report.add("merge_equal_constants", merged);
      changed = true;
    }
    if (int merged = merge_common_subexpressions(g, report.details); merged > 0) {
      report.add("merge_common_subexpressions", merged);
      changed = true;
    }
    Gates gates(model, g, is_main);
    if (int folded = fold_shape_elements(g, gates.types(), report.details); folded > 0) {
      report.add("fold_shape_elements", folded);
      gates.changed();
      changed = true;
    }
    for (const passes::Rule* r : rules) {
      bool folding = r->name == "fold_constants";
      for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (!gates.allows(r->name, g.nodes[i])) continue;
        if (folding && !may_fold(g, g.nodes[i])) continue;
        std::string what = fmt::format("{}: node '{}' ({})", r->name, g.nodes[i].name, g.nodes[i].op_type);
        if (!r->apply(ctx, i)) continue;
        gates.changed();
        report.add(r->name);
        report.details.push_back(std::move(what));
        changed = true;
      }
    }
    if (int removed = remove_dead_nodes(model, g, report.details); removed > 0) {
      report.add("remove_dead_nodes", removed);
      changed = true;
    }
    return changed;
  }
};

// The one function that reaches into src/passes: the engine's basic rules that keep the computation
// exactly as it is (no folding of BatchNormalization into Conv weights, which rounds differently).
int run_engine_rules(ir::Model& m, const SanitizeOptions& o, Report& report) {
  // eliminate_common_subexpressions and eliminate_dead_nodes are merge_common_subexpressions and
  // remove_dead_nodes here (the same decisions in one pass each: the rules are quadratic in their rewrites).
  // Not fuse_consecutive_transposes / _reshapes / fold_transpose_reshape_chain: exact too, but each
  // rewrite a pass over the graph (4.3 s more on the 50,000-node benchmark graph) for no node on the
  // real models' dynamic-batch exports.
  static constexpr std::array<std::string_view, 5> kRules = {
      "fold_constants", "fold_shape", "eliminate_identity", "eliminate_nop", "fold_unsqueeze_squeeze"};
  Sweeper s{m, o, report, rt::cpu_target(passes::OptLevel::kBasic), {}, {}};
  for (const passes::Rule* r : passes::rules_for(passes::OptLevel::kBasic))
    if (std::find(kRules.begin(), kRules.end(), r->name) != kRules.end()) s.rules.push_back(r);
  passes::forget_type_cache();  // types another model at this address left there (graph_util.h)
  int limit = o.passes > 0 ? o.passes : kMaxPasses;
  int done = 0;
  while (done < limit) {
    ++done;
    if (o.progress) o.progress(done, limit);
    if (!s.sweep(m.graph, true)) break;
  }
  return done;
}

// Every name read in g: node inputs, graph outputs, and what nested graphs read (shadowed or not, which
// only keeps more).
void collect_reads(const ir::Graph& g, std::unordered_set<std::string>& reads) {
  for (const auto& o : g.outputs) reads.insert(o.name);
  for (const auto& n : g.nodes) {
    for (const auto& in : n.inputs) reads.insert(in);
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs) collect_reads(*sub, reads);
  }
}

// Initializers nothing reads (and that are not graph inputs' defaults), and value_info entries of values
// that no longer exist.
void remove_unused(ir::Graph& g, Report& report) {
  for (auto& n : g.nodes)
    for (auto& a : n.attributes)
      for (auto& sub : a.graphs) remove_unused(*sub, report);
  std::unordered_set<std::string> reads;
  collect_reads(g, reads);
  auto unused = [&](const ir::Tensor& t) { return !reads.count(t.name) && !g.find_input(t.name); };
  size_t before = g.initializers.size();
  std::erase_if(g.initializers, unused);
  report.add("unused initializers removed", static_cast<int64_t>(before - g.initializers.size()));
  std::unordered_set<std::string> defined;
  for (const auto& v : g.inputs) defined.insert(v.name);
  for (const auto& t : g.initializers) defined.insert(t.name);
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs) defined.insert(o);
  before = g.value_info.size();
  std::erase_if(g.value_info, [&](const ir::ValueInfo& vi) { return !defined.count(vi.name); });
  report.add("stale value_info entries removed", static_cast<int64_t>(before - g.value_info.size()));
}

size_t count_nodes(const ir::Graph& g) {
  size_t n = g.nodes.size();
  for (const auto& node : g.nodes)
    for (const auto& a : node.attributes)
      for (const auto& sub : a.graphs) n += count_nodes(*sub);
  return n;
}

}  // namespace

ir::Model sanitize_copy(const ir::Model& m, const SanitizeOptions& options, Report& report) {
  if (options.fold_threshold < 0) throw TransformError("--fold-threshold must not be negative");
  if (options.passes < 0) throw TransformError("--passes must not be negative");
  auto before = check::check_model(m);
  if (before.diagnostics.has_errors()) {
    throw TransformError(fmt::format("the model does not type-check ({} errors; see tessera check)",
                                     before.diagnostics.count(check::Severity::kError)));
  }
  ir::Model out = m;
  size_t nodes = count_nodes(out.graph), inits = out.graph.initializers.size();
  int passes = run_engine_rules(out, options, report);
  remove_unused(out.graph, report);
  report.counts.insert(report.counts.begin(),
                       {{"passes", passes},
                        {"nodes before", static_cast<int64_t>(nodes)},
                        {"nodes after", static_cast<int64_t>(count_nodes(out.graph))},
                        {"initializers before", static_cast<int64_t>(inits)},
                        {"initializers after", static_cast<int64_t>(out.graph.initializers.size())}});
  return out;
}

Report sanitize(ir::History& h, const SanitizeOptions& options) {
  Report report;
  ir::Model out = sanitize_copy(h.model(), options, report);
  commit(h, "Sanitize", std::move(out));
  return report;
}

}  // namespace tessera::transforms
