// SplitToSequence: cuts a tensor along an axis into a sequence of pieces.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/sequence/container_types.h"
#include "ops/sequence/sequence_util.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;
using tessera::ir::Type;

namespace {

// Size of every piece along the axis when all pieces have the same known size; unknown otherwise.
Dim piece_size(const InferenceContext& ctx, const Dim& along) {
  const Shape* split_shape = input_shape(ctx, 1);
  if (split_shape && split_shape->size() > 1) {
    ctx.fail_input(1, fmt::format("input 'split' must be a scalar or 1-D, got shape {}",
                                  tessera::ir::shape_to_string(*split_shape)));
  }
  auto split = constant_ints(ctx, 1);
  if (!split || split->empty()) return Dim::unknown();
  for (int64_t v : *split) {
    if (v < 0) ctx.fail_input(1, fmt::format("input 'split' holds {}; sizes must not be negative", v));
  }
  const tessera::ir::Tensor* t = ctx.input_constant(1);
  if (t->dims.empty()) {
    // A scalar split cuts equal chunks; only when it divides the axis is the last one the same size.
    int64_t chunk = (*split)[0];
    if (chunk == 0) ctx.fail_input(1, "input 'split' is 0; a chunk size must be positive");
    if (along.is_static() && along.value % chunk == 0) return Dim::of(chunk);
    return Dim::unknown();
  }
  int64_t sum = 0;
  for (int64_t v : *split) sum += v;
  if (along.is_static() && sum != along.value) {
    ctx.fail_input(
        1, fmt::format("the sizes in 'split' add up to {} but the axis has {} elements", sum, along.value));
  }
  for (int64_t v : *split) {
    if (v != (*split)[0]) return Dim::unknown();
  }
  return Dim::of((*split)[0]);
}

void infer_split_to_sequence(InferenceContext& ctx) {
  auto elem = input_elem(ctx, 0);
  const Type* in_type = ctx.input_type(0);
  if (!in_type || in_type->is_none()) return;
  const Shape* in = input_shape(ctx, 0);
  if (!in) return ctx.set_output_type(0, Type::sequence(Type::tensor(elem)));
  auto rank = static_cast<int64_t>(in->size());
  int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), rank);
  Shape out = *in;
  if (ctx.has_input(1)) {
    out[axis] = piece_size(ctx, (*in)[axis]);
  } else if (ctx.attr_int("keepdims", 1) != 0) {
    out[axis] = Dim::of(1);  // without 'split' every piece is one slice thick
  } else {
    out.erase(out.begin() + axis);
  }
  ctx.set_output_type(0, Type::sequence(Type::tensor(elem, out)));
}

}  // namespace

TESSERA_REGISTER_OPS(sequence_split_to_sequence) {
  const char* doc =
      "Splits the input along 'axis' into a sequence: into pieces of the sizes listed in 'split', into "
      "chunks "
      "of a scalar 'split', or into slices of 1 (dropped with keepdims=0) when 'split' is absent.";
  // Opset 24 widened the element types to those of its IR version.
  for (auto [version, tensors] : {std::pair{11, types::kAllTensor}, std::pair{24, types::kAllTensorIr12}}) {
    reg.add(OpSchema("SplitToSequence", version)
                .category(Category::kSequence)
                .doc(doc)
                .input("input", "T")
                .optional_input("split", "I")
                .output("output_sequence", "S")
                .types("T", tensors)
                .types("I", types::tensors({"int32", "int64"}))
                .types("S", seq_of(tensors))
                .attr("axis", int64_t{0})
                .attr("keepdims", int64_t{1})
                .infer(infer_split_to_sequence));
  }
}
