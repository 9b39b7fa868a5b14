// LayerNormalization and RMSNormalization: normalize over the trailing axes from `axis` on.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/nn/norm_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::DataType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// The statistics are computed in stash_type (an ONNX data type number), float by default.
DataType stash_type(const InferenceContext& ctx) {
  int64_t t = ctx.attr_int("stash_type", 1);
  if (!ir::is_valid_dtype(static_cast<int32_t>(t)) || t == 0) {
    ctx.fail(fmt::format("stash_type {} is not a data type", t));
  }
  return static_cast<DataType>(t);
}

void infer_layer_norm(InferenceContext& ctx) {
  propagate_type(ctx, 0, 0);
  DataType stash = stash_type(ctx);
  const Shape* xs = input_shape(ctx, 0);
  if (!xs) {
    set_output(ctx, 1, stash, std::nullopt);
    set_output(ctx, 2, stash, std::nullopt);
    return;
  }
  int64_t rank = static_cast<int64_t>(xs->size());
  int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), rank);
  nn::require_trailing_broadcast(ctx, 1, "Scale", *xs, axis);
  nn::require_trailing_broadcast(ctx, 2, "B", *xs, axis);
  // Mean and InvStdDev keep the leading axes and collapse the normalized ones to 1.
  Shape stat(xs->begin(), xs->begin() + axis);
  stat.resize(xs->size(), Dim::of(1));
  set_output(ctx, 1, stash, stat);
  set_output(ctx, 2, stash, stat);
}

// Y takes the scale's element type (V), which may differ from X's.
void infer_rms_norm(InferenceContext& ctx) {
  stash_type(ctx);
  const Shape* xs = input_shape(ctx, 0);
  DataType elem = input_elem(ctx, 1);
  if (elem == DataType::kUndefined) elem = input_elem(ctx, 0);
  if (!xs) return set_output(ctx, 0, elem, std::nullopt);
  int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), static_cast<int64_t>(xs->size()));
  nn::require_trailing_broadcast(ctx, 1, "scale", *xs, axis);
  set_output(ctx, 0, elem, *xs);
}

}  // namespace

TESSERA_REGISTER_OPS(nn_layer_normalization) {
  reg.add(OpSchema("LayerNormalization", 17)
              .category(Category::kNormalization)
              .doc("Normalizes X over the axes from `axis` to the end to zero mean and unit variance, then "
                   "applies "
                   "Scale and B. Optionally returns the mean and inverse standard deviation.")
              .input("X", "T")
              .input("Scale", "T")
              .optional_input("B", "T")
              .output("Y", "T")
              .optional_output("Mean", "U")
              .optional_output("InvStdDev", "U")
              .types("T", types::kFloatBf16)
              .types("U", types::tensors({"float", "bfloat16"}))
              .attr("axis", int64_t{-1})
              .attr("epsilon", 1e-5f)
              .attr("stash_type", int64_t{1})
              .infer(infer_layer_norm));
  reg.add(
      OpSchema("RMSNormalization", 23)
          .category(Category::kNormalization)
          .doc("Divides X by the root mean square of its values over the axes from `axis` to the end, then "
               "multiplies by scale.")
          .input("X", "T")
          .input("scale", "V")
          .output("Y", "V")
          .types("T", types::kFloatBf16)
          .types("V", types::kFloatBf16)
          .attr("axis", int64_t{-1})
          .attr("epsilon", 1e-5f)
          .attr("stash_type", int64_t{1})
          .infer(infer_rms_norm));
}
