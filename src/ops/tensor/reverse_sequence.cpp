// ReverseSequence: reverses the first seq_len[b] steps of each batch entry along the time axis.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Shape;

namespace {

void infer_reverse_sequence(InferenceContext& ctx) {
  int64_t batch = ctx.attr_int("batch_axis", 1), time = ctx.attr_int("time_axis", 0);
  if ((batch != 0 && batch != 1) || (time != 0 && time != 1) || batch == time) {
    ctx.fail(
        fmt::format("attributes batch_axis {} and time_axis {} must be 0 and 1 in some order", batch, time));
  }
  require_rank(ctx, 1, 1, "input 'sequence_lens'");
  const Shape* s = input_shape(ctx, 0);
  if (s && s->size() < 2)
    ctx.fail_input(0, fmt::format("input {} needs rank >= 2", tessera::ir::shape_to_string(*s)));
  const Shape* lens = input_shape(ctx, 1);
  if (s && lens) {
    unify_dims(ctx, (*s)[batch], (*lens)[0],
               fmt::format("sequence_lens {} must have one entry per batch entry of {}",
                           tessera::ir::shape_to_string(*lens), tessera::ir::shape_to_string(*s)));
  }
  propagate_type(ctx, 0, 0);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_reverse_sequence) {
  // Opset 28 widened the types to the newest generation (bfloat16 and the small types).
  for (int v : {10, 28}) {
    reg.add(OpSchema("ReverseSequence", v)
                .category(Category::kTensorShape)
                .doc("For each batch entry b, reverses the first sequence_lens[b] elements along the time "
                     "axis and "
                     "keeps the rest.")
                .attr("batch_axis", int64_t{1}, "The batch axis, 0 or 1.")
                .attr("time_axis", int64_t{0}, "The time axis, 1 or 0.")
                .input("input", "T")
                .input("sequence_lens", "tensor(int64)")
                .output("Y", "T")
                .types("T", tensor::all_types(v < 28 ? 11 : 25))
                .infer(infer_reverse_sequence));
  }
}
