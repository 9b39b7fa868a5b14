// SVMClassifier and SVMRegressor (ai.onnx.ml 1): support vector machines, linear or kernel.
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

void check_kernel(const InferenceContext& ctx) {
  std::string k = ctx.attr_string("kernel_type", "LINEAR");
  if (k != "LINEAR" && k != "POLY" && k != "RBF" && k != "SIGMOID") {
    ctx.fail(fmt::format("kernel_type '{}' is not one of LINEAR, POLY, RBF, SIGMOID", k));
  }
}

// Y: one label per row; Z: a score per class (per class pair for some configurations, so left open
// unless the labels say otherwise).
void infer_svm_classifier(InferenceContext& ctx) {
  ml::require_rows(ctx, 0);
  check_kernel(ctx);
  DataType label = ml::label_type(ctx, "classlabels_ints", "classlabels_strings");
  Dim n = ml::batch_dim(ctx, 0);
  set_output(ctx, 0, label, Shape{n});
  set_output(ctx, 1, DataType::kFloat, Shape{n, Dim::unknown()});
}

// Y: (N, 1), one regression value per row.
void infer_svm_regressor(InferenceContext& ctx) {
  ml::require_rows(ctx, 0);
  check_kernel(ctx);
  set_output(ctx, 0, DataType::kFloat, Shape{ml::batch_dim(ctx, 0), Dim::of(1)});
}

}  // namespace

TESSERA_REGISTER_OPS(ml_svm) {
  reg.add(OpSchema("SVMClassifier", 1, "ai.onnx.ml")
              .category(Category::kMachineLearning)
              .doc("Support vector machine classification: kernel scores against the support vectors of each "
                   "class, the winning label and per-class scores.")
              .input("X", "T1")
              .output("Y", "T2")
              .output("Z", "tensor(float)")
              .types("T1", {"tensor(double)", "tensor(float)", "tensor(int32)", "tensor(int64)"})
              .types("T2", {"tensor(int64)", "tensor(string)"})
              .attr_optional("classlabels_ints", AttrType::kInts)
              .attr_optional("classlabels_strings", AttrType::kStrings)
              .attr_optional("coefficients", AttrType::kFloats)
              .attr_optional("kernel_params", AttrType::kFloats)
              .attr("kernel_type", "LINEAR")
              .attr("post_transform", "NONE")
              .attr_optional("prob_a", AttrType::kFloats)
              .attr_optional("prob_b", AttrType::kFloats)
              .attr_optional("rho", AttrType::kFloats)
              .attr_optional("support_vectors", AttrType::kFloats)
              .attr_optional("vectors_per_class", AttrType::kInts)
              .infer(infer_svm_classifier));
  reg.add(
      OpSchema("SVMRegressor", 1, "ai.onnx.ml")
          .category(Category::kMachineLearning)
          .doc("Support vector machine regression (or one-class scoring) with a linear, polynomial, RBF or "
               "sigmoid kernel.")
          .input("X", "T")
          .output("Y", "tensor(float)")
          .types("T", {"tensor(double)", "tensor(float)", "tensor(int32)", "tensor(int64)"})
          .attr_optional("coefficients", AttrType::kFloats)
          .attr_optional("kernel_params", AttrType::kFloats)
          .attr("kernel_type", "LINEAR")
          .attr("n_supports", int64_t{0})
          .attr("one_class", int64_t{0})
          .attr("post_transform", "NONE")
          .attr_optional("rho", AttrType::kFloats)
          .attr_optional("support_vectors", AttrType::kFloats)
          .infer(infer_svm_regressor));
}
