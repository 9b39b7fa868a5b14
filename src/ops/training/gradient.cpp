// Gradient (ai.onnx.preview.training 1): the gradients of y with respect to the values named in xs.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;

namespace {

// One output per name in xs; each gradient has the type of its x, known here when x is also one of
// the node's inputs (the usual case: the graph feeds the differentiated values in).
void infer_gradient(InferenceContext& ctx) {
  std::vector<std::string> xs = ctx.attr_strings("xs");
  if (xs.empty()) ctx.fail("attribute 'xs' must name at least one value to differentiate against");
  if (ctx.num_outputs() != xs.size()) {
    ctx.fail(fmt::format("{} outputs for {} names in 'xs'; there is one gradient per name", ctx.num_outputs(),
                         xs.size()));
  }
  for (size_t o = 0; o < xs.size(); ++o) {
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      if (ctx.node().inputs[i] != xs[o]) continue;
      propagate_type(ctx, i, o);
      break;
    }
  }
}

}  // namespace

TESSERA_REGISTER_OPS(training_gradient) {
  reg.add(
      OpSchema("Gradient", 1, "ai.onnx.preview.training")
          .category(Category::kTraining)
          .doc("Computes the gradient of the value named y with respect to each value named in xs, with the "
               "values in zs held constant.")
          .variadic_input("Inputs", "T1", 1, false)
          .variadic_output("Outputs", "T2", 1, false)
          .types("T1",
                 types::tensors({"float16", "float", "double", "int8", "int16", "int32", "int64", "uint8",
                                 "uint16", "uint32", "uint64", "bool", "string", "complex64", "complex128"}))
          .types("T2", types::tensors({"float16", "float", "double"}))
          .attr("xs", ir::AttrType::kStrings)
          .attr("y", ir::AttrType::kString)
          .attr_optional("zs", ir::AttrType::kStrings)
          .infer(infer_gradient));
}
