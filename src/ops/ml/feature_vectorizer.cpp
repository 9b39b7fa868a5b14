// FeatureVectorizer (ai.onnx.ml 1): concatenates feature inputs column-wise into one float matrix.
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

// Y is (N, sum of inputdimensions); each input contributes its declared column count.
void infer_feature_vectorizer(InferenceContext& ctx) {
  auto dims = ctx.attr_ints("inputdimensions");
  if (!dims.empty() && dims.size() != ctx.num_inputs()) {
    ctx.fail(fmt::format("inputdimensions has {} entries for {} inputs", dims.size(), ctx.num_inputs()));
  }
  int64_t total = 0;
  for (int64_t d : dims) {
    if (d < 0) ctx.fail(fmt::format("inputdimensions holds a negative size {}", d));
    total += d;
  }
  Dim n = Dim::unknown();
  if (const Shape* x = input_shape(ctx, 0))
    n = x->empty() ? Dim::of(1) : x->size() == 1 ? Dim::of(1) : (*x)[0];
  set_output(ctx, 0, DataType::kFloat, Shape{n, dims.empty() ? Dim::unknown() : Dim::of(total)});
}

}  // namespace

TESSERA_REGISTER_OPS(ml_feature_vectorizer) {
  reg.add(
      OpSchema("FeatureVectorizer", 1, "ai.onnx.ml")
          .category(Category::kMachineLearning)
          .doc(
              "Concatenates its inputs along the feature axis into a float tensor, taking inputdimensions[i] "
              "columns from input i.")
          .variadic_input("X", "T1", 1, true)
          .output("Y", "tensor(float)")
          .types("T1", {"tensor(double)", "tensor(float)", "tensor(int32)", "tensor(int64)"})
          .attr_optional("inputdimensions", AttrType::kInts)
          .infer(infer_feature_vectorizer));
}
