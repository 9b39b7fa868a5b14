// Where: picks X where the condition holds and Y elsewhere; all three inputs broadcast together.
#include "ops/infer_util.h"
#include "ops/math/elementwise.h"
#include "ops/registry.h"

using namespace tessera::ops;
using namespace tessera::ops::math;

namespace {

void infer_where(InferenceContext& ctx) {
  set_output(ctx, 0, first_known_elem(ctx, {1, 2}), broadcast_inputs(ctx, {0, 1, 2}));
}

OpSchema where(int since, std::vector<std::string> allowed) {
  OpSchema s("Where", since);
  s.category(Category::kLogical)
      .doc("Takes X where condition is true and Y where it is false, broadcasting all three inputs.")
      .input("condition", "B")
      .input("X", "T")
      .input("Y", "T")
      .output("output", "T")
      .types("B", kBool)
      .types("T", std::move(allowed))
      .infer(infer_where);
  return s;
}

}  // namespace

TESSERA_REGISTER_OPS(math_where) {
  reg.add(where(9, types::kAllTensor));
  reg.add(where(16, types::kAllTensorIr4));
}
