// LinearClassifier and LinearRegressor (ai.onnx.ml 1): generalised linear models over feature rows.
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

void check_post_transform(const InferenceContext& ctx) {
  std::string p = ctx.attr_string("post_transform", "NONE");
  for (const char* ok : {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"}) {
    if (p == ok) return;
  }
  ctx.fail(fmt::format("post_transform '{}' is not one of NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT", p));
}

// Y: one label per row; Z: one score per class (coefficients hold classes x features).
void infer_linear_classifier(InferenceContext& ctx) {
  ml::require_rows(ctx, 0);
  check_post_transform(ctx);
  DataType label = ml::label_type(ctx, "classlabels_ints", "classlabels_strings");
  Dim n = ml::batch_dim(ctx, 0);
  size_t coefs = ctx.attr_floats("coefficients").size();
  size_t intercepts = ctx.attr_floats("intercepts").size();
  Dim classes = intercepts > 0 ? Dim::of(static_cast<int64_t>(intercepts)) : Dim::unknown();
  const Shape* x = input_shape(ctx, 0);
  if (x && !x->empty() && x->back().is_static() && x->back().value > 0) {
    int64_t features = x->back().value;
    if (coefs % features != 0) {
      ctx.fail(fmt::format("{} coefficients do not split into rows of {} features", coefs, features));
    }
    classes = Dim::of(static_cast<int64_t>(coefs) / features);
  }
  // A binary model with one coefficient row may still report a score per label (two columns).
  if (classes.is_static() && classes.value == 1) classes = Dim::unknown();
  set_output(ctx, 0, label, Shape{n});
  set_output(ctx, 1, DataType::kFloat, Shape{n, classes});
}

// Y: (N, targets).
void infer_linear_regressor(InferenceContext& ctx) {
  ml::require_rows(ctx, 0);
  check_post_transform(ctx);
  int64_t targets = ctx.attr_int("targets", 1);
  if (targets <= 0) ctx.fail(fmt::format("targets must be positive, got {}", targets));
  size_t intercepts = ctx.attr_floats("intercepts").size();
  if (intercepts != 0 && static_cast<int64_t>(intercepts) != targets) {
    ctx.fail(fmt::format("{} intercepts for {} targets", intercepts, targets));
  }
  set_output(ctx, 0, DataType::kFloat, Shape{ml::batch_dim(ctx, 0), Dim::of(targets)});
}

}  // namespace

TESSERA_REGISTER_OPS(ml_linear_models) {
  reg.add(OpSchema("LinearClassifier", 1, "ai.onnx.ml")
              .category(Category::kMachineLearning)
              .doc("Scores each row against every class with a linear function, then outputs the best label "
                   "and the "
                   "(optionally post-transformed) scores.")
              .input("X", "T1")
              .output("Y", "T2")
              .output("Z", "tensor(float)")
              .types("T1", {"tensor(double)", "tensor(float)", "tensor(int32)", "tensor(int64)"})
              .types("T2", {"tensor(int64)", "tensor(string)"})
              .attr_optional("classlabels_ints", AttrType::kInts)
              .attr_optional("classlabels_strings", AttrType::kStrings)
              .attr("coefficients", AttrType::kFloats)
              .attr_optional("intercepts", AttrType::kFloats)
              .attr("multi_class", int64_t{0})
              .attr("post_transform", "NONE")
              .infer(infer_linear_classifier));
  reg.add(
      OpSchema("LinearRegressor", 1, "ai.onnx.ml")
          .category(Category::kMachineLearning)
          .doc("Computes coefficients . x + intercept for each row and target, optionally post-transformed.")
          .input("X", "T")
          .output("Y", "tensor(float)")
          .types("T", {"tensor(double)", "tensor(float)", "tensor(int32)", "tensor(int64)"})
          .attr_optional("coefficients", AttrType::kFloats)
          .attr_optional("intercepts", AttrType::kFloats)
          .attr("post_transform", "NONE")
          .attr("targets", int64_t{1})
          .infer(infer_linear_regressor));
}
