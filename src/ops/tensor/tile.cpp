// Tile: repeats a tensor along each axis.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// Tile-1: one axis (input 2) repeated 'tiles' times (input 1).
void infer_tile_1(InferenceContext& ctx, const Shape& s) {
  auto tiles = tensor::static_ints(ctx, 1);
  auto axis = tensor::static_ints(ctx, 2);
  if (!axis || axis->size() != 1) return propagate_elem(ctx, 0, 0, Shape(s.size()));
  int64_t a = normalize_axis(ctx, (*axis)[0], static_cast<int64_t>(s.size()), "axis input");
  Shape out = s;
  out[a] = tiles && tiles->size() == 1 ? dim_mul(s[a], Dim::of((*tiles)[0])) : Dim::unknown();
  propagate_elem(ctx, 0, 0, out);
}

void infer_tile(InferenceContext& ctx) {
  const Shape* s = input_shape(ctx, 0);
  if (!s) return propagate_elem(ctx, 0, 0, std::nullopt);
  if (ctx.opset() < 6) return infer_tile_1(ctx, *s);
  require_rank(ctx, 1, 1, "input 'repeats'");
  const Shape* rs = input_shape(ctx, 1);
  if (rs && (*rs)[0].is_static() && static_cast<size_t>((*rs)[0].value) != s->size()) {
    ctx.fail_input(1, fmt::format("repeats has {} values but the input {} has rank {}", (*rs)[0].value,
                                  tessera::ir::shape_to_string(*s), s->size()));
  }
  auto reps = shape_value(ctx, 1);
  if (!reps) return propagate_elem(ctx, 0, 0, Shape(s->size()));
  Shape out;
  for (size_t k = 0; k < s->size(); ++k) {
    const Dim& r = (*reps)[k];
    if (r.param.empty() && r.value < 0 && ctx.input_constant(1)) {
      ctx.fail_input(1, fmt::format("repeats {} has a negative value", tensor::dims_string(*reps)));
    }
    out.push_back(r.is_static() ? dim_mul((*s)[k], r) : Dim::unknown());
  }
  propagate_elem(ctx, 0, 0, out);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_tile) {
  const char* doc = "Repeats the input along each axis as many times as 'repeats' says.";
  reg.add(OpSchema("Tile", 1)
              .category(Category::kTensorShape)
              .doc(doc)
              .input("input", "T")
              .input("tiles", "T")
              .input("axis", "T")
              .output("output", "T")
              .types("T", types::kFloat)
              .types("T1", types::tensors({"int64"}))
              .infer(infer_tile));
  for (int v : {6, 13}) {
    reg.add(OpSchema("Tile", v)
                .category(Category::kTensorShape)
                .doc(doc)
                .input("input", "T")
                .input("repeats", "T1")
                .output("output", "T")
                .types("T", tensor::all_types(v))
                .types("T1", types::tensors({"int64"}))
                .infer(infer_tile));
  }
}
