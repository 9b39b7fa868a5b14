// Schemas of the channels-last ops (com.tessera 1): NhwcConv, NhwcMaxPool and NhwcAveragePool. The
// layout is described in nhwc.h; the shapes are those of the NCHW op, with the channel axis last.
#include "ops/nhwc/nhwc.h"

#include <fmt/format.h>

#include "ops/contrib/fused_conv.h"
#include "ops/infer_util.h"
#include "ops/layout/pool_schema.h"
#include "ops/nn/window.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::AttrType;
using ir::Dim;
using ir::Shape;

namespace {

// [N, H, W, C] -> [N, C, H, W] and back.
Shape to_nchw(const Shape& s) {
  return {s[0], s[3], s[1], s[2]};
}
Shape to_nhwc(const Shape& s) {
  return {s[0], s[2], s[3], s[1]};
}

void require_nhwc(const InferenceContext& ctx, size_t i, const Shape& s, const char* name) {
  if (s.size() != 4)
    ctx.fail_input(i, fmt::format("{} must be channels-last [N, H, W, C], got rank {}", name, s.size()));
}

void infer_nhwc_conv(InferenceContext& ctx) {
  const Shape* x = input_shape(ctx, 0);
  const Shape* w = input_shape(ctx, 1);
  if (!x || !w) return set_output(ctx, 0, input_elem(ctx, 0), std::nullopt);
  require_nhwc(ctx, 0, *x, "X");
  if (w->size() != 4)
    ctx.fail_input(1, fmt::format("W must be [M, kH, kW, C/group], got rank {}", w->size()));
  const int64_t group = ctx.attr_int("group", 1);
  if (group < 1) ctx.fail(fmt::format("group is {}; it must be at least 1", group));
  const Shape plain = to_nchw(*x);
  if ((*w)[3].is_static() && plain[1].is_static()) {
    auto cin = checked_mul((*w)[3].value, group);
    if (!cin || *cin != plain[1].value)
      ctx.fail_input(
          0, fmt::format("W {} with group {} reads {} channels but X {} has {}", shape_to_string(*w), group,
                         cin ? *cin : -1, shape_to_string(*x), plain[1].value));
  }
  if ((*w)[0].is_static() && (*w)[0].value % group != 0)
    ctx.fail_input(1, fmt::format("group {} does not divide W's {} output channels", group, (*w)[0].value));
  std::vector<int64_t> kernel{(*w)[1].is_static() ? (*w)[1].value : -1,
                              (*w)[2].is_static() ? (*w)[2].value : -1};
  auto win = nn::read_window(ctx, 2, kernel);
  Shape y = to_nhwc(nn::window_output_shape(ctx, plain, (*w)[0], win));
  if (const Shape* b = input_shape(ctx, 2)) {
    if (b->size() != 1 || ((*b)[0].is_static() && (*w)[0].is_static() && (*b)[0].value != (*w)[0].value))
      ctx.fail_input(2, fmt::format("B must be [{}], one value per output channel, got {}",
                                    (*w)[0].is_static() ? (*w)[0].value : -1, shape_to_string(*b)));
  }
  if (const Shape* z = input_shape(ctx, 3)) {
    if (z->size() != 4)
      ctx.fail_input(3, fmt::format("Z must be the output's [N, H, W, M], got rank {}", z->size()));
    for (size_t d = 0; d < 4; ++d)
      if ((*z)[d].is_static() && y[d].is_static() && (*z)[d].value != y[d].value)
        ctx.fail_input(
            3, fmt::format("Z {} must have the output's shape {}", shape_to_string(*z), shape_to_string(y)));
  }
  set_output(ctx, 0, input_elem(ctx, 0), y);
}

void infer_nhwc_pool(InferenceContext& ctx) {
  const Shape* x = input_shape(ctx, 0);
  if (!x) return propagate_elem(ctx, 0, 0, std::nullopt);
  require_nhwc(ctx, 0, *x, "X");
  const Shape plain = to_nchw(*x);
  auto win = nn::read_window(ctx, 2, std::nullopt);
  propagate_elem(ctx, 0, 0, to_nhwc(nn::window_output_shape(ctx, plain, plain[1], win)));
}

}  // namespace

TESSERA_REGISTER_OPS(nhwc_layout) {
  const char* domain = tessera::ops::nhwc::kDomain;
  reg.add(contrib::fused_conv_schema(
              "NhwcConv", domain,
              "A 2-D convolution as com.microsoft FusedConv (bias B, a tensor Z added, then an activation) "
              "over a channels-last X [N, H, W, C] with weights W [M, kH, kW, C/group], giving a "
              "channels-last Y [N, H', W', M]; Z is channels-last like Y.",
              types::tensors({"float16", "float"}))
              .infer(infer_nhwc_conv));
  reg.add(layout::pool_schema("NhwcMaxPool",
                              "MaxPool over a channels-last X [N, H, W, C] (2-D, no Indices output).",
                              types::tensors({"float16", "float", "bfloat16"}), infer_nhwc_pool));
  reg.add(layout::pool_schema("NhwcAveragePool", "AveragePool over a channels-last X [N, H, W, C] (2-D).",
                              types::tensors({"float16", "float", "bfloat16"}), infer_nhwc_pool)
              .attr("count_include_pad", int64_t{0}));
}
