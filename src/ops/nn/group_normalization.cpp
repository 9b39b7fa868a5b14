// GroupNormalization: normalizes groups of channels of each sample together.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/nn/norm_util.h"
#include "ops/nn/window.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::AttrType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

void infer_group_norm(InferenceContext& ctx) {
  propagate_type(ctx, 0, 0);
  int64_t groups = ctx.attr_int("num_groups", 0);
  if (groups < 1) ctx.fail(fmt::format("num_groups is {}; it must be at least 1", groups));
  const Shape* xs = input_shape(ctx, 0);
  if (!xs) return;
  nn::require_nc(ctx, 0, *xs, "X");
  const Dim& c = (*xs)[1];
  if (c.is_static() && c.value % groups != 0) {
    ctx.fail_input(0, fmt::format("X has {} channels, which num_groups {} does not divide", c.value, groups));
  }
  // Opset 18 scaled each group; opset 21 scales each channel.
  bool per_group = ctx.schema().since_version() < 21;
  Dim size = per_group ? Dim::of(groups) : c;
  const char* what = per_group ? "num_groups" : "X's channel count";
  nn::require_per_channel(ctx, 1, "scale", size, what);
  nn::require_per_channel(ctx, 2, "bias", size, what);
}

}  // namespace

TESSERA_REGISTER_OPS(nn_group_normalization) {
  for (int v : {18, 21}) {
    OpSchema s("GroupNormalization", v);
    s.category(Category::kNormalization)
        .doc(
            "Splits the channels into num_groups groups and normalizes each group of each sample to zero "
            "mean and "
            "unit variance, then applies a scale and bias.")
        .input("X", "T")
        .input("scale", "T")
        .input("bias", "T")
        .output("Y", "T")
        .types("T", types::kFloatBf16)
        .attr("epsilon", 1e-5f)
        .attr("num_groups", AttrType::kInt)
        .infer(infer_group_norm);
    if (v >= 21) s.attr("stash_type", int64_t{1});
    reg.add(std::move(s));
  }
}
