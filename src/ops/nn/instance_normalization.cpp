// InstanceNormalization: normalizes each channel of each sample over its spatial axes.
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

void infer_instance_norm(InferenceContext& ctx) {
  propagate_type(ctx, 0, 0);
  const Shape* xs = input_shape(ctx, 0);
  if (!xs) return;
  nn::require_nc(ctx, 0, *xs, "input");
  nn::require_per_channel(ctx, 1, "scale", (*xs)[1]);
  nn::require_per_channel(ctx, 2, "B", (*xs)[1]);
}

}  // namespace

TESSERA_REGISTER_OPS(nn_instance_normalization) {
  for (int v : {1, 6, 22}) {
    OpSchema s("InstanceNormalization", v);
    s.category(Category::kNormalization)
        .doc(
            "Normalizes each channel of each sample to zero mean and unit variance over its spatial axes, "
            "then "
            "applies a per-channel scale and bias.")
        .input("input", "T")
        .input("scale", "T")
        .input("B", "T")
        .output("output", "T")
        .types("T", nn::float_types(v))
        .infer(infer_instance_norm);
    if (v == 1) s.attr_optional("consumed_inputs", AttrType::kInts);
    s.attr("epsilon", 1e-5f);
    reg.add(std::move(s));
  }
}
