// Range: the numbers start, start + delta, ... up to (not including) limit.
#include <fmt/format.h>

#include <cmath>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::DataType;
using tessera::ir::Dim;

namespace {

std::optional<double> scalar_of(const InferenceContext& ctx, size_t i) {
  const tessera::ir::Tensor* t = ctx.input_constant(i);
  if (!t || t->numel() != 1) return std::nullopt;
  switch (t->dtype) {
    case DataType::kFloat:
      return t->as<float>()[0];
    case DataType::kDouble:
      return t->as<double>()[0];
    case DataType::kInt16:
      return t->as<int16_t>()[0];
    case DataType::kInt32:
      return t->as<int32_t>()[0];
    case DataType::kInt64:
      return static_cast<double>(t->as<int64_t>()[0]);
    default:
      return std::nullopt;
  }
}

void infer_range(InferenceContext& ctx) {
  static const char* kNames[] = {"start", "limit", "delta"};
  for (size_t i = 0; i < 3; ++i) {
    const tessera::ir::Shape* s = input_shape(ctx, i);
    // The spec says scalar; a one-element vector is accepted as runtimes do.
    if (s && !s->empty() && !(s->size() == 1 && (!(*s)[0].is_static() || (*s)[0].value == 1))) {
      ctx.fail_input(i, fmt::format("input '{}' must be a scalar, got shape {}", kNames[i],
                                    tessera::ir::shape_to_string(*s)));
    }
  }
  auto start = scalar_of(ctx, 0), limit = scalar_of(ctx, 1), delta = scalar_of(ctx, 2);
  if (delta && *delta == 0) ctx.fail_input(2, "delta is 0");
  Dim n = Dim::unknown();
  if (start && limit && delta) {
    n = Dim::of(std::max<int64_t>(0, static_cast<int64_t>(std::ceil((*limit - *start) / *delta))));
  }
  propagate_elem(ctx, 0, 0, tessera::ir::Shape{n});
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_range) {
  for (int v : {11, 27}) {
    auto t = types::tensors({"float", "double", "int16", "int32", "int64"});
    if (v >= 27) t = types::concat({t, types::tensors({"float16", "bfloat16"})});  // Range-27: 16-bit floats
    reg.add(OpSchema("Range", v)
                .category(Category::kTensorCreation)
                .doc("Produces the 1-D sequence start, start+delta, ... stopping before limit; "
                     "max(ceil((limit-start)/delta), 0) elements.")
                .input("start", "T")
                .input("limit", "T")
                .input("delta", "T")
                .output("output", "T")
                .types("T", t)
                .infer(infer_range));
  }
}
