// SequenceInsert: a copy of a sequence with one more tensor, at 'position' or at the back.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/sequence/container_types.h"
#include "ops/sequence/sequence_util.h"

using namespace tessera::ops;
using tessera::ir::Type;

TESSERA_REGISTER_OPS(sequence_sequence_insert) {
  reg.add(
      OpSchema("SequenceInsert", 11)
          .category(Category::kSequence)
          .doc("Inserts 'tensor' into the sequence at 'position' (counted from the back when negative), or "
               "appends it when no position is given.")
          .input("input_sequence", "S")
          .input("tensor", "T")
          .optional_input("position", "I")
          .output("output_sequence", "S")
          .types("T", types::kAllTensor)
          .types("S", sequence_types())
          .types("I", types::tensors({"int32", "int64"}))
          .infer([](InferenceContext& ctx) {
            require_scalar_position(ctx, 2);
            const Type* seq_elem = sequence_elem(ctx, 0, "input_sequence");
            const Type* tensor = ctx.input_type(1);
            if (tensor && !tensor->is_none() && !tensor->is_tensor()) {
              ctx.fail_input(1,
                             fmt::format("input 'tensor' must be a tensor, got {}", tensor->type_string()));
            }
            if (!seq_elem && (!tensor || tensor->is_none())) return;
            // The sequence's element type now also describes the inserted tensor. A side of unknown
            // type leaves the shape unknown.
            Type elem;
            if (seq_elem && tensor && !tensor->is_none()) {
              elem = merge_types(ctx, *seq_elem, *tensor, "the sequence's tensors and the inserted 'tensor'");
            } else {
              elem = seq_elem ? *seq_elem : *tensor;
              elem.shape.reset();
            }
            ctx.set_output_type(0, Type::sequence(elem));
          }));
}
