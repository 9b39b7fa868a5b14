// SequenceAt: the tensor at one position of a sequence.
#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/sequence/sequence_util.h"

using namespace tessera::ops;

TESSERA_REGISTER_OPS(sequence_sequence_at) {
  reg.add(
      OpSchema("SequenceAt", 11)
          .category(Category::kSequence)
          .doc("Returns the tensor at 'position' in the sequence; negative positions count from the back.")
          .input("input_sequence", "S")
          .input("position", "I")
          .output("tensor", "T")
          .types("S", sequence_types())
          .types("T", types::kAllTensor)
          .types("I", types::tensors({"int32", "int64"}))
          .infer([](InferenceContext& ctx) {
            require_scalar_position(ctx, 1);
            if (const auto* elem = sequence_elem(ctx, 0, "input_sequence")) ctx.set_output_type(0, *elem);
          }));
}
