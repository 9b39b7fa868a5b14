// Imputer (ai.onnx.ml 1): replaces a sentinel value with per-column substitutes.
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

void infer_imputer(InferenceContext& ctx) {
  bool floats = ctx.has_attr("imputed_value_floats"), ints = ctx.has_attr("imputed_value_int64s");
  if (floats == ints) ctx.fail("exactly one of imputed_value_floats and imputed_value_int64s must be set");
  DataType elem = input_elem(ctx, 0);
  bool int_input = elem == DataType::kInt32 || elem == DataType::kInt64;
  if (elem != DataType::kUndefined && int_input != ints) {
    ctx.fail_input(0, fmt::format("input of type {} needs {}", ir::dtype_name(elem),
                                  int_input ? "imputed_value_int64s" : "imputed_value_floats"));
  }
  size_t n =
      floats ? ctx.attr_floats("imputed_value_floats").size() : ctx.attr_ints("imputed_value_int64s").size();
  const Shape* x = input_shape(ctx, 0);
  if (x && !x->empty() && n != 1 && x->back().is_static() && x->back().value != static_cast<int64_t>(n)) {
    ctx.fail(fmt::format("{} imputed values for {} columns (give one value, or one per column)", n,
                         x->back().value));
  }
  propagate_type(ctx, 0, 0);
}

}  // namespace

TESSERA_REGISTER_OPS(ml_imputer) {
  reg.add(
      OpSchema("Imputer", 1, "ai.onnx.ml")
          .category(Category::kMachineLearning)
          .doc("Replaces every occurrence of replaced_value_float (or replaced_value_int64) with an imputed "
               "value, one for all columns or one per column.")
          .input("X", "T")
          .output("Y", "T")
          .types("T", {"tensor(double)", "tensor(float)", "tensor(int32)", "tensor(int64)"})
          .attr_optional("imputed_value_floats", AttrType::kFloats)
          .attr_optional("imputed_value_int64s", AttrType::kInts)
          .attr("replaced_value_float", 0.0f)
          .attr("replaced_value_int64", int64_t{0})
          .infer(infer_imputer));
}
