// SwiGLU (ai.onnx 28): the gated activation Swish(A) * B of Llama-style feed-forward blocks.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;

namespace {

// The spec forbids broadcasting here: gate and value come from projections of one width.
void infer_swiglu(InferenceContext& ctx) {
  const tessera::ir::Shape* a = input_shape(ctx, 0);
  const tessera::ir::Shape* b = input_shape(ctx, 1);
  if (a && b) {
    bool same = a->size() == b->size();
    for (size_t k = 0; same && k < a->size(); ++k) {
      if ((*a)[k].is_static() && (*b)[k].is_static() && (*a)[k].value != (*b)[k].value) same = false;
    }
    if (!same) {
      ctx.fail(fmt::format("gate A {} and value B {} must have the same shape (SwiGLU does not broadcast)",
                           tessera::ir::shape_to_string(*a), tessera::ir::shape_to_string(*b)));
    }
  }
  std::optional<tessera::ir::Shape> shape;
  if (a && b) {
    shape = *a;
    for (size_t k = 0; k < a->size(); ++k) {
      (*shape)[k] = unify_dims(ctx, (*a)[k], (*b)[k], "SwiGLU input dimension");
    }
  } else if (a || b) {
    shape = a ? *a : *b;
  }
  propagate_elem(ctx, 0, 0, std::move(shape));
}

}  // namespace

TESSERA_REGISTER_OPS(attention_swiglu) {
  reg.add(OpSchema("SwiGLU", 28)
              .category(Category::kActivation)
              .doc("Gated activation Y = Swish(A) * B with Swish(a) = a * sigmoid(alpha * a); A and B have "
                   "the same "
                   "shape.")
              .input("A", "T")
              .input("B", "T")
              .output("Y", "T")
              .types("T", types::tensors({"bfloat16", "double", "float", "float16"}))
              .attr("alpha", 1.0f)
              .infer(infer_swiglu));
}
