// Unique: the distinct elements (or slices along an axis) with their positions and counts.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::DataType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

void infer_unique(InferenceContext& ctx) {
  const Shape* s = input_shape(ctx, 0);
  // How many distinct values there are depends on the data.
  Dim count = Dim::unknown();
  Dim scanned = Dim::unknown();  // entries scanned: the axis' size, or the element count
  std::optional<Shape> y;
  if (!ctx.has_attr("axis")) {
    y = Shape{count};
    if (s) scanned = tensor::dims_product(*s);
  } else if (s) {
    int64_t axis = normalize_axis(ctx, ctx.attr_int("axis"), static_cast<int64_t>(s->size()));
    y = *s;
    (*y)[axis] = count;
    scanned = (*s)[axis];
  }
  propagate_elem(ctx, 0, 0, y);
  set_output(ctx, 1, DataType::kInt64, Shape{count});
  set_output(ctx, 2, DataType::kInt64, Shape{scanned});
  set_output(ctx, 3, DataType::kInt64, Shape{count});
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_unique) {
  // Opset 28 widened the types to the newest generation (bfloat16 and the small types).
  for (int v : {11, 28}) {
    reg.add(
        OpSchema("Unique", v)
            .category(Category::kTensorShape)
            .doc("Finds the distinct values (or distinct slices along 'axis'), with the index of each one's "
                 "first occurrence, each input entry's position among them and how often each occurs.")
            .attr_optional("axis", tessera::ir::AttrType::kInt,
                           "Axis of the slices; none flattens the input.")
            .attr("sorted", int64_t{1},
                  "1 sorts the unique values ascending; 0 keeps first-occurrence order.")
            .input("X", "T")
            .output("Y", "T")
            .optional_output("indices", "tensor(int64)")
            .optional_output("inverse_indices", "tensor(int64)")
            .optional_output("counts", "tensor(int64)")
            .types("T", tensor::all_types(v < 28 ? 11 : 25))
            .infer(infer_unique));
  }
}
