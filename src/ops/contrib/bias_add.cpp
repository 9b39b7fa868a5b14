// BiasAdd (com.microsoft 1): X + bias + skip, the residual add of diffusion-model blocks.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;

namespace {

// X and skip are (N, S, C); bias is (C).
void infer_bias_add(InferenceContext& ctx) {
  require_rank(ctx, 0, 3, "X (N, S, C)");
  require_rank(ctx, 1, 1, "bias (C)");
  require_rank(ctx, 2, 3, "skip (N, S, C)");
  const ir::Shape* x = input_shape(ctx, 0);
  const ir::Shape* bias = input_shape(ctx, 1);
  const ir::Shape* skip = input_shape(ctx, 2);
  std::optional<ir::Shape> y = x ? std::optional<ir::Shape>(*x) : std::nullopt;
  if (x && skip) {
    for (size_t k = 0; k < 3; ++k)
      (*y)[k] = unify_dims(ctx, (*x)[k], (*skip)[k], "X and skip must have one shape");
  } else if (skip) {
    y = *skip;
  }
  if (y && bias) (*y)[2] = unify_dims(ctx, (*y)[2], (*bias)[0], "bias length must equal the channel count C");
  propagate_elem(ctx, 0, 0, std::move(y));
}

}  // namespace

TESSERA_REGISTER_OPS(contrib_bias_add) {
  reg.add(OpSchema("BiasAdd", 1, "com.microsoft")
              .category(Category::kArithmetic)
              .doc("Adds a per-channel bias and a skip (residual) tensor to X: Y = X + bias + skip.")
              .input("X", "T")
              .input("bias", "T")
              .input("skip", "T")
              .output("Y", "T")
              .types("T", types::tensors({"float16", "float"}))
              .infer(infer_bias_add));
}
