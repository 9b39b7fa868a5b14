// OneHot: expands indices into one-hot vectors along a new axis.
#include <fmt/format.h>

#include <cmath>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::DataType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// The depth when it is a one-element constant of any numeric type.
Dim depth_of(const InferenceContext& ctx) {
  const tessera::ir::Tensor* t = ctx.input_constant(1);
  if (!t || t->numel() != 1) return Dim::unknown();
  double d = 0;
  switch (t->dtype) {
    case DataType::kFloat:
      d = t->as<float>()[0];
      break;
    case DataType::kDouble:
      d = t->as<double>()[0];
      break;
    case DataType::kInt64:
      d = static_cast<double>(t->as<int64_t>()[0]);
      break;
    case DataType::kInt32:
      d = t->as<int32_t>()[0];
      break;
    case DataType::kUint8:
      d = t->as<uint8_t>()[0];
      break;
    case DataType::kInt8:
      d = t->as<int8_t>()[0];
      break;
    default:
      return Dim::unknown();
  }
  if (d < 1) ctx.fail_input(1, fmt::format("depth is {}; it must be at least 1", d));
  return Dim::of(static_cast<int64_t>(std::floor(d)));
}

void infer_one_hot(InferenceContext& ctx) {
  if (const Shape* d = input_shape(ctx, 1); d && shape_numel(*d) && *shape_numel(*d) != 1) {
    ctx.fail_input(1,
                   fmt::format("depth must hold one value, got shape {}", tessera::ir::shape_to_string(*d)));
  }
  if (const Shape* v = input_shape(ctx, 2)) {
    if (v->size() != 1 || ((*v)[0].is_static() && (*v)[0].value != 2)) {
      ctx.fail_input(2, fmt::format("values must be [off, on], a 1-D tensor of 2 elements, got {}",
                                    tessera::ir::shape_to_string(*v)));
    }
  }
  const Shape* idx = input_shape(ctx, 0);
  if (!idx) return propagate_elem(ctx, 2, 0, std::nullopt);
  int64_t out_rank = static_cast<int64_t>(idx->size()) + 1;
  int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), out_rank);
  Shape out = *idx;
  out.insert(out.begin() + axis, depth_of(ctx));
  propagate_elem(ctx, 2, 0, out);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_one_hot) {
  for (int v : {9, 11, 28}) {
    reg.add(
        OpSchema("OneHot", v)
            .category(Category::kTensorCreation)
            .doc("Replaces each index with a vector of 'depth' entries, all 'off' but the indexed one 'on'; "
                 "the vectors lie along 'axis'.")
            .attr("axis", int64_t{-1}, "Position of the new axis in the output.")
            .input("indices", "T1")
            .input("depth", "T2")
            .input("values", "T3")
            .output("output", "T3")
            .types("T1", types::kNumeric)
            .types("T2", types::kNumeric)
            .types("T3", tensor::all_types(v < 28 ? 11 : 25))
            .infer(infer_one_hot));
  }
}
