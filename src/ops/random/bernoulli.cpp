// Bernoulli: draws 0 or 1 per element with the input's probabilities.
#include "ops/dtype_attr.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::AttrType;
using tessera::ir::DataType;

namespace {

// Same shape as the probabilities; the type is `dtype`, else the input's.
void infer_bernoulli(InferenceContext& ctx) {
  std::optional<tessera::ir::Shape> shape;
  if (const auto* s = input_shape(ctx, 0)) shape = *s;
  std::optional<DataType> elem = dtype_attr(ctx, "dtype", "T2");
  if (!elem) elem = input_elem(ctx, 0);
  if (*elem == DataType::kUndefined) return;
  set_output(ctx, 0, *elem, std::move(shape));
}

}  // namespace

TESSERA_REGISTER_OPS(random_bernoulli) {
  const char* doc =
      "Draws a binary value (0 or 1) for each element, being 1 with the probability that the input element "
      "gives.";
  for (int v : {15, 22}) {
    reg.add(OpSchema("Bernoulli", v)
                .category(Category::kTensorCreation)
                .doc(doc)
                .input("input", "T1")
                .output("output", "T2")
                .attr_optional("dtype", AttrType::kInt)
                .attr_optional("seed", AttrType::kFloat)
                .types("T1", v >= 22 ? types::kFloatBf16 : types::kFloat)
                .types("T2", types::concat({types::kFloatBf16, types::kSignedInt, types::kUnsignedInt,
                                            types::tensors({"bool"})}))
                .infer(infer_bernoulli));
  }
}
