// Expand: broadcasts a tensor to a shape given as an input.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

void infer_expand(InferenceContext& ctx) {
  require_rank(ctx, 1, 1, "input 'shape'");
  const Shape* in = input_shape(ctx, 0);
  if (auto v = shape_value(ctx, 1)) {
    Shape target;
    for (const Dim& d : *v) {
      if (d.param.empty() && d.value < -1)
        ctx.fail_input(1, fmt::format("shape {} has a negative dimension", tensor::dims_string(*v)));
      target.push_back(d.param.empty() && d.value < 0 ? Dim::unknown() : d);
    }
    if (!in) return propagate_elem(ctx, 0, 0, std::nullopt);
    // The target's 1s take the input's size: the broadcast of the two shapes (unknowns favour the known).
    return propagate_elem(ctx, 0, 0, broadcast_shapes(ctx, *in, target));
  }
  // Only the length of the target is known: the rank, and the input's sizes other than 1.
  const Shape* ss = input_shape(ctx, 1);
  if (!in || !ss || !(*ss)[0].is_static()) return propagate_elem(ctx, 0, 0, std::nullopt);
  size_t rank = std::max(in->size(), static_cast<size_t>((*ss)[0].value));
  Shape out(rank);
  for (size_t k = 0; k < in->size(); ++k) {
    const Dim& d = (*in)[k];
    if (d.is_static() && d.value != 1) out[rank - in->size() + k] = d;
  }
  propagate_elem(ctx, 0, 0, out);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_expand) {
  for (int v : {8, 13}) {
    reg.add(OpSchema("Expand", v)
                .category(Category::kTensorShape)
                .doc("Broadcasts the input to the given shape, numpy style; the result may be larger than "
                     "the shape.")
                .input("input", "T")
                .input("shape", "tensor(int64)")
                .output("output", "T")
                .types("T", tensor::all_types(v))
                .infer(infer_expand));
  }
}
