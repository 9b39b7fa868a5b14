// ConstantOfShape: a tensor of a given shape filled with one value.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::DataType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

void infer_constant_of_shape(InferenceContext& ctx) {
  require_rank(ctx, 0, 1, "input 'input' (the shape)");
  DataType elem = DataType::kFloat;  // the default value is a float 0
  if (const tessera::ir::Attribute* a = ctx.node().attr("value")) {
    if (a->type != tessera::ir::AttrType::kTensor || a->tensors.empty())
      ctx.fail("attribute 'value' is not a tensor");
    const auto& t = a->tensors[0];
    auto n = t.numel();
    if (n && *n != 1) ctx.fail(fmt::format("attribute 'value' must hold one element, got {}", *n));
    elem = t.dtype;
  }
  if (auto v = shape_value(ctx, 0)) {
    Shape out;
    for (const Dim& d : *v) {
      if (d.param.empty() && d.value < -1)
        ctx.fail_input(0, fmt::format("shape {} has a negative dimension", tensor::dims_string(*v)));
      if (d.param.empty() && d.value == -1 && ctx.input_constant(0)) {
        ctx.fail_input(0, fmt::format("shape {} has a negative dimension", tensor::dims_string(*v)));
      }
      out.push_back(d);
    }
    return set_output(ctx, 0, elem, out);
  }
  // Only the length of the shape is known: the rank.
  const Shape* s = input_shape(ctx, 0);
  if (s && s->size() == 1 && (*s)[0].is_static())
    return set_output(ctx, 0, elem, Shape(static_cast<size_t>((*s)[0].value)));
  set_output(ctx, 0, elem, std::nullopt);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_constant_of_shape) {
  for (int v : {9, 20, 21, 23, 24, 25}) {
    // The fill types: numbers and bool, from 20 also bfloat16 and the 8-bit floats, then each new small type.
    std::vector<std::string> fill =
        v < 20 ? types::concat({types::kNumeric, types::tensors({"bool"})})
               : tensor::without(tensor::all_types(v), {"string", "complex64", "complex128"});
    reg.add(
        OpSchema("ConstantOfShape", v)
            .category(Category::kTensorCreation)
            .doc("Creates a tensor of the shape given by its input, every element set to 'value' (float 0 by "
                 "default).")
            .attr_optional("value", tessera::ir::AttrType::kTensor,
                           "One-element tensor: the fill value and type.")
            .input("input", "T1")
            .output("output", "T2")
            .types("T1", types::tensors({"int64"}))
            .types("T2", fill)
            .infer(infer_constant_of_shape));
  }
}
