// DequantizeLinear: y = (x - x_zero_point) * x_scale, per tensor, per axis or per block.
#include "ops/dtype_attr.h"
#include "ops/infer_util.h"
#include "ops/quant/quant_params.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::DataType;

namespace {

// The output type: float before opset 19; then the scale's; from opset 23 'output_dtype' when given.
void infer_dequantize(InferenceContext& ctx) {
  int v = ctx.schema().since_version();
  check_quant_params(ctx, v >= 13, v >= 21);
  std::optional<DataType> out = v >= 23 ? dtype_attr(ctx, "output_dtype", "T3") : std::nullopt;
  if (!out) out = v >= 19 ? input_elem(ctx, 1) : DataType::kFloat;
  if (*out == DataType::kUndefined) return;
  std::optional<tessera::ir::Shape> shape;
  if (const auto* s = input_shape(ctx, 0)) shape = *s;
  set_output(ctx, 0, *out, std::move(shape));
}

}  // namespace

TESSERA_REGISTER_OPS(quant_dequantize_linear) {
  const char* doc =
      "Dequantizes a tensor: subtracts the zero point and multiplies by the scale, giving a floating-point "
      "tensor of the same shape.";
  for (int v : {10, 13, 19, 21, 23, 24, 25}) {
    OpSchema s("DequantizeLinear", v);
    s.category(Category::kConversion).doc(doc);
    const char* q_t = v >= 19 ? "T1" : "T";
    const char* scale_t = v >= 19 ? "T2" : "tensor(float)";
    const char* y_t = v >= 23 ? "T3" : v >= 19 ? "T2" : "tensor(float)";
    s.input("x", q_t).input("x_scale", scale_t).optional_input("x_zero_point", q_t).output("y", y_t);
    if (v >= 13) s.attr("axis", int64_t{1});
    if (v >= 21) s.attr("block_size", int64_t{0});
    if (v >= 23) s.attr("output_dtype", int64_t{0});
    s.types(q_t, quantized_types(v, /*with_int32=*/true));
    if (v >= 19) s.types("T2", types::tensors({"float", "float16", "bfloat16"}));
    if (v >= 23) s.types("T3", types::tensors({"float", "float16", "bfloat16"}));
    reg.add(s.infer(infer_dequantize));
  }
}
