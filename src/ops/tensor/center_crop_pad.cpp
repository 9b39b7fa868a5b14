// CenterCropPad: crops or pads the given axes, centred, to the requested sizes.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

void infer_center_crop_pad(InferenceContext& ctx) {
  require_rank(ctx, 1, 1, "input 'shape'");
  const Shape* s = input_shape(ctx, 0);
  if (!s) return propagate_elem(ctx, 0, 0, std::nullopt);
  int64_t rank = static_cast<int64_t>(s->size());
  std::vector<int64_t> axes;
  if (ctx.has_attr("axes")) {
    axes = tensor::normalize_axes(ctx, ctx.attr_ints("axes"), rank);
  } else {
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  }
  auto sizes = shape_value(ctx, 1);
  Shape out = *s;
  if (!sizes) {
    for (int64_t a : axes) out[a] = Dim::unknown();
    return propagate_elem(ctx, 0, 0, out);
  }
  if (sizes->size() != axes.size()) {
    ctx.fail_input(1, fmt::format("shape {} has {} sizes for {} axes", tensor::dims_string(*sizes),
                                  sizes->size(), axes.size()));
  }
  for (size_t k = 0; k < axes.size(); ++k) {
    const Dim& d = (*sizes)[k];
    if (d.param.empty() && d.value < 0 && ctx.input_constant(1)) {
      ctx.fail_input(1, fmt::format("shape {} has a negative size", tensor::dims_string(*sizes)));
    }
    out[axes[k]] = d.param.empty() && d.value < 0 ? Dim::unknown() : d;
  }
  propagate_elem(ctx, 0, 0, out);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_center_crop_pad) {
  reg.add(OpSchema("CenterCropPad", 18)
              .category(Category::kImage)
              .doc("Centre-crops axes larger than the requested size and zero-pads, centred, those smaller.")
              .attr_optional("axes", tessera::ir::AttrType::kInts,
                             "Axes that 'shape' refers to; all when not set.")
              .input("input_data", "T")
              .input("shape", "Tind", "Requested size of each axis.")
              .output("output_data", "T")
              .types("T", types::kAllTensorIr4)
              .types("Tind", types::tensors({"int32", "int64"}))
              .infer(infer_center_crop_pad));
}
