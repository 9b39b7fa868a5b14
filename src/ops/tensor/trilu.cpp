// Trilu: keeps the upper or lower triangle of the last two axes.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;

namespace {

void infer_trilu(InferenceContext& ctx) {
  auto rank = tensor::input_rank(ctx, 0);
  if (rank && *rank < 2) ctx.fail_input(0, fmt::format("input has rank {}; Trilu needs at least 2", *rank));
  if (const tessera::ir::Shape* k = input_shape(ctx, 1); k && !k->empty()) {
    ctx.fail_input(1, fmt::format("k must be a scalar, got shape {}", tessera::ir::shape_to_string(*k)));
  }
  propagate_type(ctx, 0, 0);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_trilu) {
  reg.add(OpSchema("Trilu", 14)
              .category(Category::kTensorShape)
              .doc("Zeroes the elements below (upper=1) or above (upper=0) diagonal k of the last two axes.")
              .attr("upper", int64_t{1}, "1 keeps the upper triangle, 0 the lower.")
              .input("input", "T")
              .optional_input("k", "tensor(int64)", "Diagonal offset (0 when omitted).")
              .output("output", "T")
              .types("T", types::kAllTensorIr4)
              .infer(infer_trilu));
}
