// ArgMax and ArgMin: index of the extreme element along one axis, as int64.
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::DataType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

void infer_arg(InferenceContext& ctx) {
  const Shape* in = input_shape(ctx, 0);
  if (!in) return set_output(ctx, 0, DataType::kInt64, std::nullopt);
  auto rank = static_cast<int64_t>(in->size());
  int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), rank);
  bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  Shape out;
  for (int64_t k = 0; k < rank; ++k) {
    if (k != axis) {
      out.push_back((*in)[k]);
    } else if (keepdims) {
      out.push_back(Dim::of(1));
    }
  }
  set_output(ctx, 0, DataType::kInt64, out);
}

void add_arg(OpRegistry& reg, const char* name, const char* doc) {
  for (int version : {1, 11, 12, 13}) {
    OpSchema s(name, version);
    s.category(Category::kReduction)
        .doc(doc)
        .input("data", "T")
        .output("reduced", "tensor(int64)")
        .types("T", version >= 13 ? types::kNumericBf16 : types::kNumeric)
        .attr("axis", int64_t{0})
        .attr("keepdims", int64_t{1});
    // Opset 12 lets ties resolve to the last occurrence instead of the first.
    if (version >= 12) s.attr("select_last_index", int64_t{0});
    reg.add(std::move(s.infer(infer_arg)));
  }
}

}  // namespace

TESSERA_REGISTER_OPS(reduce_arg_max) {
  add_arg(reg, "ArgMax",
          "Index of the largest element along 'axis' (int64). Ties give the first index, or the last with "
          "select_last_index.");
  add_arg(reg, "ArgMin",
          "Index of the smallest element along 'axis' (int64). Ties give the first index, or the last with "
          "select_last_index.");
}
