#include "passes/rule.h"

#include <algorithm>

#include "passes/pipeline.h"

namespace tessera::passes {

RuleRegistry& RuleRegistry::global() {
  static RuleRegistry* r = [] {
    auto* reg = new RuleRegistry();
    register_all_rules(*reg);
    return reg;
  }();
  return *r;
}

void RuleRegistry::add(Rule r) {
  rules_.push_back(std::move(r));
}

std::vector<const Rule*> rules_for(OptLevel level) {
  std::vector<const Rule*> out;
  for (const auto& r : RuleRegistry::global().rules())
    if (r.level == level) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(), [](const Rule* a, const Rule* b) { return a->order < b->order; });
  return out;
}

std::vector<const Rule*> rules_for(OptLevel level, const Target& target) {
  std::vector<const Rule*> out;
  for (const Rule* r : rules_for(level)) {
    bool for_backend = r->backends.empty() ||
                       std::find(r->backends.begin(), r->backends.end(), target.backend) != r->backends.end();
    if (for_backend && target.rule_enabled(r->name)) out.push_back(r);
  }
  return out;
}

namespace {

constexpr int kMaxSweeps = 32;

bool sweep(ir::Model& model, ir::Graph& g, bool is_main, const std::vector<const Rule*>& rules,
           const Target& target, std::vector<Rewrite>& log) {
  bool changed = false;
  for (auto& n : g.nodes)
    for (auto& a : n.attributes)
      for (auto& sub : a.graphs) changed |= sweep(model, *sub, false, rules, target, log);
  RuleContext ctx{model, g, is_main, target};
  for (const Rule* r : rules) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      std::string label = g.nodes[i].name.empty() ? g.nodes[i].op_type : g.nodes[i].name;
      if (!r->apply(ctx, i)) continue;
      log.push_back({r->name, std::move(label)});
      changed = true;
    }
  }
  return changed;
}

}  // namespace

void run_rules(ir::Model& model, const std::vector<const Rule*>& rules, const Target& target,
               std::vector<Rewrite>& log) {
  if (rules.empty()) return;
  for (int i = 0; i < kMaxSweeps; ++i)
    if (!sweep(model, model.graph, true, rules, target, log)) return;
}

}  // namespace tessera::passes
