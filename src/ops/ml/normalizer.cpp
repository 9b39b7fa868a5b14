// Normalizer (ai.onnx.ml 1): scales each row to unit max, L1 or L2 norm.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/ml/ml_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::AttrType;
using ir::DataType;
using ir::Dim;
using ir::Shape;

namespace {

void infer_normalizer(InferenceContext& ctx) {
  std::string norm = ctx.attr_string("norm", "MAX");
  if (norm != "MAX" && norm != "L1" && norm != "L2")
    ctx.fail(fmt::format("norm '{}' is not MAX, L1 or L2", norm));
  ml::require_rows(ctx, 0);
  const Shape* x = input_shape(ctx, 0);
  set_output(ctx, 0, DataType::kFloat, x ? std::optional<Shape>(*x) : std::nullopt);
}

}  // namespace

TESSERA_REGISTER_OPS(ml_normalizer) {
  reg.add(
      OpSchema("Normalizer", 1, "ai.onnx.ml")
          .category(Category::kMachineLearning)
          .doc("Divides each row by its maximum, L1 norm or L2 norm, giving float output of the same shape.")
          .input("X", "T")
          .output("Y", "tensor(float)")
          .types("T", {"tensor(double)", "tensor(float)", "tensor(int32)", "tensor(int64)"})
          .attr("norm", "MAX")
          .infer(infer_normalizer));
}
