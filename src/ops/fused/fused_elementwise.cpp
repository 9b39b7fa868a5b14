// com.tessera FusedElementwise: a chain of elementwise ops evaluated per element in one pass over memory
// (what the fuse_elementwise rule makes for the CUDA backend). The program and its encoding:
// ops/fused/elementwise_program.h. Every output has the broadcast shape of all inputs; output i has the
// element type of the statement results[i] names.
#include <fmt/format.h>

#include "ops/fused/elementwise_program.h"
#include "ops/infer_util.h"
#include "ops/layout/blocked.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
namespace fused = tessera::ops::fused;

namespace {

void infer_fused_elementwise(InferenceContext& ctx) {
  const ir::Node& n = ctx.node();
  const ir::Attribute* prog = n.attr("program");
  const ir::Attribute* res = n.attr("results");
  if (!prog || prog->type != ir::AttrType::kString)
    return ctx.fail("attribute 'program' (string) is missing");
  if (!res || res->type != ir::AttrType::kInts) return ctx.fail("attribute 'results' (ints) is missing");
  fused::Program p;
  try {
    p = fused::parse_program(prog->s, res->ints, n.inputs.size());
  } catch (const fused::ProgramError& e) {
    return ctx.fail(fmt::format("attribute 'program': {}", e.what()));
  }
  if (p.results.size() != ctx.num_outputs())
    return ctx.fail(
        fmt::format("'results' names {} values for {} outputs", p.results.size(), ctx.num_outputs()));
  std::vector<ir::DataType> in_types;
  std::vector<size_t> all;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    in_types.push_back(input_elem(ctx, i));
    all.push_back(i);
    if (in_types.back() == ir::DataType::kUndefined) return;  // not known yet
  }
  std::vector<ir::DataType> types;
  try {
    types = fused::statement_types(p, in_types);
  } catch (const fused::ProgramError& e) {
    return ctx.fail(e.what());
  }
  std::optional<ir::Shape> shape = broadcast_inputs(ctx, all);
  for (size_t o = 0; o < ctx.num_outputs(); ++o)
    if (ctx.has_output(o)) set_output(ctx, o, types[static_cast<size_t>(p.results[o])], shape);
}

}  // namespace

TESSERA_REGISTER_OPS(fused_elementwise) {
  std::vector<std::string> t = types::tensors({"float16", "float", "double", "bfloat16", "bool"});
  reg.add(OpSchema(fused::kFusedElementwiseOp, 1, tessera::ops::layout::kDomain)
              .category(Category::kArithmetic)
              .doc("A chain of elementwise operations in one pass: attribute 'program' holds the statements "
                   "(t<k>=Op(args), args x<i> for input i, t<j> for an earlier statement or a number), "
                   "'results' the statements that are the outputs. Every output has the broadcast shape "
                   "of all inputs.")
              .variadic_input("inputs", "T", 1, false)
              .variadic_output("outputs", "T", 1, false)
              .types("T", t)
              .attr("program", ir::AttrType::kString, "the statements, separated by ';'")
              .attr("results", ir::AttrType::kInts, "the statement of each output")
              .infer(infer_fused_elementwise));
}
