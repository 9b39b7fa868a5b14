// OptionalGetElement: the value inside an optional (from opset 18 a plain tensor or sequence passes through).
#include <fmt/format.h>

#include "ops/registry.h"
#include "ops/sequence/container_types.h"

using namespace tessera::ops;
using tessera::ir::Type;

namespace {

void infer_get_element(InferenceContext& ctx) {
  const Type* in = ctx.input_type(0);
  if (!in || in->is_none()) return;
  if (in->kind == Type::Kind::kOptional) {
    if (in->inner && !in->inner->is_none()) ctx.set_output_type(0, *in->inner);
    return;
  }
  if (ctx.schema().since_version() < 18) {
    ctx.fail_input(0, fmt::format("input must be an optional before opset 18, got {}", in->type_string()));
  }
  ctx.set_output_type(0, *in);
}

}  // namespace

TESSERA_REGISTER_OPS(sequence_optional_get_element) {
  auto elems = tensor_and_seq(types::kAllTensor);
  reg.add(OpSchema("OptionalGetElement", 15)
              .category(Category::kSequence)
              .doc("Returns the value held by a non-empty optional; reading an empty optional is an error.")
              .input("input", "O")
              .output("output", "V")
              .types("O", optional_of(elems))
              .types("V", elems)
              .infer(infer_get_element));
  reg.add(
      OpSchema("OptionalGetElement", 18)
          .category(Category::kSequence)
          .doc(
              "Returns the value held by a non-empty optional; a tensor or sequence input is returned as is.")
          .input("input", "O")
          .output("output", "V")
          .types("O", types::concat({optional_of(elems), elems}))
          .types("V", elems)
          .infer(infer_get_element));
}
