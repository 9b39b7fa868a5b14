// SequenceErase: a copy of a sequence without the tensor at 'position' (the last one by default).
#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/sequence/sequence_util.h"

using namespace tessera::ops;

TESSERA_REGISTER_OPS(sequence_sequence_erase) {
  reg.add(
      OpSchema("SequenceErase", 11)
          .category(Category::kSequence)
          .doc("Removes the tensor at 'position' from the sequence (negative positions count from the back); "
               "without a position, removes the last one.")
          .input("input_sequence", "S")
          .optional_input("position", "I")
          .output("output_sequence", "S")
          .types("S", sequence_types())
          .types("I", types::tensors({"int32", "int64"}))
          .infer([](InferenceContext& ctx) {
            require_scalar_position(ctx, 1);
            sequence_elem(ctx, 0, "input_sequence");  // validates the kind
            propagate_type(ctx, 0, 0);
          }));
}
