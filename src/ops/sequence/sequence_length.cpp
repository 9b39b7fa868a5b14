// SequenceLength: the number of tensors in a sequence, as an int64 scalar.
#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/sequence/sequence_util.h"

using namespace tessera::ops;

TESSERA_REGISTER_OPS(sequence_sequence_length) {
  reg.add(OpSchema("SequenceLength", 11)
              .category(Category::kSequence)
              .doc("Returns how many tensors the sequence holds, as an int64 scalar.")
              .input("input_sequence", "S")
              .output("length", "I")
              .types("S", sequence_types())
              .types("I", {"tensor(int64)"})
              .infer([](InferenceContext& ctx) {
                sequence_elem(ctx, 0, "input_sequence");
                set_output(ctx, 0, tessera::ir::DataType::kInt64, tessera::ir::Shape{});
              }));
}
