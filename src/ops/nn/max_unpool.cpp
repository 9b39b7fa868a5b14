// MaxUnpool: the partial inverse of MaxPool, scattering pooled values back to the indices it recorded.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/nn/window.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::AttrType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

void infer_max_unpool(InferenceContext& ctx) {
  const Shape* xs = input_shape(ctx, 0);
  const Shape* is = input_shape(ctx, 1);
  if (xs) nn::require_nc(ctx, 0, *xs, "X");
  if (xs && is && xs->size() != is->size()) {
    ctx.fail_input(1, fmt::format("input 1 ('I') has shape {} but X has {}; they must match",
                                  ir::shape_to_string(*is), ir::shape_to_string(*xs)));
  }
  if (ctx.has_input(2)) {
    // The requested output shape wins; its length must be X's rank.
    if (const Shape* os = input_shape(ctx, 2); os && os->size() != 1) {
      ctx.fail_input(2, "input 2 ('output_shape') must be 1-D, got " + ir::shape_to_string(*os));
    }
    auto v = shape_value(ctx, 2);
    if (!v) {
      std::optional<Shape> shape;
      if (xs) shape = Shape(xs->size(), Dim::unknown());
      return propagate_elem(ctx, 0, 0, shape);
    }
    if (xs && v->size() != xs->size()) {
      ctx.fail_input(
          2, fmt::format("input 2 ('output_shape') has {} values but X has rank {}", v->size(), xs->size()));
    }
    return propagate_elem(ctx, 0, 0, *v);
  }
  if (!xs) return propagate_elem(ctx, 0, 0, std::nullopt);
  size_t spatial = xs->size() - 2;
  auto w = nn::read_window(ctx, spatial, std::nullopt);
  Shape y{(*xs)[0], (*xs)[1]};
  for (size_t i = 0; i < spatial; ++i) {
    const Dim& in = (*xs)[i + 2];
    if (!in.is_static() || w->kernel[i] < 0) {
      y.push_back(Dim::unknown());
      continue;
    }
    // The size MaxPool would have pooled from: (in - 1) * stride + kernel - pads.
    y.push_back(Dim::of((in.value - 1) * w->strides[i] + w->kernel[i] - w->pads[i] - w->pads[i + spatial]));
  }
  propagate_elem(ctx, 0, 0, y);
}

}  // namespace

TESSERA_REGISTER_OPS(nn_max_unpool) {
  for (int v : {9, 11, 22}) {
    OpSchema s("MaxUnpool", v);
    s.category(Category::kPooling)
        .doc(
            "Places each value of X at the position its index in I names, zeros elsewhere: the inverse of a "
            "MaxPool that returned Indices. output_shape picks the size when pooling was ambiguous.")
        .input("X", "T1")
        .input("I", "T2")
        .optional_input("output_shape", "T2")
        .output("output", "T1")
        .types("T1", nn::float_types(v))
        .types("T2", types::tensors({"int64"}))
        .attr("kernel_shape", AttrType::kInts)
        .attr_optional("pads", AttrType::kInts)
        .attr_optional("strides", AttrType::kInts)
        .infer(infer_max_unpool);
    reg.add(std::move(s));
  }
}
