// Shape and Size: a tensor's dimensions and element count, as int64 tensors. Both also carry their
// result as a shape value, which is what keeps symbolic dimensions alive through Reshape chains.
#include <fmt/format.h>

#include <algorithm>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::DataType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// Shape-15's start/end: negative values count from the back, then both clamp to [0, rank].
int64_t clamp_index(int64_t i, int64_t rank) {
  if (i < 0) i += rank;
  return std::clamp<int64_t>(i, 0, rank);
}

void infer_shape(InferenceContext& ctx) {
  const Shape* s = input_shape(ctx, 0);
  if (!s) {
    // Without the rank, the length is known only when start and end are both from the front.
    int64_t start = ctx.attr_int("start", 0);
    bool has_end = ctx.has_attr("end");
    int64_t end = ctx.attr_int("end", 0);
    Dim n = has_end && start >= 0 && end >= 0 ? Dim::of(std::max<int64_t>(0, end - start)) : Dim::unknown();
    return set_output(ctx, 0, DataType::kInt64, Shape{n});
  }
  int64_t rank = static_cast<int64_t>(s->size());
  int64_t start = clamp_index(ctx.attr_int("start", 0), rank);
  int64_t end = ctx.has_attr("end") ? clamp_index(ctx.attr_int("end"), rank) : rank;
  end = std::max(start, end);
  set_output(ctx, 0, DataType::kInt64, Shape{Dim::of(end - start)});
  std::vector<Dim> value;
  for (int64_t k = start; k < end; ++k) {
    // An unknown size gets a name of its own: an unnamed entry would read as Reshape's -1 downstream.
    value.push_back((*s)[k].is_unknown() ? ctx.new_symbol() : (*s)[k]);
  }
  tensor::set_value(ctx, 0, std::move(value));
}

void infer_size(InferenceContext& ctx) {
  set_output(ctx, 0, DataType::kInt64, Shape{});
  const Shape* s = input_shape(ctx, 0);
  if (!s) return;
  Dim n = tensor::dims_product(*s);
  if (!n.is_unknown()) tensor::set_value(ctx, 0, {n});
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_shape) {
  for (int v : {1, 13, 15, 19, 21, 23, 24, 25}) {
    OpSchema s("Shape", v);
    s.category(Category::kTensorShape)
        .doc("Returns the input's dimensions as a 1-D int64 tensor (a range of them from 15).");
    if (v >= 15) {
      s.attr_optional("end", tessera::ir::AttrType::kInt,
                      "One past the last axis; negative counts from the back.");
      s.attr("start", int64_t{0}, "First axis; negative counts from the back.");
    }
    s.input("data", "T")
        .output("shape", "T1")
        .types("T", tensor::all_types(v))
        .types("T1", types::tensors({"int64"}))
        .infer(infer_shape);
    reg.add(std::move(s));
  }
  for (int v : {1, 13, 19, 21, 23, 24, 25}) {
    reg.add(OpSchema("Size", v)
                .category(Category::kTensorShape)
                .doc("Returns the input's element count as an int64 scalar.")
                .input("data", "T")
                .output("size", "T1")
                .types("T", tensor::all_types(v))
                .types("T1", types::tensors({"int64"}))
                .infer(infer_size));
  }
}
