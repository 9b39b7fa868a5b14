// SoftmaxCrossEntropyLoss: log-softmax over the class axis followed by negative log likelihood.
#include "ops/infer_util.h"
#include "ops/loss/loss_util.h"
#include "ops/registry.h"

using namespace tessera::ops;

TESSERA_REGISTER_OPS(loss_softmax_cross_entropy_loss) {
  const char* doc =
      "Cross entropy between softmax(scores) over the class axis and the integer labels; entries equal to "
      "ignore_index do not count. Optionally also returns the log-probabilities.";
  for (int version : {12, 13}) {
    reg.add(OpSchema("SoftmaxCrossEntropyLoss", version)
                .category(Category::kTraining)
                .doc(doc)
                .input("scores", "T")
                .input("labels", "Tind")
                .optional_input("weights", "T")
                .output("output", "T")
                .optional_output("log_prob", "T")
                .types("T", version >= 13 ? types::kFloatBf16 : types::kFloat)
                .types("Tind", types::tensors({"int32", "int64"}))
                .attr_optional("ignore_index", tessera::ir::AttrType::kInt)
                .attr("reduction", "mean")
                .infer([](InferenceContext& ctx) {
                  infer_class_loss(ctx, "scores", "labels");
                  // log_prob has the scores' shape: the softmax keeps every element.
                  propagate_type(ctx, 0, 1);
                }));
  }
}
