// Col2Im: rearranges columns of sliding blocks back into an image, summing overlaps (the inverse of im2col).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::AttrType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

std::vector<int64_t> list_attr(const InferenceContext& ctx, std::string_view name, size_t n, int64_t fill) {
  if (!ctx.has_attr(name)) return std::vector<int64_t>(n, fill);
  std::vector<int64_t> v = ctx.attr_ints(name);
  if (v.size() != n)
    ctx.fail(fmt::format("{} has {} entries but image_shape has {}", name, v.size(), fill == 0 ? n / 2 : n));
  return v;
}

// input [N, C * prod(block_shape), L] -> [N, C, image_shape...].
void infer_col2im(InferenceContext& ctx) {
  require_rank(ctx, 0, 3, "input 0 ('input')");
  require_rank(ctx, 1, 1, "input 1 ('image_shape')");
  require_rank(ctx, 2, 1, "input 2 ('block_shape')");
  const Shape* xs = input_shape(ctx, 0);
  auto image = constant_ints(ctx, 1);
  auto block = constant_ints(ctx, 2);
  Dim n = xs ? (*xs)[0] : Dim::unknown();
  if (!image) {
    // The rank is known from image_shape's length even when its values are not.
    const Shape* is = input_shape(ctx, 1);
    if (!is || !(*is)[0].is_static()) return propagate_elem(ctx, 0, 0, std::nullopt);
    Shape y(2 + (*is)[0].value, Dim::unknown());
    y[0] = n;
    return propagate_elem(ctx, 0, 0, y);
  }
  size_t k = image->size();
  if (block && block->size() != k) {
    ctx.fail(fmt::format("block_shape {} and image_shape {} must have the same length", *block, *image));
  }
  Dim c = Dim::unknown();
  if (block && xs) {
    int64_t per_block = 1;
    for (int64_t b : *block) {
      if (b < 1) ctx.fail(fmt::format("block_shape {} must be positive", *block));
      auto p = checked_mul(per_block, b);
      if (!p) ctx.fail(fmt::format("block_shape {} has a product beyond int64", *block));
      per_block = *p;
    }
    const Dim& cb = (*xs)[1];
    if (cb.is_static() && cb.value % per_block != 0) {
      ctx.fail_input(
          0, fmt::format("input 0 has {} values per column, not a multiple of the block size {} (block_shape "
                         "{})",
                         cb.value, per_block, *block));
    }
    if (cb.is_static()) c = Dim::of(cb.value / per_block);
    // L must be the number of block positions the image holds.
    auto strides = list_attr(ctx, "strides", k, 1);
    auto dilations = list_attr(ctx, "dilations", k, 1);
    auto pads = list_attr(ctx, "pads", 2 * k, 0);
    std::optional<int64_t> blocks = 1;
    for (size_t i = 0; i < k && blocks; ++i) {
      Dim d =
          conv_output_dim(Dim::of((*image)[i]), (*block)[i], strides[i], dilations[i], pads[i], pads[i + k]);
      blocks = d.is_static() ? checked_mul(*blocks, d.value) : std::nullopt;
    }
    if (blocks && (*xs)[2].is_static() && (*xs)[2].value != *blocks) {
      ctx.fail_input(
          0, fmt::format("input 0 has {} blocks (its last axis) but image_shape {} with block_shape {}, "
                         "strides, dilations and pads holds {}",
                         (*xs)[2].value, *image, *block, *blocks));
    }
  }
  Shape y{n, c};
  for (int64_t v : *image) y.push_back(Dim::of(v));
  propagate_elem(ctx, 0, 0, y);
}

}  // namespace

TESSERA_REGISTER_OPS(nn_col2im) {
  reg.add(
      OpSchema("Col2Im", 18)
          .category(Category::kConvolution)
          .doc("Folds columns of sliding blocks [N, C*prod(block), L] back into an image [N, C, image...], "
               "summing where blocks overlap.")
          .input("input", "T")
          .input("image_shape", "tensor(int64)")
          .input("block_shape", "tensor(int64)")
          .output("output", "T")
          .types("T", types::kAllTensorIr4)
          .attr_optional("dilations", AttrType::kInts)
          .attr_optional("pads", AttrType::kInts)
          .attr_optional("strides", AttrType::kInts)
          .infer(infer_col2im));
}
