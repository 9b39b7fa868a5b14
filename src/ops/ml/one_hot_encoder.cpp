// OneHotEncoder (ai.onnx.ml 1): one float column per category.
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

// Y appends an axis of one entry per category to X's shape.
void infer_one_hot_encoder(InferenceContext& ctx) {
  bool ints = ctx.has_attr("cats_int64s"), strings = ctx.has_attr("cats_strings");
  if (ints == strings) ctx.fail("exactly one of cats_int64s and cats_strings must be set");
  DataType elem = input_elem(ctx, 0);
  if (elem != DataType::kUndefined && (elem == DataType::kString) != strings) {
    ctx.fail_input(0, fmt::format("input of type {} needs {}", ir::dtype_name(elem),
                                  elem == DataType::kString ? "cats_strings" : "cats_int64s"));
  }
  size_t cats = strings ? ctx.attr_strings("cats_strings").size() : ctx.attr_ints("cats_int64s").size();
  const Shape* x = input_shape(ctx, 0);
  if (!x) {
    set_output(ctx, 0, DataType::kFloat, std::nullopt);
    return;
  }
  Shape y = *x;
  y.push_back(Dim::of(static_cast<int64_t>(cats)));
  set_output(ctx, 0, DataType::kFloat, std::move(y));
}

}  // namespace

TESSERA_REGISTER_OPS(ml_one_hot_encoder) {
  reg.add(
      OpSchema("OneHotEncoder", 1, "ai.onnx.ml")
          .category(Category::kMachineLearning)
          .doc("Replaces each value with a one-hot float vector over the category list (cats_int64s or "
               "cats_strings), adding a trailing axis.")
          .input("X", "T")
          .output("Y", "tensor(float)")
          .types("T", {"tensor(double)", "tensor(float)", "tensor(int32)", "tensor(int64)", "tensor(string)"})
          .attr_optional("cats_int64s", AttrType::kInts)
          .attr_optional("cats_strings", AttrType::kStrings)
          .attr("zeros", int64_t{1})
          .infer(infer_one_hot_encoder));
}
