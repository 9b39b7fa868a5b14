// Det: determinant of each square matrix in the last two axes.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/nn/window.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::Shape;

namespace {

// [*, M, M] -> [*].
void infer_det(InferenceContext& ctx) {
  const Shape* xs = input_shape(ctx, 0);
  if (!xs) return propagate_elem(ctx, 0, 0, std::nullopt);
  if (xs->size() < 2) {
    ctx.fail_input(0,
                   fmt::format("input 0 ('X') has rank {} {}; Det needs square matrices in the last two axes",
                               xs->size(), ir::shape_to_string(*xs)));
  }
  unify_dims(ctx, (*xs)[xs->size() - 2], xs->back(),
             fmt::format("input 0 ('X') {} must hold square matrices in its last two axes",
                         ir::shape_to_string(*xs)));
  propagate_elem(ctx, 0, 0, Shape(xs->begin(), xs->end() - 2));
}

}  // namespace

TESSERA_REGISTER_OPS(nn_det) {
  for (int v : {11, 22}) {
    reg.add(
        OpSchema("Det", v)
            .category(Category::kLinearAlgebra)
            .doc("Determinant of each square matrix formed by the last two axes; leading axes are a batch.")
            .input("X", "T")
            .output("Y", "T")
            .types("T", nn::float_types(v))
            .infer(infer_det));
  }
}
