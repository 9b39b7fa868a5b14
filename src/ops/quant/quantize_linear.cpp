// QuantizeLinear: y = saturate(round(x / y_scale) + y_zero_point), per tensor, per axis or per block.
#include <fmt/format.h>

#include "ops/dtype_attr.h"
#include "ops/infer_util.h"
#include "ops/quant/quant_params.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::AttrType;
using tessera::ir::DataType;

namespace {

// The quantized type: the zero point's, else (opset 21+) 'output_dtype', else uint8.
void infer_quantize(InferenceContext& ctx) {
  int v = ctx.schema().since_version();
  check_quant_params(ctx, v >= 13, v >= 21);
  DataType out = DataType::kUndefined;
  if (v >= 21) out = dtype_attr(ctx, "output_dtype", v >= 23 ? "T3" : "T2").value_or(DataType::kUndefined);
  if (ctx.has_input(2)) {
    DataType zp = input_elem(ctx, 2);
    if (zp == DataType::kUndefined) return;
    if (out != DataType::kUndefined && out != zp) {
      ctx.fail(
          fmt::format("attribute 'output_dtype' is {} but the zero point y_zero_point is {}; they must agree",
                      tessera::ir::dtype_name(out), tessera::ir::dtype_name(zp)));
    }
    out = zp;
  }
  std::optional<tessera::ir::Shape> shape;
  if (const auto* s = input_shape(ctx, 0)) shape = *s;
  set_output(ctx, 0, out == DataType::kUndefined ? DataType::kUint8 : out, std::move(shape));
}

}  // namespace

TESSERA_REGISTER_OPS(quant_quantize_linear) {
  const char* doc =
      "Quantizes a high-precision tensor: divides by the scale, rounds half to even, adds the zero point and "
      "saturates to the quantized type, which the zero point (or 'output_dtype') decides.";
  for (int v : {10, 13, 19, 21, 23, 24, 25}) {
    OpSchema s("QuantizeLinear", v);
    s.category(Category::kConversion).doc(doc);
    // Opset 23 gave the scale its own type parameter, separate from x.
    const char* scale_t = v >= 23 ? "T2" : v >= 19 ? "T1" : "tensor(float)";
    const char* q_t = v >= 23 ? "T3" : "T2";
    s.input("x", "T1").input("y_scale", scale_t).optional_input("y_zero_point", q_t).output("y", q_t);
    if (v >= 13) s.attr("axis", int64_t{1});
    if (v >= 19) s.attr("saturate", int64_t{1});
    if (v >= 21) s.attr("block_size", int64_t{0}).attr("output_dtype", int64_t{0});
    if (v >= 23) s.attr("precision", int64_t{0});
    auto high = v >= 19 ? types::tensors({"float", "float16", "bfloat16", "int32"})
                        : types::tensors({"float", "int32"});
    s.types("T1", high);
    if (v >= 23) s.types("T2", high);
    s.types(q_t, quantized_types(v, /*with_int32=*/false));
    reg.add(s.infer(infer_quantize));
  }
}
