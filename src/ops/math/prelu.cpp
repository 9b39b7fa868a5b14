// PRelu: x for x >= 0, slope * x below zero, with the slope broadcast onto X (one value per channel, say).
#include "ops/infer_util.h"
#include "ops/math/elementwise.h"
#include "ops/registry.h"

using namespace tessera::ops;
using namespace tessera::ops::math;

namespace {

// The spec before opset 7 asked for a slope of one element or of X's shape; both are special cases of
// the unidirectional broadcasting of later versions, so one check serves every version.
void infer_prelu(InferenceContext& ctx) {
  require_unidirectional(ctx, 1, 0);
  infer_same_as_input0(ctx);
}

OpSchema prelu(int since, std::vector<std::string> allowed) {
  OpSchema s("PRelu", since);
  s.category(Category::kActivation)
      .doc("x for x >= 0, slope * x below zero; the slope tensor broadcasts to X's shape.")
      .input("X", "T")
      .input("slope", "T")
      .output("Y", "T")
      .types("T", std::move(allowed))
      .infer(infer_prelu);
  return s;
}

}  // namespace

TESSERA_REGISTER_OPS(math_prelu) {
  reg.add(with_consumed_inputs(prelu(1, types::kFloat)));
  reg.add(prelu(6, types::kFloat));
  reg.add(prelu(7, types::kFloat));
  reg.add(prelu(9, kHighPrecision));
  reg.add(prelu(16, kHighPrecisionBf16));
}
