// If: runs one of two subgraphs depending on a boolean; its outputs are those of the branch taken.
#include <fmt/format.h>

#include "ops/control/control_util.h"
#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/sequence/container_types.h"

using namespace tessera::ops;
using tessera::ir::Type;

namespace {

void infer_if(InferenceContext& ctx) {
  require_single_element(ctx, 0, "cond");
  const tessera::ir::Graph* then_g = graph_attr(ctx, "then_branch");
  const tessera::ir::Graph* else_g = graph_attr(ctx, "else_branch");
  if (!then_g || !else_g) return;
  if (then_g->outputs.size() != else_g->outputs.size()) {
    ctx.fail(fmt::format("then_branch has {} outputs but else_branch has {}; both must give every output",
                         then_g->outputs.size(), else_g->outputs.size()));
  }
  if (ctx.num_outputs() != then_g->outputs.size()) {
    ctx.fail(fmt::format("the node has {} outputs but each branch gives {}", ctx.num_outputs(),
                         then_g->outputs.size()));
  }
  std::vector<Type> then_out = ctx.infer_subgraph(*then_g, {});
  std::vector<Type> else_out = ctx.infer_subgraph(*else_g, {});
  then_out.resize(then_g->outputs.size());
  else_out.resize(then_g->outputs.size());
  // Either branch may run, so each output is described by what both branches have in common.
  for (size_t i = 0; i < then_out.size(); ++i) {
    Type t = merge_types(ctx, then_out[i], else_out[i],
                         fmt::format("output {} ('{}' in then_branch, '{}' in else_branch)", i,
                                     then_g->outputs[i].name, else_g->outputs[i].name));
    if (!t.is_none() && ctx.has_output(i)) ctx.set_output_type(i, std::move(t));
  }
}

}  // namespace

TESSERA_REGISTER_OPS(control_if) {
  for (auto& [version, values] : if_loop_versions()) {
    reg.add(
        OpSchema("If", version)
            .category(Category::kControlFlow)
            .doc(
                "Runs then_branch when 'cond' is true and else_branch otherwise; both branches must give the "
                "same number of outputs, of the same types.")
            .input("cond", "B")
            .variadic_output("outputs", "V", 1, false)
            .types("V", values)
            .types("B", {"tensor(bool)"})
            .attr("then_branch", tessera::ir::AttrType::kGraph)
            .attr("else_branch", tessera::ir::AttrType::kGraph)
            .infer(infer_if));
  }
}
