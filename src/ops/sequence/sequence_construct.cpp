// SequenceConstruct: a sequence holding the given tensors, in order.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/sequence/container_types.h"
#include "ops/sequence/sequence_util.h"

using namespace tessera::ops;
using tessera::ir::Type;

TESSERA_REGISTER_OPS(sequence_sequence_construct) {
  reg.add(OpSchema("SequenceConstruct", 11)
              .category(Category::kSequence)
              .doc("Makes a sequence of the input tensors, which must all have the same element type.")
              .variadic_input("inputs", "T")
              .output("output_sequence", "S")
              .types("T", types::kAllTensor)
              .types("S", sequence_types())
              .infer([](InferenceContext& ctx) {
                // The element type describes every tensor: common element type, shape where they agree.
                Type elem;
                bool any_unknown = false;
                for (size_t i = 0; i < ctx.num_inputs(); ++i) {
                  const Type* t = ctx.input_type(i);
                  if (!t || t->is_none()) {
                    any_unknown = true;
                    continue;
                  }
                  if (!t->is_tensor()) {
                    ctx.fail_input(i, fmt::format("input {} must be a tensor, got {}", i, t->type_string()));
                  }
                  elem = elem.is_none() ? *t : merge_types(ctx, elem, *t, fmt::format("input {}", i));
                }
                // An input of unknown type may have any shape, but its element type must be the others'.
                if (any_unknown) elem.shape.reset();
                if (elem.is_none()) return;
                ctx.set_output_type(0, Type::sequence(elem));
              }));
}
