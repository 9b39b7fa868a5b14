// StringSplit: splits each string at a delimiter, padding the pieces to a common count.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::AttrType;
using tessera::ir::DataType;
using tessera::ir::Dim;

namespace {

// Y is X's shape plus one axis for the pieces (as many as the longest split: data dependent); Z, the
// number of pieces of each string, has X's shape.
void infer_string_split(InferenceContext& ctx) {
  if (ctx.has_attr("maxsplit") && ctx.attr_int("maxsplit") < 0) {
    ctx.fail(fmt::format("attribute 'maxsplit' must not be negative, got {}", ctx.attr_int("maxsplit")));
  }
  const auto* x = input_shape(ctx, 0);
  if (!x) {
    set_output(ctx, 0, DataType::kString, std::nullopt);
    set_output(ctx, 1, DataType::kInt64, std::nullopt);
    return;
  }
  tessera::ir::Shape y = *x;
  y.push_back(Dim::unknown());
  set_output(ctx, 0, DataType::kString, std::move(y));
  set_output(ctx, 1, DataType::kInt64, *x);
}

}  // namespace

TESSERA_REGISTER_OPS(string_string_split) {
  reg.add(OpSchema("StringSplit", 20)
              .category(Category::kString)
              .doc("Splits every string at 'delimiter' (at runs of whitespace when none is given), at most "
                   "'maxsplit' times; returns the pieces, padded with empty strings, and the count for each.")
              .input("X", "T1")
              .output("Y", "T2")
              .output("Z", "T3")
              .attr_optional("delimiter", AttrType::kString)
              .attr_optional("maxsplit", AttrType::kInt)
              .types("T1", types::tensors({"string"}))
              .types("T2", types::tensors({"string"}))
              .types("T3", types::tensors({"int64"}))
              .infer(infer_string_split));
}
