// OptionalHasElement: whether an optional holds a value, as a bool scalar.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/sequence/container_types.h"

using namespace tessera::ops;
using tessera::ir::Type;

namespace {

void infer_has_element(InferenceContext& ctx) {
  const Type* in = ctx.has_input(0) ? ctx.input_type(0) : nullptr;
  if (in && !in->is_none() && in->kind != Type::Kind::kOptional && ctx.schema().since_version() < 18) {
    ctx.fail_input(0, fmt::format("input must be an optional before opset 18, got {}", in->type_string()));
  }
  set_output(ctx, 0, tessera::ir::DataType::kBool, tessera::ir::Shape{});
}

}  // namespace

TESSERA_REGISTER_OPS(sequence_optional_has_element) {
  auto elems = tensor_and_seq(types::kAllTensor);
  reg.add(OpSchema("OptionalHasElement", 15)
              .category(Category::kSequence)
              .doc("True when the optional input holds a value, false when it is empty.")
              .input("input", "O")
              .output("output", "B")
              .types("O", optional_of(elems))
              .types("B", {"tensor(bool)"})
              .infer(infer_has_element));
  // Opset 18 lets the input be omitted (false) or be a plain tensor or sequence (true).
  reg.add(
      OpSchema("OptionalHasElement", 18)
          .category(Category::kSequence)
          .doc("True when the input is given and is not an empty optional; a tensor or sequence counts as "
               "present.")
          .optional_input("input", "O")
          .output("output", "B")
          .types("O", types::concat({optional_of(elems), elems}))
          .types("B", {"tensor(bool)"})
          .infer(infer_has_element));
}
