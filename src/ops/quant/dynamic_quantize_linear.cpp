// DynamicQuantizeLinear: computes a uint8 scale and zero point from the data's range, then quantizes.
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::DataType;

namespace {

// y keeps x's shape; the scale and the zero point are scalars (per-tensor).
void infer_dynamic_quantize(InferenceContext& ctx) {
  std::optional<tessera::ir::Shape> shape;
  if (const auto* s = input_shape(ctx, 0)) shape = *s;
  set_output(ctx, 0, DataType::kUint8, std::move(shape));
  set_output(ctx, 1, DataType::kFloat, tessera::ir::Shape{});
  set_output(ctx, 2, DataType::kUint8, tessera::ir::Shape{});
}

}  // namespace

TESSERA_REGISTER_OPS(quant_dynamic_quantize_linear) {
  reg.add(OpSchema("DynamicQuantizeLinear", 11)
              .category(Category::kConversion)
              .doc("Quantizes a float tensor to uint8 with a scale and zero point computed from its own "
                   "minimum and "
                   "maximum (the range widened to include 0), and returns all three.")
              .input("x", "T1")
              .output("y", "T2")
              .output("y_scale", "tensor(float)")
              .output("y_zero_point", "T2")
              .types("T1", types::tensors({"float"}))
              .types("T2", types::tensors({"uint8"}))
              .infer(infer_dynamic_quantize));
}
