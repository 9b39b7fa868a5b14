// Concat: joins tensors of equal rank along one axis.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// Concatenating 1-D shape values gives the result's value (Shape -> Gather -> Concat -> Reshape).
void concat_values(InferenceContext& ctx) {
  std::vector<Dim> out;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    auto v = shape_value(ctx, i);
    if (!v) return;
    out.insert(out.end(), v->begin(), v->end());
  }
  tensor::set_value(ctx, 0, std::move(out));
}

void infer_concat(InferenceContext& ctx) {
  std::optional<Shape> first;
  size_t first_index = 0;
  for (size_t i = 0; i < ctx.num_inputs() && !first; ++i) {
    if (const Shape* s = input_shape(ctx, i)) first = *s, first_index = i;
  }
  if (!first) return propagate_elem(ctx, 0, 0, std::nullopt);
  int64_t rank = static_cast<int64_t>(first->size());
  if (rank == 0)
    ctx.fail_input(first_index, fmt::format("input {} is a scalar; Concat needs rank >= 1", first_index));
  // Concat-1 defaulted the axis to 1; later versions require it.
  int64_t axis = ctx.attr_int("axis", 1);
  if (ctx.opset() < 11 && axis < 0)
    ctx.fail(fmt::format("attribute 'axis' is {}; opset {} takes no negative axes", axis, ctx.opset()));
  axis = normalize_axis(ctx, axis, rank);
  Shape out = *first;
  bool sum_known = true;
  Dim sum = Dim::of(0);
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Shape* s = input_shape(ctx, i);
    if (!s) {
      sum_known = false;
      continue;
    }
    if (static_cast<int64_t>(s->size()) != rank) {
      ctx.fail_input(i, fmt::format("input {} {} has rank {} but input {} {} has rank {}", i,
                                    tessera::ir::shape_to_string(*s), s->size(), first_index,
                                    tessera::ir::shape_to_string(*first), rank));
    }
    for (int64_t k = 0; k < rank; ++k) {
      if (k == axis) continue;
      out[k] = unify_dims(ctx, out[k], (*s)[k],
                          fmt::format("input {} {} does not match input {} {} in dimension {}", i,
                                      tessera::ir::shape_to_string(*s), first_index,
                                      tessera::ir::shape_to_string(*first), k));
    }
    sum = dim_add(sum, (*s)[axis]);
  }
  // dim_add keeps a symbol only when the other side is 0, so a lone symbolic input survives.
  out[axis] = sum_known ? sum : Dim::unknown();
  propagate_elem(ctx, 0, 0, out);
  if (rank == 1) concat_values(ctx);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_concat) {
  for (int v : {1, 4, 11, 13}) {
    OpSchema s("Concat", v);
    s.category(Category::kTensorShape).doc("Joins its inputs along 'axis'; all other dimensions must agree.");
    if (v < 4) {
      s.attr_optional("axis", tessera::ir::AttrType::kInt, "Axis to join along (1 when not set).");
    } else {
      s.attr("axis", tessera::ir::AttrType::kInt, "Axis to join along; negative counts from the back (11+).");
    }
    s.variadic_input("inputs", "T")
        .output("concat_result", "T")
        .types("T", v < 4 ? types::kFloat : tensor::all_types(v))
        .infer(infer_concat);
    reg.add(std::move(s));
  }
}
