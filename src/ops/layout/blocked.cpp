// Schemas of the blocked-layout ops (com.tessera 1): ReorderToBlocked, ReorderFromBlocked, BlockedConv,
// BlockedMaxPool and BlockedAveragePool. The layout itself is described in blocked.h.
#include "ops/layout/blocked.h"

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
using tessera::ops::layout::channel_blocks;

namespace {

// The block size attribute: a power of two the kernels have a layout for.
int64_t read_block(const InferenceContext& ctx) {
  int64_t b = ctx.attr_int("block", 16);
  if (b != 4 && b != 8 && b != 16)
    ctx.fail(fmt::format("block is {}; the blocked layout has blocks of 4, 8 or 16 channels", b));
  return b;
}

Dim blocks_of(const Dim& c, int64_t block) {
  return c.is_static() ? Dim::of(channel_blocks(c.value, block)) : Dim::unknown();
}

// [N, C, H, W] -> [N, ceil(C/b), H, W, b].
Shape blocked_shape(const Shape& plain, int64_t block) {
  return {plain[0], blocks_of(plain[1], block), plain[2], plain[3], Dim::of(block)};
}

// A blocked input's [N, C, H, W] view with C the padded channel count (what the spatial rules need).
Shape plain_view(const InferenceContext& ctx, size_t i, const Shape& x) {
  if (x.size() != 5) ctx.fail_input(i, fmt::format("a blocked tensor has rank 5, got {}", x.size()));
  Dim c = x[1].is_static() && x[4].is_static() ? Dim::of(x[1].value * x[4].value) : Dim::unknown();
  return {x[0], c, x[2], x[3]};
}

void infer_to_blocked(InferenceContext& ctx) {
  int64_t b = read_block(ctx);
  const Shape* x = input_shape(ctx, 0);
  if (!x) return propagate_elem(ctx, 0, 0, std::nullopt);
  if (x->size() != 4) ctx.fail_input(0, fmt::format("X must be [N, C, H, W], got rank {}", x->size()));
  propagate_elem(ctx, 0, 0, blocked_shape(*x, b));
}

void infer_from_blocked(InferenceContext& ctx) {
  int64_t c = ctx.attr_int("channels", -1);
  if (c < 1) ctx.fail(fmt::format("channels is {}; it must be at least 1", c));
  const Shape* x = input_shape(ctx, 0);
  if (!x) return propagate_elem(ctx, 0, 0, std::nullopt);
  plain_view(ctx, 0, *x);
  if ((*x)[1].is_static() && (*x)[4].is_static() && channel_blocks(c, (*x)[4].value) != (*x)[1].value)
    ctx.fail_input(0, fmt::format("{} channels in blocks of {} make {} blocks, but X has {}", c,
                                  (*x)[4].value, channel_blocks(c, (*x)[4].value), (*x)[1].value));
  propagate_elem(ctx, 0, 0, Shape{(*x)[0], Dim::of(c), (*x)[2], (*x)[3]});
}

// X is either plain [N, C, H, W] (a first convolution over few channels) or blocked.
void infer_blocked_conv(InferenceContext& ctx) {
  int64_t b = read_block(ctx);
  const Shape* x = input_shape(ctx, 0);
  const Shape* w = input_shape(ctx, 1);
  if (!x || !w) return set_output(ctx, 0, input_elem(ctx, 0), std::nullopt);
  if (w->size() != 4)
    ctx.fail_input(1, fmt::format("W must be [M, C/group, kH, kW], got rank {}", w->size()));
  if (x->size() == 5 && (*x)[4].is_static() && (*x)[4].value != b)
    ctx.fail_input(0, fmt::format("X is blocked by {} but block is {}", (*x)[4].value, b));
  Shape plain = x->size() == 5 ? plain_view(ctx, 0, *x) : *x;
  if (plain.size() != 4)
    ctx.fail_input(0, fmt::format("X must be [N, C, H, W] or blocked, got rank {}", x->size()));
  int64_t group = ctx.attr_int("group", 1);
  if (group < 1) ctx.fail(fmt::format("group is {}; it must be at least 1", group));
  if ((*w)[1].is_static() && plain[1].is_static()) {
    auto cin = checked_mul((*w)[1].value, group);
    bool fits = x->size() == 5 ? cin && *cin <= plain[1].value && *cin > plain[1].value - b
                               : cin && *cin == plain[1].value;
    if (!fits)
      ctx.fail_input(0, fmt::format("W {} with group {} does not read the channels of X {}",
                                    shape_to_string(*w), group, shape_to_string(*x)));
  }
  std::vector<int64_t> kernel{(*w)[2].is_static() ? (*w)[2].value : -1,
                              (*w)[3].is_static() ? (*w)[3].value : -1};
  auto win = nn::read_window(ctx, 2, kernel);
  Shape y = nn::window_output_shape(ctx, plain, (*w)[0], win);
  set_output(ctx, 0, input_elem(ctx, 0), blocked_shape(y, b));
}

void infer_blocked_pool(InferenceContext& ctx) {
  const Shape* x = input_shape(ctx, 0);
  if (!x) return propagate_elem(ctx, 0, 0, std::nullopt);
  Shape plain = plain_view(ctx, 0, *x);
  auto win = nn::read_window(ctx, 2, std::nullopt);
  Shape y = nn::window_output_shape(ctx, plain, plain[1], win);
  propagate_elem(ctx, 0, 0, Shape{y[0], (*x)[1], y[2], y[3], (*x)[4]});
}

}  // namespace

TESSERA_REGISTER_OPS(layout_blocked) {
  const char* domain = tessera::ops::layout::kDomain;
  reg.add(OpSchema("ReorderToBlocked", 1, domain)
              .category(Category::kTensorShape)
              .doc("Rearranges an NCHW tensor into Tessera's blocked layout [N, ceil(C/block), H, W, block], "
                   "padding the channels with zeros.")
              .input("X", "T")
              .output("Y", "T")
              .types("T", types::tensors({"float"}))
              .attr("block", int64_t{16})
              .infer(infer_to_blocked));
  reg.add(OpSchema("ReorderFromBlocked", 1, domain)
              .category(Category::kTensorShape)
              .doc("Rearranges a blocked tensor back into NCHW, keeping the first `channels` channels.")
              .input("X", "T")
              .output("Y", "T")
              .types("T", types::tensors({"float"}))
              .attr("channels", AttrType::kInt)
              .infer(infer_from_blocked));
  reg.add(contrib::fused_conv_schema(
              "BlockedConv", domain,
              "A 2-D convolution (as com.microsoft FusedConv: bias B, a tensor Z added, then an activation) "
              "from a blocked X (or a plain NCHW X) with plain weights W [M, C/group, kH, kW] to a blocked "
              "Y; Z is blocked like Y.",
              types::tensors({"float"}))
              .attr("block", int64_t{16})
              .infer(infer_blocked_conv));
  reg.add(layout::pool_schema("BlockedMaxPool", "MaxPool over a blocked tensor (2-D, no Indices output).",
                              types::tensors({"float"}), infer_blocked_pool));
  reg.add(layout::pool_schema("BlockedAveragePool", "AveragePool over a blocked tensor (2-D).",
                              types::tensors({"float"}), infer_blocked_pool)
              .attr("count_include_pad", int64_t{0}));
}
