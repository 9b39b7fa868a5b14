// AffineGrid: the sampling grid of a batch of affine transforms, for GridSample.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// theta [N, 2, 3] with size (N, C, H, W) gives [N, H, W, 2]; theta [N, 3, 4] with size (N, C, D, H, W)
// gives [N, D, H, W, 3].
void infer_affine_grid(InferenceContext& ctx) {
  require_rank(ctx, 0, 3, "theta");
  require_rank(ctx, 1, 1, "size");
  const Shape* theta = input_shape(ctx, 0);
  auto size = shape_value(ctx, 1);
  // The number of values of size (-1: not known): the output rank.
  int64_t n = size ? static_cast<int64_t>(size->size()) : -1;
  if (n < 0) {
    if (const Shape* s = input_shape(ctx, 1); s && (*s)[0].is_static()) n = (*s)[0].value;
  }
  if (auto c = constant_ints(ctx, 1)) {
    for (int64_t v : *c) {
      if (v < 0) ctx.fail_input(1, fmt::format("size has a negative value {}", v));
    }
  }
  if (n >= 0 && n != 4 && n != 5) {
    ctx.fail_input(1, fmt::format("size must have 4 (N, C, H, W) or 5 (N, C, D, H, W) values, got {}", n));
  }
  if (theta && n >= 0) {
    int64_t spatial = n - 2;
    const Dim &r = (*theta)[1], &c = (*theta)[2];
    if ((r.is_static() && r.value != spatial) || (c.is_static() && c.value != spatial + 1)) {
      ctx.fail_input(0, fmt::format("theta is {} but a {}-D grid needs [N, {}, {}]",
                                    tessera::ir::shape_to_string(*theta), spatial, spatial, spatial + 1));
    }
  }
  if (n < 0) return propagate_elem(ctx, 0, 0, std::nullopt);
  Shape out;
  Dim batch = size ? (*size)[0] : Dim::unknown();
  if (theta) batch = unify_dims(ctx, batch, (*theta)[0], "the batch of theta and size[0] differ");
  out.push_back(batch);
  for (int64_t i = 2; i < n; ++i) out.push_back(size ? (*size)[i] : Dim::unknown());
  out.push_back(Dim::of(n - 2));
  propagate_elem(ctx, 0, 0, std::move(out));
}

}  // namespace

TESSERA_REGISTER_OPS(image_affine_grid) {
  reg.add(OpSchema("AffineGrid", 20)
              .category(Category::kImage)
              .doc("Generates the normalised sampling coordinates that a batch of 2-D or 3-D affine matrices "
                   "'theta' maps an output of the given size to; feed it to GridSample to warp images.")
              .input("theta", "T1")
              .input("size", "T2")
              .output("grid", "T1")
              .attr("align_corners", int64_t{0})
              .types("T1", types::kFloatBf16)
              .types("T2", types::tensors({"int64"}))
              .infer(infer_affine_grid));
}
