// Scaler (ai.onnx.ml 1): (x - offset) * scale, per column or for all.
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

void check_per_column(const InferenceContext& ctx, const char* attr, size_t n, const Shape* x) {
  if (n <= 1 || !x || x->empty() || !x->back().is_static()) return;
  if (static_cast<int64_t>(n) != x->back().value) {
    ctx.fail(fmt::format("'{}' has {} values for {} columns (give one value, or one per column)", attr, n,
                         x->back().value));
  }
}

void infer_scaler(InferenceContext& ctx) {
  const Shape* x = input_shape(ctx, 0);
  check_per_column(ctx, "offset", ctx.attr_floats("offset").size(), x);
  check_per_column(ctx, "scale", ctx.attr_floats("scale").size(), x);
  set_output(ctx, 0, DataType::kFloat, x ? std::optional<Shape>(*x) : std::nullopt);
}

}  // namespace

TESSERA_REGISTER_OPS(ml_scaler) {
  reg.add(OpSchema("Scaler", 1, "ai.onnx.ml")
              .category(Category::kMachineLearning)
              .doc("Standardises features: subtracts offset and multiplies by scale, each given once or per "
                   "column.")
              .input("X", "T")
              .output("Y", "tensor(float)")
              .types("T", {"tensor(double)", "tensor(float)", "tensor(int32)", "tensor(int64)"})
              .attr_optional("offset", AttrType::kFloats)
              .attr_optional("scale", AttrType::kFloats)
              .infer(infer_scaler));
}
