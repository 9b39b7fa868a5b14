// Clip: limits each element to [min, max]. Up to opset 6 the bounds are attributes; from opset 11 they
// are optional scalar inputs of the data's type, so that they can be computed in the graph.
#include <fmt/format.h>

#include <cfloat>

#include "ops/infer_util.h"
#include "ops/math/elementwise.h"
#include "ops/registry.h"

using namespace tessera::ops;
using namespace tessera::ops::math;
namespace ir = tessera::ir;

namespace {

const char* kDoc = "Limits each element to the range [min, max]; a bound left out does not limit.";

// The bounds must hold one value. A rank-1 single-element bound is tolerated with a warning because
// exporters have written such models and runtimes accept them.
void check_bound(InferenceContext& ctx, size_t i, const char* what) {
  const ir::Shape* s = input_shape(ctx, i);
  if (!s || s->empty()) return;
  auto n = ir::shape_numel(*s);
  if (n && *n != 1) {
    ctx.fail_input(i,
                   fmt::format("input '{}' must be a scalar, got shape {}", what, ir::shape_to_string(*s)));
  }
  if (n)
    ctx.warn(fmt::format("input '{}' should be a scalar (shape []), got {}", what, ir::shape_to_string(*s)),
             i);
}

void infer_clip(InferenceContext& ctx) {
  check_bound(ctx, 1, "min");
  check_bound(ctx, 2, "max");
  infer_same_as_input0(ctx);
}

OpSchema clip_with_inputs(int since, std::vector<std::string> allowed) {
  OpSchema s("Clip", since);
  s.category(Category::kActivation)
      .doc(kDoc)
      .input("input", "T")
      .optional_input("min", "T")
      .optional_input("max", "T")
      .output("output", "T")
      .types("T", std::move(allowed))
      .infer(infer_clip);
  return s;
}

}  // namespace

TESSERA_REGISTER_OPS(math_clip) {
  reg.add(with_consumed_inputs(
              unary_schema("Clip", 1, Category::kActivation, kDoc, types::kFloat, "input", "output"))
              .attr_optional("min", tessera::ir::AttrType::kFloat)
              .attr_optional("max", tessera::ir::AttrType::kFloat));
  reg.add(unary_schema("Clip", 6, Category::kActivation, kDoc, types::kFloat, "input", "output")
              .attr("min", -FLT_MAX)
              .attr("max", FLT_MAX));
  reg.add(clip_with_inputs(11, types::kFloat));
  reg.add(clip_with_inputs(12, types::kNumeric));
  reg.add(clip_with_inputs(13, types::kNumericBf16));
}
