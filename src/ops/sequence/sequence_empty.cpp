// SequenceEmpty: a sequence with no tensors, of the element type given by 'dtype' (float by default).
#include <fmt/format.h>

#include "ops/registry.h"
#include "ops/sequence/sequence_util.h"

using namespace tessera::ops;
using tessera::ir::DataType;
using tessera::ir::Type;

TESSERA_REGISTER_OPS(sequence_sequence_empty) {
  reg.add(OpSchema("SequenceEmpty", 11)
              .category(Category::kSequence)
              .doc("Creates an empty sequence whose tensors will have element type 'dtype' (float when not "
                   "given).")
              .output("output", "S")
              .types("S", sequence_types())
              .attr_optional("dtype", tessera::ir::AttrType::kInt)
              .infer([](InferenceContext& ctx) {
                int64_t dtype = ctx.attr_int("dtype", static_cast<int64_t>(DataType::kFloat));
                if (!tessera::ir::is_valid_dtype(static_cast<int32_t>(dtype)) || dtype == 0) {
                  ctx.fail(fmt::format("attribute 'dtype' is {}, which is not a tensor element type", dtype));
                }
                ctx.set_output_type(0, Type::sequence(Type::tensor(static_cast<DataType>(dtype))));
              }));
}
