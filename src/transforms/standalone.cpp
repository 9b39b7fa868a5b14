#include "transforms/standalone.h"

#include "check/checker.h"
#include "transforms/transform.h"

namespace tessera::transforms {

ir::Model standalone_model(const ir::Model& m, const ir::Graph& g, const TypeLookup& outer_type) {
  ir::Model out;
  out.ir_version = m.ir_version;
  out.opset_imports = m.opset_imports;
  out.functions = m.functions;
  out.base_dir = m.base_dir;
  out.graph = g;
  for (const auto& name : outer_values(g)) {
    ir::ValueInfo vi;
    vi.name = name;
    if (auto t = outer_type(name)) vi.type = *t;
    out.graph.inputs.push_back(std::move(vi));
  }
  return out;
}

std::unordered_map<std::string, ir::Type> graph_value_types(const ir::Model& m, const ir::Graph& g,
                                                            const TypeLookup& outer_type) {
  ir::Model sub = standalone_model(m, g, outer_type);
  check::CheckOptions opts;
  opts.max_diagnostics = SIZE_MAX;  // the checker stops inferring once full; only the types are wanted
  auto types = check::check_model(sub, opts).value_types;
  auto declare = [&](const ir::ValueInfo& vi) {
    if (!vi.type.is_none()) types.emplace(vi.name, vi.type);
  };
  for (const auto& vi : g.inputs) declare(vi);
  for (const auto& vi : g.outputs) declare(vi);
  for (const auto& vi : g.value_info) declare(vi);
  for (const auto& t : g.initializers) types.emplace(t.name, ir::Type::tensor(t.dtype));
  return types;
}

}  // namespace tessera::transforms
