// GatherND: gathers slices of data addressed by the last axis of an index tensor.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Shape;

namespace {

void infer_gather_nd(InferenceContext& ctx) {
  const Shape* data = input_shape(ctx, 0);
  const Shape* idx = input_shape(ctx, 1);
  int64_t b = ctx.attr_int("batch_dims", 0);
  if (data && data->empty()) ctx.fail_input(0, "input 'data' is a scalar; GatherND needs rank >= 1");
  if (idx && idx->empty()) ctx.fail_input(1, "input 'indices' is a scalar; GatherND needs rank >= 1");
  if (!data || !idx) return propagate_elem(ctx, 0, 0, std::nullopt);
  int64_t r = static_cast<int64_t>(data->size()), q = static_cast<int64_t>(idx->size());
  if (b < 0 || b >= std::min(r, q)) {
    ctx.fail(fmt::format(
        "attribute 'batch_dims' is {}; it must be below the ranks of data ({}) and indices ({})", b, r, q));
  }
  for (int64_t k = 0; k < b; ++k) {
    unify_dims(ctx, (*data)[k], (*idx)[k], fmt::format("batch dimension {} of data and indices differs", k));
  }
  const auto& last = idx->back();
  if (!last.is_static()) return propagate_elem(ctx, 0, 0, std::nullopt);
  if (last.value < 1 || last.value > r - b) {
    ctx.fail_input(1, fmt::format("indices {} address {} axes but data {} has only {} after {} batch axes",
                                  tessera::ir::shape_to_string(*idx), last.value,
                                  tessera::ir::shape_to_string(*data), r - b, b));
  }
  Shape out(idx->begin(), idx->end() - 1);
  out.insert(out.end(), data->begin() + b + last.value, data->end());
  propagate_elem(ctx, 0, 0, out);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_gather_nd) {
  for (int v : {11, 12, 13}) {
    OpSchema s("GatherND", v);
    s.category(Category::kTensorShape)
        .doc(
            "Each row of the last index axis addresses a slice of 'data' (after the batch axes); the slices "
            "are "
            "stacked in the shape of the other index axes.");
    if (v >= 12) s.attr("batch_dims", int64_t{0}, "Leading axes shared by data and indices.");
    s.input("data", "T")
        .input("indices", "tensor(int64)")
        .output("output", "T")
        .types("T", tensor::all_types(v))
        .infer(infer_gather_nd);
    reg.add(std::move(s));
  }
}
