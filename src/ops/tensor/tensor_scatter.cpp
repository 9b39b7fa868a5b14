// TensorScatter: writes an update into a fixed-size cache along its sequence axis (KV-cache updates).
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Shape;

namespace {

void infer_tensor_scatter(InferenceContext& ctx) {
  std::string mode = ctx.attr_string("mode", "linear");
  if (mode != "linear" && mode != "circular") {
    ctx.fail(fmt::format("attribute 'mode' is '{}'; expected 'linear' or 'circular'", mode));
  }
  const Shape* cache = input_shape(ctx, 0);
  const Shape* upd = input_shape(ctx, 1);
  if (cache && upd) {
    auto str = [](const Shape* s) { return tessera::ir::shape_to_string(*s); };
    if (cache->size() != upd->size()) {
      ctx.fail_input(1, fmt::format("update {} must have the rank of past_cache {}", str(upd), str(cache)));
    }
    int64_t rank = static_cast<int64_t>(cache->size());
    if (rank < 2) ctx.fail_input(0, fmt::format("past_cache {} needs rank >= 2", str(cache)));
    int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -2), rank);
    if (axis == 0) ctx.fail("attribute 'axis' cannot be the batch axis 0");
    for (int64_t k = 0; k < rank; ++k) {
      const auto &c = (*cache)[k], &u = (*upd)[k];
      if (!c.is_static() || !u.is_static()) continue;
      if (k == axis ? u.value > c.value : u.value != c.value) {
        ctx.fail_input(
            1, fmt::format("update {} does not fit past_cache {} along axis {}", str(upd), str(cache), k));
      }
    }
  }
  if (ctx.has_input(2)) require_rank(ctx, 2, 1, "input 'write_indices'");
  propagate_type(ctx, 0, 0);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_tensor_scatter) {
  reg.add(
      OpSchema("TensorScatter", 24)
          .category(Category::kTensorShape)
          .doc("Returns past_cache with 'update' written along the sequence axis at each batch entry's write "
               "index (0 by default; modulo the cache length in 'circular' mode).")
          .attr("axis", int64_t{-2}, "The sequence axis; not the batch axis 0.")
          .attr("mode", "linear", "'linear' or 'circular' (write positions wrap around).")
          .input("past_cache", "T")
          .input("update", "T")
          .optional_input("write_indices", "tensor(int64)", "Write position of each batch entry.")
          .output("present_cache", "T")
          .types("T", types::kAllTensorIr12)
          .infer(infer_tensor_scatter));
}
