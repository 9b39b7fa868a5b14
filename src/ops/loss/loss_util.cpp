#include "ops/loss/loss_util.h"

#include <fmt/format.h>

#include "ops/infer_util.h"

namespace tessera::ops {

using ir::Shape;

void infer_class_loss(InferenceContext& ctx, std::string_view input_name, std::string_view target_name) {
  std::string reduction = ctx.attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    ctx.fail(fmt::format("attribute 'reduction' must be 'none', 'sum' or 'mean', got '{}'", reduction));
  }
  const Shape* in = input_shape(ctx, 0);
  const Shape* target = input_shape(ctx, 1);
  const Shape* weight = ctx.has_input(2) ? input_shape(ctx, 2) : nullptr;
  if (in && in->size() < 2) {
    ctx.fail_input(0, fmt::format("input '{}' must be [N, C, d1, ...] (rank 2 or more), got {}", input_name,
                                  ir::shape_to_string(*in)));
  }
  if (in && target) {
    if (target->size() + 1 != in->size()) {
      ctx.fail_input(
          1, fmt::format("'{}' {} must have rank {} (one less than '{}' {})", target_name,
                         ir::shape_to_string(*target), in->size() - 1, input_name, ir::shape_to_string(*in)));
    }
    unify_dims(ctx, (*in)[0], (*target)[0],
               fmt::format("batch size of '{}' and '{}'", input_name, target_name));
    for (size_t k = 1; k < target->size(); ++k) {
      unify_dims(ctx, (*in)[k + 1], (*target)[k],
                 fmt::format("dimension {} of '{}' and {} of '{}'", k + 1, input_name, k, target_name));
    }
  }
  if (weight) {
    if (weight->size() != 1) {
      ctx.fail_input(2,
                     fmt::format("the class weights must be 1-D [C], got {}", ir::shape_to_string(*weight)));
    }
    if (in) {
      unify_dims(ctx, (*in)[1], (*weight)[0],
                 fmt::format("class count C of '{}' and the weights", input_name));
    }
  }
  auto elem = input_elem(ctx, 0);
  if (reduction != "none") return set_output(ctx, 0, elem, Shape{});
  if (target) return set_output(ctx, 0, elem, *target);
  if (in) {
    Shape out(*in);
    out.erase(out.begin() + 1);
    return set_output(ctx, 0, elem, out);
  }
  set_output(ctx, 0, elem, std::nullopt);
}

}  // namespace tessera::ops
