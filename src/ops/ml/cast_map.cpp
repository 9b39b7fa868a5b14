// CastMap (ai.onnx.ml 1): turns an int64-keyed map into a tensor of its values.
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

// One row: (1, map size) densely, (1, max_map) in SPARSE form where absent keys are filled.
void infer_cast_map(InferenceContext& ctx) {
  std::string to = ctx.attr_string("cast_to", "TO_FLOAT");
  auto elem = ml::cast_to_type(to);
  if (!elem) ctx.fail(fmt::format("cast_to '{}' is not one of TO_FLOAT, TO_STRING, TO_INT64", to));
  std::string form = ctx.attr_string("map_form", "DENSE");
  if (form != "DENSE" && form != "SPARSE")
    ctx.fail(fmt::format("map_form '{}' is not DENSE or SPARSE", form));
  int64_t max_map = ctx.attr_int("max_map", 1);
  if (form == "SPARSE" && max_map <= 0) ctx.fail(fmt::format("max_map must be positive, got {}", max_map));
  set_output(ctx, 0, *elem, Shape{Dim::of(1), form == "SPARSE" ? Dim::of(max_map) : Dim::unknown()});
}

}  // namespace

TESSERA_REGISTER_OPS(ml_cast_map) {
  reg.add(
      OpSchema("CastMap", 1, "ai.onnx.ml")
          .category(Category::kMachineLearning)
          .doc("Converts a map from int64 keys to a tensor of its values in key order, cast to float, string "
               "or int64.")
          .input("X", "T1")
          .output("Y", "T2")
          .types("T1", {"map(int64,tensor(float))", "map(int64,tensor(string))"})
          .types("T2", {"tensor(float)", "tensor(int64)", "tensor(string)"})
          .attr("cast_to", "TO_FLOAT")
          .attr("map_form", "DENSE")
          .attr("max_map", int64_t{1})
          .infer(infer_cast_map));
}
