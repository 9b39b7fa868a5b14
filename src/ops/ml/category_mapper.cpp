// CategoryMapper (ai.onnx.ml 1): string <-> int64 through two parallel lists.
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

// The output type is the other one of the pair: strings map to int64, int64 to strings.
void infer_category_mapper(InferenceContext& ctx) {
  auto cats_ints = ctx.attr_ints("cats_int64s");
  auto cats_strings = ctx.attr_strings("cats_strings");
  if (cats_ints.size() != cats_strings.size()) {
    ctx.fail(fmt::format("cats_int64s has {} entries but cats_strings has {}", cats_ints.size(),
                         cats_strings.size()));
  }
  DataType in = input_elem(ctx, 0);
  DataType out = in == DataType::kString  ? DataType::kInt64
                 : in == DataType::kInt64 ? DataType::kString
                                          : DataType::kUndefined;
  const Shape* x = input_shape(ctx, 0);
  if (out == DataType::kUndefined) return;
  set_output(ctx, 0, out, x ? std::optional<Shape>(*x) : std::nullopt);
}

}  // namespace

TESSERA_REGISTER_OPS(ml_category_mapper) {
  reg.add(
      OpSchema("CategoryMapper", 1, "ai.onnx.ml")
          .category(Category::kMachineLearning)
          .doc("Maps strings to integers or integers to strings through the parallel lists cats_strings and "
               "cats_int64s; values not found get the default.")
          .input("X", "T1")
          .output("Y", "T2")
          .types("T1", {"tensor(int64)", "tensor(string)"})
          .types("T2", {"tensor(int64)", "tensor(string)"})
          .attr_optional("cats_int64s", AttrType::kInts)
          .attr_optional("cats_strings", AttrType::kStrings)
          .attr("default_int64", int64_t{-1})
          .attr("default_string", "_Unused")
          .infer(infer_category_mapper));
}
