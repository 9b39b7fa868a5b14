// CumSum and CumProd: running sum or product along one axis, optionally exclusive and/or reversed.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::Shape;

namespace {

void infer_cumulative(InferenceContext& ctx) {
  propagate_type(ctx, 0, 0);
  // axis is a scalar (or a one-element 1-D tensor, which some exporters write).
  if (const Shape* as = input_shape(ctx, 1)) {
    bool ok = as->empty() || (as->size() == 1 && (!(*as)[0].is_static() || (*as)[0].value == 1));
    if (!ok) ctx.fail_input(1, "input 1 ('axis') must be a scalar, got " + ir::shape_to_string(*as));
  }
  const Shape* xs = input_shape(ctx, 0);
  auto axis = constant_ints(ctx, 1);
  if (xs && axis && axis->size() == 1)
    normalize_axis(ctx, (*axis)[0], static_cast<int64_t>(xs->size()), "axis (input 1)");
}

OpSchema cumulative(const char* name, int v, std::vector<std::string> t, const char* doc) {
  OpSchema s(name, v);
  s.category(Category::kReduction)
      .doc(doc)
      .input("x", "T")
      .input("axis", "T2")
      .output("y", "T")
      .types("T", std::move(t))
      .types("T2", types::tensors({"int32", "int64"}))
      .attr("exclusive", int64_t{0})
      .attr("reverse", int64_t{0})
      .infer(infer_cumulative);
  return s;
}

}  // namespace

TESSERA_REGISTER_OPS(nn_cum_sum) {
  const auto t11 = types::tensors({"uint32", "uint64", "int32", "int64", "float", "double"});
  const auto t14 = types::concat({t11, types::tensors({"float16", "bfloat16"})});
  const char* sum_doc =
      "Running sum of x along `axis`; exclusive leaves out the current element, reverse runs from "
      "the end.";
  reg.add(cumulative("CumSum", 11, t11, sum_doc));
  reg.add(cumulative("CumSum", 14, t14, sum_doc));
  reg.add(cumulative(
      "CumProd", 26, t14,
      "Running product of x along `axis`; exclusive leaves out the current element, reverse runs from "
      "the end."));
}
