// Optional: wraps a value (or nothing, of a given type) into an optional.
#include <fmt/format.h>

#include "ops/registry.h"
#include "ops/sequence/container_types.h"

using namespace tessera::ops;
using tessera::ir::Type;

namespace {

void infer_optional(InferenceContext& ctx) {
  const tessera::ir::Attribute* type_attr = ctx.attr("type");
  const Type* declared = type_attr && !type_attr->types.empty() ? &type_attr->types[0] : nullptr;
  if (!ctx.has_input(0)) {
    // An empty optional has no value to take its type from, so the attribute must say it.
    if (!declared) ctx.fail("an Optional without input needs the 'type' attribute to say what it may hold");
    return ctx.set_output_type(0, Type::optional(*declared));
  }
  const Type* in = ctx.input_type(0);
  if (!in || in->is_none()) {
    if (declared) ctx.set_output_type(0, Type::optional(*declared));
    return;
  }
  if (declared) merge_types(ctx, *declared, *in, "the 'type' attribute and the input");
  ctx.set_output_type(0, Type::optional(*in));
}

}  // namespace

TESSERA_REGISTER_OPS(sequence_optional) {
  auto elems = tensor_and_seq(types::kAllTensor);
  reg.add(
      OpSchema("Optional", 15)
          .category(Category::kSequence)
          .doc("Makes an optional value holding the input, or an empty optional of the attribute 'type' when "
               "there is no input.")
          .optional_input("input", "V")
          .output("output", "O")
          .types("V", elems)
          .types("O", optional_of(elems))
          .attr_optional("type", tessera::ir::AttrType::kTypeProto)
          .infer(infer_optional));
}
