// GELU activations of ONNX Runtime's contrib domain (com.microsoft 1): Gelu, FastGelu (tanh
// approximation, optional bias), BiasGelu (bias then GELU) and QuickGelu (x * sigmoid(alpha * x)).
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;

namespace {

// A bias is added along the last axis, so it must be 1-D with the input's last dimension.
void infer_with_bias(InferenceContext& ctx) {
  propagate_type(ctx, 0, 0);
  const ir::Shape* x = input_shape(ctx, 0);
  const ir::Shape* b = ctx.has_input(1) ? input_shape(ctx, 1) : nullptr;
  if (!b) return;
  require_rank(ctx, 1, 1, "bias");
  if (x && !x->empty())
    unify_dims(ctx, x->back(), b->front(), "bias length must equal the input's last dimension");
}

const std::vector<std::string> kTypes = types::tensors({"float", "float16", "double", "bfloat16"});

}  // namespace

TESSERA_REGISTER_OPS(contrib_gelu) {
  reg.add(OpSchema("Gelu", 1, "com.microsoft")
              .category(Category::kActivation)
              .doc("Gaussian error linear unit, x * 0.5 * (1 + erf(x / sqrt(2))), elementwise.")
              .input("X", "T")
              .output("Y", "T")
              .types("T", kTypes)
              .infer(infer_same_as_input0));
  reg.add(OpSchema("FastGelu", 1, "com.microsoft")
              .category(Category::kActivation)
              .doc("GELU by its tanh approximation, applied to X plus an optional bias along the last axis.")
              .input("X", "T")
              .optional_input("bias", "T")
              .output("Y", "T")
              .types("T", types::tensors({"float", "float16", "bfloat16"}))
              .infer(infer_with_bias));
  reg.add(OpSchema("BiasGelu", 1, "com.microsoft")
              .category(Category::kActivation)
              .doc("GELU of A plus the bias B, which runs along the last axis.")
              .input("A", "T")
              .input("B", "T")
              .output("C", "T")
              .types("T", kTypes)
              .infer(infer_with_bias));
  reg.add(OpSchema("QuickGelu", 1, "com.microsoft")
              .category(Category::kActivation)
              .doc("Sigmoid approximation of GELU, x * sigmoid(alpha * x), elementwise.")
              .input("X", "T")
              .output("Y", "T")
              .types("T", kTypes)
              .attr("alpha", 1.702f)
              .infer(infer_same_as_input0));
}
