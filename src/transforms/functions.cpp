#include "transforms/functions.h"

#include <fmt/format.h>

#include <memory>

#include "ir/commands/commands.h"
#include "passes/inline_functions.h"
#include "transforms/observer.h"

namespace tessera::transforms {

namespace {

std::string key_of(const ir::Function& f) {
  return fmt::format("{}:{}", f.domain, f.name);
}

bool calls(const ir::Node& n, const ir::Function& f) {
  return n.op_type == f.name && ir::canonical_domain(n.domain) == ir::canonical_domain(f.domain) &&
         n.overload == f.overload;
}

size_t count_calls(const ir::Graph& g, const ir::Function& f) {
  size_t c = 0;
  for (const auto& n : g.nodes) {
    c += calls(n, f);
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs) c += count_calls(*sub, f);
  }
  return c;
}

size_t count_calls(const ir::Model& m, const ir::Function& f) {
  size_t c = count_calls(m.graph, f);
  for (const auto& other : m.functions) c += count_calls(other.body, f);
  return c;
}

const ir::Function& find(const ir::Model& m, const std::string& key) {
  for (const auto& f : m.functions)
    if (key_of(f) == key || (f.domain.empty() && f.name == key)) return f;
  std::string have;
  for (const auto& f : m.functions) have += (have.empty() ? "" : ", ") + key_of(f);
  throw TransformError(
      fmt::format("the model has no local function '{}' (it has: {})", key, have.empty() ? "none" : have));
}

}  // namespace

std::vector<FunctionInfo> list_functions(const ir::Model& m) {
  std::vector<FunctionInfo> out;
  for (const auto& f : m.functions) {
    FunctionInfo info{key_of(f), f.body.nodes.size(), count_calls(m, f), {}, {}, f.attributes};
    for (const auto& v : f.body.inputs) info.inputs.push_back(v.name);
    for (const auto& v : f.body.outputs) info.outputs.push_back(v.name);
    for (const auto& a : f.attribute_defaults) info.attributes.push_back(a.name + "=" + a.value_string());
    out.push_back(std::move(info));
  }
  return out;
}

Report inline_function(ir::History& h, const std::string& key) {
  const ir::Model& m = h.model();
  ir::Model copy = m;
  // The engine's inliner replaces the calls of the functions the model holds: hold only the chosen one.
  if (!key.empty()) {
    const ir::Function& f = find(m, key);
    copy.functions = {f};
  }
  Report report;
  int replaced = 0;
  report_progress(0.05, "inlining the calls");
  try {
    replaced = passes::inline_functions(copy);
  } catch (const std::runtime_error& e) {
    throw TransformError(fmt::format("cannot inline: {}", e.what()));
  }
  report.add("calls inlined", replaced);
  ir::Model out = m;
  out.graph = std::move(copy.graph);
  Steps removing("removing functions left uncalled", m.functions.size(), 0.7, 0.9);
  for (const auto& f : m.functions) {
    removing.at(static_cast<size_t>(&f - m.functions.data()));
    bool chosen = key.empty() || key_of(f) == key || (f.domain.empty() && f.name == key);
    if (!chosen) continue;
    std::erase_if(out.functions,
                  [&](const ir::Function& g) { return key_of(g) == key_of(f) && g.overload == f.overload; });
    if (count_calls(out, f) == 0) {
      report.add("functions removed");
      report.details.push_back(fmt::format("function '{}' removed: no calls left", key_of(f)));
    } else {
      out.functions.push_back(f);  // still called from another function's body
    }
  }
  report_progress(0.95, "recording the edit");
  commit(h, key.empty() ? "Inline functions" : fmt::format("Inline function '{}'", key), std::move(out));
  return report;
}

Report delete_function(ir::History& h, const std::string& key) {
  const ir::Function& f = find(h.model(), key);
  Report report;
  report_progress(0.1, "counting the calls");
  report.add("calls left as custom operators", static_cast<int64_t>(count_calls(h.model(), f)));
  report_progress(0.8, "removing the function");
  try {
    h.execute(std::make_unique<ir::RemoveFunction>(f.domain, f.name, f.overload));
  } catch (const ir::CommandError& e) {
    throw TransformError(e.what());
  }
  report.add("functions removed");
  return report;
}

}  // namespace tessera::transforms
