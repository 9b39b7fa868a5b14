// Gather: picks entries along an axis with an index tensor; the index shape replaces that axis.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// Gathering from a shape value (Shape -> Gather(i)) keeps the picked dimensions.
void gather_value(InferenceContext& ctx, const std::optional<std::vector<int64_t>>& indices) {
  const auto* data = ctx.input_shape_value(0);
  if (!data || !indices) return;
  std::vector<Dim> out;
  int64_t n = static_cast<int64_t>(data->size());
  for (int64_t i : *indices) {
    if (i < -n || i >= n) return;
    out.push_back((*data)[i < 0 ? i + n : i]);
  }
  tensor::set_value(ctx, 0, std::move(out));
}

void infer_gather(InferenceContext& ctx) {
  const Shape* data = input_shape(ctx, 0);
  const Shape* idx = input_shape(ctx, 1);
  if (data && data->empty()) ctx.fail_input(0, "input 'data' is a scalar; Gather needs rank >= 1");
  if (!data || !idx) return propagate_elem(ctx, 0, 0, std::nullopt);
  int64_t rank = static_cast<int64_t>(data->size());
  int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), rank);
  auto indices = tensor::static_ints(ctx, 1);
  const Dim& size = (*data)[axis];
  if (indices && size.is_static()) {
    for (int64_t i : *indices) {
      if (i < -size.value || i >= size.value) {
        ctx.fail_input(1,
                       fmt::format("index {} is out of range for axis {} of size {}", i, axis, size.value));
      }
    }
  }
  Shape out(data->begin(), data->begin() + axis);
  out.insert(out.end(), idx->begin(), idx->end());
  out.insert(out.end(), data->begin() + axis + 1, data->end());
  propagate_elem(ctx, 0, 0, out);
  if (rank == 1 && idx->size() <= 1) gather_value(ctx, indices);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_gather) {
  for (int v : {1, 11, 13}) {
    reg.add(
        OpSchema("Gather", v)
            .category(Category::kTensorShape)
            .doc(
                "Takes the entries of 'data' along 'axis' at the given indices (negative ones count from the "
                "end); the output shape is data's with that axis replaced by the indices' shape.")
            .attr("axis", int64_t{0}, "Axis to gather along.")
            .input("data", "T")
            .input("indices", "Tind")
            .output("output", "T")
            .types("T", tensor::all_types(v))
            .types("Tind", types::tensors({"int32", "int64"}))
            .infer(infer_gather));
  }
}
