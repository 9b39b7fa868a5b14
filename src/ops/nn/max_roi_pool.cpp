// MaxRoiPool: max pooling of regions of interest to a fixed size (Fast R-CNN).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ops/infer_util.h"
#include "ops/nn/window.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::AttrType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// X [N, C, H, W] and rois [num_rois, 5] (batch index, x1, y1, x2, y2) give [num_rois, C, ph, pw].
void infer_max_roi_pool(InferenceContext& ctx) {
  std::vector<int64_t> pooled = ctx.attr_ints("pooled_shape");
  if (pooled.size() != 2)
    ctx.fail(fmt::format("pooled_shape {} must have 2 entries (height, width)", pooled));
  require_rank(ctx, 0, 4, "input 0 ('X')");
  require_rank(ctx, 1, 2, "input 1 ('rois')");
  const Shape* xs = input_shape(ctx, 0);
  const Shape* rs = input_shape(ctx, 1);
  if (rs && (*rs)[1].is_static() && (*rs)[1].value != 5) {
    ctx.fail_input(
        1, fmt::format("input 1 ('rois') has {} values per region; it needs 5 (batch index, x1, y1, x2, y2)",
                       (*rs)[1].value));
  }
  Shape y{rs ? (*rs)[0] : Dim::unknown(), xs ? (*xs)[1] : Dim::unknown(), Dim::of(pooled[0]),
          Dim::of(pooled[1])};
  propagate_elem(ctx, 0, 0, y);
}

}  // namespace

TESSERA_REGISTER_OPS(nn_max_roi_pool) {
  for (int v : {1, 22}) {
    OpSchema s("MaxRoiPool", v);
    s.category(Category::kPooling)
        .doc("Max-pools each region of interest of X into a fixed pooled_shape grid.")
        .input("X", "T")
        .input("rois", "T")
        .output("Y", "T")
        .types("T", nn::float_types(v))
        .attr("pooled_shape", AttrType::kInts)
        .attr("spatial_scale", 1.0f)
        .infer(infer_max_roi_pool);
    reg.add(std::move(s));
  }
}
