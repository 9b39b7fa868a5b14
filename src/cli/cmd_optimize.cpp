// tessera optimize MODEL -o OUT.onnx [--level basic|extended|layout] [--verbose] | --list-rules: the graph
// optimiser's output saved as ONNX (ONNX Runtime's "offline mode"), so the rewriting cost is paid
// once and the result can be inspected, checked or deployed.
#include <fmt/format.h>

#include <map>

#include "check/checker.h"
#include "cli/commands.h"
#include "cli/run_inputs.h"
#include "onnx/onnx_io.h"
#include "passes/inline_functions.h"
#include "passes/pipeline.h"
#include "runtime/pass_target.h"

namespace tessera::cli {

void add_optimize_command(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand("optimize",
                                 "Apply the graph optimisation rules and save the result as ONNX.\n"
                                 "Fused nodes use com.microsoft contrib operators (as ONNX Runtime's do).");
  auto model = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto level = std::make_shared<std::string>("extended");
  auto verbose = std::make_shared<bool>(false);
  auto list = std::make_shared<bool>(false);
  auto disabled = std::make_shared<std::vector<std::string>>();
  cmd->add_option("MODEL", *model, "ONNX model file");
  cmd->add_option("--output,-o", *out, "Where to save the optimised model");
  cmd->add_option("--level,-O", *level, "Optimisation level")
      ->check(CLI::IsMember({"none", "basic", "extended", "layout"}));
  cmd->add_flag("--verbose,-v", *verbose, "List every rewrite");
  cmd->add_flag("--list-rules", *list, "List the rules of each level, in the order they run");
  cmd->add_option("--disable-rule", *disabled, "Switch a rule off (repeatable)")->check(known_rule());
  cmd->callback([=, &status] {
    if (*list) {
      fmt::print("{:<9} {:>5}  {:<36} {}\n", "level", "order", "rule", "backends");
      for (const auto& r : passes::list_rules()) {
        std::string backends;
        for (const auto& b : r.backends) backends += (backends.empty() ? "" : ",") + b;
        fmt::print("{:<9} {:>5}  {:<36} {}\n", rt::opt_level_name(r.level), r.order, r.name,
                   backends.empty() ? "all" : backends);
      }
      return;
    }
    if (model->empty() || out->empty()) {
      fmt::print(stderr, "tessera optimize: give MODEL and --output (or --list-rules)\n");
      status = kUnreadable;
      return;
    }
    ir::Model m;
    try {
      m = onnx::load_model(*model);
    } catch (const std::exception& e) {
      fmt::print(stderr, "tessera optimize: cannot read {}: {}\n", *model, e.what());
      status = kUnreadable;
      return;
    }
    auto checked = check::check_model(m);
    if (checked.diagnostics.has_errors()) {
      fmt::print(stderr, "tessera optimize: {} does not type-check ({} errors; see tessera check)\n", *model,
                 checked.diagnostics.count(check::Severity::kError));
      status = kFindings;
      return;
    }
    size_t before = m.graph.nodes.size();
    std::vector<passes::Rewrite> done;
    try {
      passes::inline_functions(m);
      passes::Target target = rt::cpu_target(*rt::opt_level_from_name(*level));
      target.disabled_rules = *disabled;
      done = passes::optimize(m, target);
      onnx::save_model(m, *out);
    } catch (const std::exception& e) {
      fmt::print(stderr, "tessera optimize: {}: {}\n", *model, e.what());
      status = kFindings;
      return;
    }
    std::map<std::string, int> by_rule;
    for (const auto& r : done) {
      by_rule[r.rule]++;
      if (*verbose) fmt::print("  {:<36} {}\n", r.rule, r.node);
    }
    fmt::print("{}: {} nodes -> {} nodes, {} rewrites ({} level); saved {}\n", *model, before,
               m.graph.nodes.size(), done.size(), *level, *out);
    for (const auto& [rule, n] : by_rule) fmt::print("  {:<36} {}\n", rule, n);
  });
}

}  // namespace tessera::cli
