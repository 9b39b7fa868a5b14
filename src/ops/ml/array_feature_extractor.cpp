// ArrayFeatureExtractor (ai.onnx.ml 1): picks columns of the last axis by index.
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

// Z keeps X's leading axes; its last axis holds one entry per index. A 1-D X is left to the runtime,
// which reads it as one row.
void infer_array_feature_extractor(InferenceContext& ctx) {
  DataType elem = input_elem(ctx, 0);
  const Shape* x = input_shape(ctx, 0);
  const Shape* y = input_shape(ctx, 1);
  if (!x || x->size() < 2) {
    set_output(ctx, 0, elem, std::nullopt);
    return;
  }
  Shape z(x->begin(), x->end() - 1);
  std::optional<int64_t> count = y ? ir::shape_numel(*y) : std::nullopt;
  z.push_back(count ? Dim::of(*count) : Dim::unknown());
  set_output(ctx, 0, elem, std::move(z));
}

}  // namespace

TESSERA_REGISTER_OPS(ml_array_feature_extractor) {
  reg.add(
      OpSchema("ArrayFeatureExtractor", 1, "ai.onnx.ml")
          .category(Category::kMachineLearning)
          .doc("Selects entries of the last axis of X at the given indices, like a column gather.")
          .input("X", "T")
          .input("Y", "tensor(int64)")
          .output("Z", "T")
          .types("T", {"tensor(double)", "tensor(float)", "tensor(int32)", "tensor(int64)", "tensor(string)"})
          .infer(infer_array_feature_extractor));
}
