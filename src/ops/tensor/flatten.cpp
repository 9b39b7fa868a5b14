// Flatten: collapses a tensor into a matrix at an axis.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

void infer_flatten(InferenceContext& ctx) {
  const Shape* s = input_shape(ctx, 0);
  if (!s) return propagate_elem(ctx, 0, 0, std::nullopt);
  int64_t rank = static_cast<int64_t>(s->size());
  int64_t axis = ctx.attr_int("axis", 1);
  // The axis may equal the rank (everything goes to the rows); negative ones count from 11 on.
  int64_t low = ctx.opset() < 11 ? 0 : -rank;
  if (axis < low || axis > rank) {
    ctx.fail(
        fmt::format("attribute 'axis' is {}, outside [{}, {}] for a rank-{} input", axis, low, rank, rank));
  }
  if (axis < 0) axis += rank;
  std::vector<Dim> head(s->begin(), s->begin() + axis), tail(s->begin() + axis, s->end());
  propagate_elem(ctx, 0, 0, Shape{tensor::dims_product(head), tensor::dims_product(tail)});
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_flatten) {
  for (int v : {1, 9, 11, 13, 21, 23, 24, 25}) {
    reg.add(OpSchema("Flatten", v)
                .category(Category::kTensorShape)
                .doc("Reshapes the input to 2-D: the dimensions before 'axis' become rows, the rest columns.")
                .attr("axis", int64_t{1}, "First dimension of the columns.")
                .input("input", "T")
                .output("output", "T")
                .types("T", v < 9 ? types::kFloat : tensor::all_types(v))
                .infer(infer_flatten));
  }
}
