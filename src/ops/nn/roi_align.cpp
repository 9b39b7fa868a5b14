// RoiAlign: bilinearly samples each region of interest into a fixed output_height x output_width grid.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/nn/window.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// X [N, C, H, W], rois [num_rois, 4], batch_indices [num_rois] -> [num_rois, C, oh, ow].
void infer_roi_align(InferenceContext& ctx) {
  require_rank(ctx, 0, 4, "input 0 ('X')");
  require_rank(ctx, 1, 2, "input 1 ('rois')");
  require_rank(ctx, 2, 1, "input 2 ('batch_indices')");
  std::string mode = ctx.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") ctx.fail(fmt::format("mode is '{}'; it must be 'avg' or 'max'", mode));
  std::string ctm = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel") {
    ctx.fail(fmt::format(
        "coordinate_transformation_mode is '{}'; it must be 'half_pixel' or 'output_half_pixel'", ctm));
  }
  int64_t oh = ctx.attr_int("output_height", 1), ow = ctx.attr_int("output_width", 1);
  if (oh < 1 || ow < 1)
    ctx.fail(fmt::format("output_height {} and output_width {} must be positive", oh, ow));
  const Shape* xs = input_shape(ctx, 0);
  const Shape* rs = input_shape(ctx, 1);
  const Shape* bs = input_shape(ctx, 2);
  if (rs && (*rs)[1].is_static() && (*rs)[1].value != 4) {
    ctx.fail_input(1, fmt::format("input 1 ('rois') has {} values per region; it needs 4 (x1, y1, x2, y2)",
                                  (*rs)[1].value));
  }
  Dim rois = rs ? (*rs)[0] : Dim::unknown();
  if (bs)
    rois =
        unify_dims(ctx, rois, (*bs)[0], "input 2 ('batch_indices') must have one entry per region in rois");
  propagate_elem(ctx, 0, 0, Shape{rois, xs ? (*xs)[1] : Dim::unknown(), Dim::of(oh), Dim::of(ow)});
}

}  // namespace

TESSERA_REGISTER_OPS(nn_roi_align) {
  for (int v : {10, 16, 22}) {
    OpSchema s("RoiAlign", v);
    s.category(Category::kObjectDetection)
        .doc(
            "Pools each region of interest of X to a fixed grid by averaging (or taking the max of) bilinear "
            "samples, without the quantization of RoiPool (Mask R-CNN).")
        .input("X", "T1")
        .input("rois", "T1")
        .input("batch_indices", "T2")
        .output("Y", "T1")
        .types("T1", nn::float_types(v))
        .types("T2", types::tensors({"int64"}));
    if (v >= 16) s.attr("coordinate_transformation_mode", "half_pixel");
    s.attr("mode", "avg")
        .attr("output_height", int64_t{1})
        .attr("output_width", int64_t{1})
        .attr("sampling_ratio", int64_t{0})
        .attr("spatial_scale", 1.0f)
        .infer(infer_roi_align);
    reg.add(std::move(s));
  }
}
