// Compress: keeps the slices of the input (along an axis, or of the flattened input) where a boolean
// condition is true.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Dim;

namespace {

// Number of true entries among the first `limit` of a constant condition; unknown when not constant.
Dim count_true(const InferenceContext& ctx, std::optional<int64_t> limit) {
  const tessera::ir::Tensor* c = ctx.input_constant(1);
  if (!c || c->dtype != tessera::ir::DataType::kBool) return Dim::unknown();
  auto bytes = c->bytes();
  size_t n = limit ? std::min<size_t>(bytes.size(), static_cast<size_t>(*limit)) : bytes.size();
  int64_t count = 0;
  for (size_t k = 0; k < n; ++k) count += bytes[k] != std::byte{0};
  return Dim::of(count);
}

void infer_compress(InferenceContext& ctx) {
  require_rank(ctx, 1, 1, "condition");
  const tessera::ir::Shape* s = input_shape(ctx, 0);
  if (!ctx.has_attr("axis")) {
    propagate_elem(ctx, 0, 0, tessera::ir::Shape{count_true(ctx, std::nullopt)});
    return;
  }
  if (!s) return propagate_elem(ctx, 0, 0, std::nullopt);
  int64_t rank = static_cast<int64_t>(s->size());
  int64_t axis = ctx.attr_int("axis");
  if (ctx.opset() < 11 && axis < 0)
    ctx.fail(fmt::format("attribute 'axis' is {}; opset {} takes no negative axes", axis, ctx.opset()));
  axis = normalize_axis(ctx, axis, rank);
  tessera::ir::Shape out = *s;
  const Dim& d = (*s)[axis];
  out[axis] = count_true(ctx, d.is_static() ? std::optional(d.value) : std::nullopt);
  propagate_elem(ctx, 0, 0, out);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_compress) {
  for (int v : {9, 11, 28}) {
    reg.add(
        OpSchema("Compress", v)
            .category(Category::kTensorShape)
            .doc(
                "Selects the slices along 'axis' (or the elements of the flattened input) where condition is "
                "true.")
            .attr_optional("axis", tessera::ir::AttrType::kInt,
                           "Axis to select along; none flattens the input.")
            .input("input", "T")
            .input("condition", "T1")
            .output("output", "T")
            .types("T", tensor::all_types(v < 28 ? 11 : 25))
            .types("T1", types::tensors({"bool"}))
            .infer(infer_compress));
  }
}
