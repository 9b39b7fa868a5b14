// IsInf and IsNaN: a bool tensor of the input's shape marking infinite or NaN elements.
#include "ops/infer_util.h"
#include "ops/math/elementwise.h"
#include "ops/registry.h"

using namespace tessera::ops;
using namespace tessera::ops::math;

namespace {

void infer_mask(InferenceContext& ctx) {
  const tessera::ir::Shape* s = input_shape(ctx, 0);
  set_output(ctx, 0, tessera::ir::DataType::kBool, s ? std::optional(*s) : std::nullopt);
}

OpSchema mask(const char* name, int since, const char* doc, std::vector<std::string> allowed) {
  OpSchema s(name, since);
  s.category(Category::kArithmetic)
      .doc(doc)
      .input("X", "T1")
      .output("Y", "T2")
      .types("T1", std::move(allowed))
      .types("T2", kBool)
      .infer(infer_mask);
  return s;
}

}  // namespace

TESSERA_REGISTER_OPS(math_is_inf_nan) {
  auto float8 = types::tensors({"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"});
  const char* inf =
      "True where an element is infinite; detect_negative/detect_positive choose which signs count.";
  reg.add(mask("IsInf", 10, inf, types::tensors({"float", "double"}))
              .attr("detect_negative", int64_t{1})
              .attr("detect_positive", int64_t{1}));
  reg.add(mask("IsInf", 20, inf, types::concat({types::kFloatBf16, float8}))
              .attr("detect_negative", int64_t{1})
              .attr("detect_positive", int64_t{1}));
  const char* nan = "True where an element is NaN.";
  reg.add(mask("IsNaN", 9, nan, types::kFloat));
  reg.add(mask("IsNaN", 13, nan, types::kFloatBf16));
  reg.add(mask("IsNaN", 20, nan, types::concat({types::kFloatBf16, float8})));
}
