// NonMaxSuppression: greedily keeps the highest-scoring boxes and drops those overlapping them too much.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::DataType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// boxes [batch, boxes, 4], scores [batch, classes, boxes] -> selected_indices [selected, 3]; how many
// are selected is only known at run time.
void infer_nms(InferenceContext& ctx) {
  require_rank(ctx, 0, 3, "input 0 ('boxes')");
  require_rank(ctx, 1, 3, "input 1 ('scores')");
  int64_t cpb = ctx.attr_int("center_point_box", 0);
  if (cpb != 0 && cpb != 1) ctx.fail(fmt::format("center_point_box is {}; it must be 0 or 1", cpb));
  const Shape* bs = input_shape(ctx, 0);
  const Shape* ss = input_shape(ctx, 1);
  if (bs && (*bs)[2].is_static() && (*bs)[2].value != 4) {
    ctx.fail_input(0,
                   fmt::format("input 0 ('boxes') has {} coordinates per box; it needs 4", (*bs)[2].value));
  }
  if (bs && ss) {
    unify_dims(ctx, (*bs)[0], (*ss)[0], "inputs 0 ('boxes') and 1 ('scores') must have the same batch size");
    unify_dims(ctx, (*bs)[1], (*ss)[2],
               "input 1 ('scores') must score every box of input 0 ('boxes') (its last axis)");
  }
  set_output(ctx, 0, DataType::kInt64, Shape{ctx.new_symbol(), Dim::of(3)});
}

}  // namespace

TESSERA_REGISTER_OPS(nn_non_max_suppression) {
  for (int v : {10, 11}) {
    reg.add(OpSchema("NonMaxSuppression", v)
                .category(Category::kObjectDetection)
                .doc("Per batch and class, keeps boxes in decreasing score order while they overlap the kept "
                     "ones by "
                     "at most iou_threshold; returns [batch, class, box] index triples.")
                .input("boxes", "tensor(float)")
                .input("scores", "tensor(float)")
                .optional_input("max_output_boxes_per_class", "tensor(int64)")
                .optional_input("iou_threshold", "tensor(float)")
                .optional_input("score_threshold", "tensor(float)")
                .output("selected_indices", "tensor(int64)")
                .attr("center_point_box", int64_t{0})
                .infer(infer_nms));
  }
}
