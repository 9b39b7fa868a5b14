#include "ops/nn/norm_util.h"

#include <fmt/format.h>

#include "ops/infer_util.h"

namespace tessera::ops::nn {

void require_per_channel(const InferenceContext& ctx, size_t i, std::string_view name, const ir::Dim& size,
                         std::string_view what) {
  if (!ctx.has_input(i)) return;
  const ir::Shape* s = input_shape(ctx, i);
  if (!s) return;
  if (s->size() != 1) {
    ctx.fail_input(i, fmt::format("input {} ('{}') must be 1-D with one value per channel, got {}", i, name,
                                  ir::shape_to_string(*s)));
  }
  if (size.is_static() && (*s)[0].is_static() && size.value != (*s)[0].value) {
    ctx.fail_input(i, fmt::format("input {} ('{}') has {} values but {} is {}", i, name, (*s)[0].value, what,
                                  size.value));
  }
}

void require_trailing_broadcast(const InferenceContext& ctx, size_t i, std::string_view name,
                                const ir::Shape& x, int64_t axis) {
  if (!ctx.has_input(i)) return;
  const ir::Shape* s = input_shape(ctx, i);
  if (!s) return;
  size_t normalized = x.size() - static_cast<size_t>(axis);
  if (s->size() > normalized) {
    ctx.fail_input(
        i, fmt::format("input {} ('{}') has rank {} {} but only the last {} axes of X {} are normalized", i,
                       name, s->size(), ir::shape_to_string(*s), normalized, ir::shape_to_string(x)));
  }
  for (size_t k = 0; k < s->size(); ++k) {
    const ir::Dim& d = (*s)[s->size() - 1 - k];
    const ir::Dim& xd = x[x.size() - 1 - k];
    if (d.is_static() && xd.is_static() && d.value != 1 && d.value != xd.value) {
      ctx.fail_input(
          i, fmt::format("input {} ('{}') {} does not broadcast to X's normalized axes {}", i, name,
                         ir::shape_to_string(*s), ir::shape_to_string(ir::Shape(x.begin() + axis, x.end()))));
    }
  }
}

}  // namespace tessera::ops::nn
