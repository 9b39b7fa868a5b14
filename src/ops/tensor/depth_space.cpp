// DepthToSpace and SpaceToDepth: move blocks of values between the channel and the spatial axes of an
// NCHW tensor.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// Divides a dimension by `by`, failing when a known size does not divide.
Dim divide(const InferenceContext& ctx, const Dim& d, int64_t by, std::string_view what) {
  if (!d.is_static()) return Dim::unknown();
  if (d.value % by != 0) ctx.fail_input(0, fmt::format("{} {} is not divisible by {}", what, d.value, by));
  return Dim::of(d.value / by);
}

int64_t blocksize(const InferenceContext& ctx) {
  int64_t b = ctx.attr_int("blocksize", 0);
  if (b <= 0) ctx.fail(fmt::format("attribute 'blocksize' is {}; it must be positive", b));
  return b;
}

void check_mode(const InferenceContext& ctx) {
  std::string mode = ctx.attr_string("mode", "DCR");
  if (mode == "DCR" || mode == "CRD") return;
  ctx.fail(fmt::format("attribute 'mode' is '{}'; expected 'DCR' or 'CRD'", mode));
}

void infer_depth_to_space(InferenceContext& ctx) {
  int64_t b = blocksize(ctx);
  check_mode(ctx);
  require_rank(ctx, 0, 4, "input 'input'");
  const Shape* s = input_shape(ctx, 0);
  if (!s) return propagate_elem(ctx, 0, 0, std::nullopt);
  Shape out = {(*s)[0], divide(ctx, (*s)[1], b * b, fmt::format("channel count (blocksize {} squared):", b)),
               dim_mul((*s)[2], Dim::of(b)), dim_mul((*s)[3], Dim::of(b))};
  propagate_elem(ctx, 0, 0, out);
}

void infer_space_to_depth(InferenceContext& ctx) {
  int64_t b = blocksize(ctx);
  check_mode(ctx);
  require_rank(ctx, 0, 4, "input 'input'");
  const Shape* s = input_shape(ctx, 0);
  if (!s) return propagate_elem(ctx, 0, 0, std::nullopt);
  Shape out = {(*s)[0], dim_mul((*s)[1], Dim::of(b * b)), divide(ctx, (*s)[2], b, "height"),
               divide(ctx, (*s)[3], b, "width")};
  propagate_elem(ctx, 0, 0, out);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_depth_space) {
  // Opset 28 widened both to the newest types and gave SpaceToDepth DepthToSpace's 'mode'.
  for (int v : {1, 11, 13, 28}) {
    OpSchema s("DepthToSpace", v);
    s.category(Category::kTensorShape)
        .doc("Rearranges [N, C, H, W] into [N, C/(b*b), H*b, W*b], moving channel blocks into space.")
        .attr("blocksize", tessera::ir::AttrType::kInt, "Side b of the spatial blocks.");
    if (v >= 11) s.attr("mode", "DCR", "Channel order of the blocks: 'DCR' (depth-column-row) or 'CRD'.");
    s.input("input", "T").output("output", "T").types("T", tensor::all_types(v < 28 ? v : 25));
    reg.add(std::move(s.infer(infer_depth_to_space)));
  }
  for (int v : {1, 13, 28}) {
    OpSchema s("SpaceToDepth", v);
    s.category(Category::kTensorShape)
        .doc("Rearranges [N, C, H, W] into [N, C*b*b, H/b, W/b], moving spatial blocks into channels.")
        .attr("blocksize", tessera::ir::AttrType::kInt, "Side b of the spatial blocks.");
    // DCR is the order earlier versions used.
    if (v >= 28) s.attr("mode", "DCR", "Channel order of the blocks: 'DCR' (depth-column-row) or 'CRD'.");
    s.input("input", "T").output("output", "T").types("T", tensor::all_types(v < 28 ? v : 25));
    reg.add(std::move(s.infer(infer_space_to_depth)));
  }
}
