// NegativeLogLikelihoodLoss: picks -input[n, target[n, d...], d...] (optionally weighted) and reduces it.
#include "ops/loss/loss_util.h"
#include "ops/registry.h"

using namespace tessera::ops;

TESSERA_REGISTER_OPS(loss_negative_log_likelihood_loss) {
  const char* doc =
      "Negative log likelihood of the target classes given log-probabilities [N, C, d1...]; entries equal to "
      "ignore_index do not count. Reduced by 'none', 'sum' or a weighted 'mean'.";
  for (int version : {12, 13, 22}) {
    reg.add(OpSchema("NegativeLogLikelihoodLoss", version)
                .category(Category::kTraining)
                .doc(doc)
                .input("input", "T")
                .input("target", "Tind")
                .optional_input("weight", "T")
                .output("loss", "T")
                .types("T", version >= 22 ? types::kFloatBf16 : types::kFloat)
                .types("Tind", types::tensors({"int32", "int64"}))
                .attr_optional("ignore_index", tessera::ir::AttrType::kInt)
                .attr("reduction", "mean")
                .infer([](InferenceContext& ctx) { infer_class_loss(ctx, "input", "target"); }));
  }
}
