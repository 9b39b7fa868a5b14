// GatherElements: element-wise gather along one axis; the output has the indices' shape.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Shape;

namespace {

void infer_gather_elements(InferenceContext& ctx) {
  const Shape* data = input_shape(ctx, 0);
  const Shape* idx = input_shape(ctx, 1);
  if (data && data->empty()) ctx.fail_input(0, "input 'data' is a scalar; GatherElements needs rank >= 1");
  if (data && idx && data->size() != idx->size()) {
    ctx.fail_input(1, fmt::format("indices {} must have the rank of data {}",
                                  tessera::ir::shape_to_string(*idx), tessera::ir::shape_to_string(*data)));
  }
  if (data) normalize_axis(ctx, ctx.attr_int("axis", 0), static_cast<int64_t>(data->size()));
  propagate_elem(ctx, 0, 0, idx ? std::optional(*idx) : std::nullopt);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_gather_elements) {
  for (int v : {11, 13}) {
    reg.add(OpSchema("GatherElements", v)
                .category(Category::kTensorShape)
                .doc("For each index, takes the element of 'data' at that index along 'axis' and at the "
                     "index's own "
                     "position elsewhere; the output has the shape of the indices.")
                .attr("axis", int64_t{0}, "Axis to gather along.")
                .input("data", "T")
                .input("indices", "Tind")
                .output("output", "T")
                .types("T", tensor::all_types(v))
                .types("Tind", types::tensors({"int32", "int64"}))
                .infer(infer_gather_elements));
  }
}
