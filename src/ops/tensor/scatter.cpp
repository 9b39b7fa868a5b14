// Scatter and ScatterElements: a copy of data with the updates written at per-element indices along
// one axis. Scatter is the older name of the same operator.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Shape;

namespace {

void check_reduction(const InferenceContext& ctx) {
  std::string r = ctx.attr_string("reduction", "none");
  bool minmax = ctx.opset() >= 18;
  if (r == "none" || r == "add" || r == "mul" || (minmax && (r == "max" || r == "min"))) return;
  ctx.fail(fmt::format("attribute 'reduction' is '{}'; expected 'none', 'add', 'mul'{}", r,
                       minmax ? ", 'max' or 'min'" : ""));
}

void infer_scatter_elements(InferenceContext& ctx) {
  check_reduction(ctx);
  const Shape* data = input_shape(ctx, 0);
  const Shape* idx = input_shape(ctx, 1);
  const Shape* upd = input_shape(ctx, 2);
  if (data && data->empty()) ctx.fail_input(0, "input 'data' is a scalar; it needs rank >= 1");
  if (data && idx && data->size() != idx->size()) {
    ctx.fail_input(1, fmt::format("indices {} must have the rank of data {}",
                                  tessera::ir::shape_to_string(*idx), tessera::ir::shape_to_string(*data)));
  }
  if (idx && upd) {
    if (idx->size() != upd->size()) {
      ctx.fail_input(2, fmt::format("updates {} must have the shape of indices {}",
                                    tessera::ir::shape_to_string(*upd), tessera::ir::shape_to_string(*idx)));
    }
    for (size_t k = 0; k < idx->size(); ++k) {
      unify_dims(ctx, (*idx)[k], (*upd)[k],
                 fmt::format("updates {} must have the shape of indices {} (dimension {})",
                             tessera::ir::shape_to_string(*upd), tessera::ir::shape_to_string(*idx), k));
    }
  }
  if (data) normalize_axis(ctx, ctx.attr_int("axis", 0), static_cast<int64_t>(data->size()));
  propagate_type(ctx, 0, 0);
}

OpSchema scatter_schema(const char* name, int v) {
  OpSchema s(name, v);
  s.category(Category::kTensorShape)
      .doc(
          "Copies data, then writes each update at the position of its index along 'axis' (its own position "
          "on "
          "the other axes), optionally combining with the old value.")
      .attr("axis", int64_t{0}, "Axis the indices address.");
  if (v >= 16)
    s.attr("reduction", "none", "How an update combines with the old value: none, add, mul, max, min (18+).");
  s.input("data", "T")
      .input("indices", "Tind")
      .input("updates", "T")
      .output("output", "T")
      .types("T", tensor::all_types(v))
      .types("Tind", types::tensors({"int32", "int64"}))
      .infer(infer_scatter_elements);
  return s;
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_scatter) {
  reg.add(scatter_schema("Scatter", 9));
  reg.add(scatter_schema("Scatter", 11).deprecated());
  for (int v : {11, 13, 16, 18}) reg.add(scatter_schema("ScatterElements", v));
}
