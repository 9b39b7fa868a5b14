// Identity: passes its input through unchanged (tensors; from opset 14 sequences, from 16 optionals).
#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ops::tensor::all_types;

namespace {

void infer_identity(InferenceContext& ctx) {
  propagate_type(ctx, 0, 0);
  // Identity often sits inside Shape -> Gather -> Concat chains; keep the value flowing.
  if (const auto* v = ctx.input_shape_value(0)) tensor::set_value(ctx, 0, *v);
}

// Tensors of the opset's generation; sequences (14+) and optionals (16+) of the opset-13 tensor types
// without bfloat16, as the spec lists them.
std::vector<std::string> identity_types(int v) {
  std::vector<std::string> all = all_types(v);
  if (v < 14) return all;
  for (const auto& t : types::kAllTensor) all.push_back("seq(" + t + ")");
  if (v < 16) return all;
  for (const auto& t : types::kAllTensor) all.push_back("optional(seq(" + t + "))");
  for (const auto& t : types::kAllTensor) all.push_back("optional(" + t + ")");
  return all;
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_identity) {
  for (int v : {1, 13, 14, 16, 19, 21, 23, 24, 25}) {
    const char* param = v < 14 ? "T" : "V";
    reg.add(OpSchema("Identity", v)
                .category(Category::kTensorShape)
                .doc("Returns its input unchanged: gives a value a second name or marks a graph output.")
                .input("input", param)
                .output("output", param)
                .types(param, identity_types(v))
                .infer(infer_identity));
  }
}
