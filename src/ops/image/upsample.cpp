// Upsample: the forerunner of Resize (deprecated in opset 10); each dimension grows by a scale >= 1.
#include <fmt/format.h>

#include <cmath>

#include "ops/image/float_constant.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::AttrType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// floor(d * scale); a scale of 1 keeps the dimension, symbolic or not.
Dim scaled(const Dim& d, double scale) {
  if (scale == 1.0) return d;
  return d.is_static() ? Dim::of(static_cast<int64_t>(std::floor(static_cast<double>(d.value) * scale)))
                       : Dim::unknown();
}

// The scales: attributes height_scale/width_scale (opset 1, NCHW), 'scales' (opset 7), or input 1 (opset 9).
std::optional<std::vector<double>> upsample_scales(const InferenceContext& ctx, int version) {
  if (version >= 9) return constant_floats(ctx, 1);
  if (version >= 7) {
    auto f = ctx.attr_floats("scales");
    return std::vector<double>(f.begin(), f.end());
  }
  return std::vector<double>{1.0, 1.0, ctx.attr_float("height_scale", 1), ctx.attr_float("width_scale", 1)};
}

void infer_upsample(InferenceContext& ctx) {
  int v = ctx.schema().since_version();
  std::string mode = ctx.attr_string("mode", "nearest");
  const char* other = v >= 7 ? "linear" : "bilinear";
  if (mode != "nearest" && mode != other) {
    ctx.fail(fmt::format("attribute 'mode' is '{}'; it must be 'nearest' or '{}'", mode, other));
  }
  if (v < 7) require_rank(ctx, 0, 4, "X (NCHW)");
  if (v >= 9) require_rank(ctx, 1, 1, "scales");
  auto scales = upsample_scales(ctx, v);
  const Shape* x = input_shape(ctx, 0);
  if (scales) {
    for (double s : *scales) {
      if (!(s >= 1.0)) ctx.fail(fmt::format("scales must be at least 1 (Upsample only enlarges), got {}", s));
    }
    if (x && scales->size() != x->size()) {
      ctx.fail(fmt::format("{} scales given for a rank-{} input {}; there must be one per dimension",
                           scales->size(), x->size(), tessera::ir::shape_to_string(*x)));
    }
  }
  if (!x) return propagate_elem(ctx, 0, 0, std::nullopt);
  Shape out(x->size());
  for (size_t i = 0; i < x->size(); ++i) out[i] = scales ? scaled((*x)[i], (*scales)[i]) : Dim::unknown();
  propagate_elem(ctx, 0, 0, std::move(out));
}

}  // namespace

TESSERA_REGISTER_OPS(image_upsample) {
  const char* doc =
      "Enlarges a tensor by a scale (at least 1) per dimension, by nearest-neighbour or linear "
      "interpolation; "
      "each output dimension is floor(input dimension * scale). Replaced by Resize.";
  reg.add(OpSchema("Upsample", 1)
              .category(Category::kImage)
              .doc(doc)
              .input("X", "T")
              .output("Y", "T")
              .attr("height_scale", AttrType::kFloat)
              .attr("mode", "nearest")
              .attr("width_scale", AttrType::kFloat)
              .types("T", types::tensors({"bool", "int32", "int64", "float16", "float", "double"}))
              .infer(infer_upsample));
  reg.add(OpSchema("Upsample", 7)
              .category(Category::kImage)
              .doc(doc)
              .input("X", "T")
              .output("Y", "T")
              .attr("mode", "nearest")
              .attr("scales", AttrType::kFloats)
              .types("T", types::kAllTensor)
              .infer(infer_upsample));
  for (int v : {9, 10}) {
    reg.add(OpSchema("Upsample", v)
                .category(Category::kImage)
                .doc(doc)
                .deprecated(v == 10)
                .input("X", "T")
                .input("scales", "tensor(float)")
                .output("Y", "T")
                .attr("mode", "nearest")
                .types("T", types::kAllTensor)
                .infer(infer_upsample));
  }
}
