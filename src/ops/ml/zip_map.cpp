// ZipMap (ai.onnx.ml 1): pairs each row of scores with the class labels, one map per row.
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

void infer_zip_map(InferenceContext& ctx) {
  bool ints = ctx.has_attr("classlabels_int64s"), strings = ctx.has_attr("classlabels_strings");
  if (ints == strings) ctx.fail("exactly one of classlabels_int64s and classlabels_strings must be set");
  size_t labels =
      strings ? ctx.attr_strings("classlabels_strings").size() : ctx.attr_ints("classlabels_int64s").size();
  const Shape* x = input_shape(ctx, 0);
  if (x && !x->empty() && x->back().is_static() && x->back().value != static_cast<int64_t>(labels)) {
    ctx.fail_input(0, fmt::format("input {} has {} columns but there are {} class labels",
                                  ir::shape_to_string(*x), x->back().value, labels));
  }
  if (!ctx.has_output(0)) return;
  ir::Type map =
      ir::Type::map(strings ? DataType::kString : DataType::kInt64, ir::Type::tensor(DataType::kFloat));
  ctx.set_output_type(0, ir::Type::sequence(map));
}

}  // namespace

TESSERA_REGISTER_OPS(ml_zip_map) {
  reg.add(OpSchema("ZipMap", 1, "ai.onnx.ml")
              .category(Category::kMachineLearning)
              .doc("Turns each row of class scores into a map from class label to score, giving a sequence "
                   "of maps.")
              .input("X", "tensor(float)")
              .output("Z", "T")
              .types("T", {"seq(map(int64,tensor(float)))", "seq(map(string,tensor(float)))"})
              .attr_optional("classlabels_int64s", AttrType::kInts)
              .attr_optional("classlabels_strings", AttrType::kStrings)
              .infer(infer_zip_map));
}
