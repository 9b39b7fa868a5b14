// Squeeze and Unsqueeze: remove or insert axes of size 1.
#include <fmt/format.h>

#include <algorithm>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// The axes: an attribute before opset 13, an input from 13.
std::optional<std::vector<int64_t>> axes_of(const InferenceContext& ctx, bool& given) {
  if (ctx.opset() < 13) {
    given = ctx.has_attr("axes");
    return given ? std::optional(ctx.attr_ints("axes")) : std::nullopt;
  }
  given = ctx.has_input(1);
  // The spec says 1-D; scalar axes occur in real models and runtimes take them.
  if (const Shape* s = input_shape(ctx, 1); given && s && s->size() > 1) {
    ctx.fail_input(1,
                   fmt::format("input 'axes' must be 1-D, got shape {}", tessera::ir::shape_to_string(*s)));
  }
  return given ? tensor::static_ints(ctx, 1) : std::nullopt;
}

void keep_value(InferenceContext& ctx) {
  if (const auto* v = ctx.input_shape_value(0)) tensor::set_value(ctx, 0, *v);
}

void infer_squeeze(InferenceContext& ctx) {
  bool given = false;
  auto axes = axes_of(ctx, given);
  const Shape* s = input_shape(ctx, 0);
  if (!s || (given && !axes)) return propagate_elem(ctx, 0, 0, std::nullopt);
  int64_t rank = static_cast<int64_t>(s->size());
  Shape out;
  if (!given) {
    // Every size-1 axis goes; an axis of unknown size might be one of them.
    for (const Dim& d : *s) {
      if (!d.is_static()) return propagate_elem(ctx, 0, 0, std::nullopt);
      if (d.value != 1) out.push_back(d);
    }
  } else {
    std::vector<int64_t> norm = tensor::normalize_axes(ctx, *axes, rank);
    for (int64_t k = 0; k < rank; ++k) {
      const Dim& d = (*s)[k];
      if (std::find(norm.begin(), norm.end(), k) == norm.end()) {
        out.push_back(d);
      } else if (d.is_static() && d.value != 1) {
        ctx.fail_input(0, fmt::format("cannot squeeze axis {} of {}: its size is {}, not 1", k,
                                      tessera::ir::shape_to_string(*s), d.value));
      }
    }
  }
  propagate_elem(ctx, 0, 0, out);
  keep_value(ctx);
}

void infer_unsqueeze(InferenceContext& ctx) {
  bool given = false;
  auto axes = axes_of(ctx, given);
  if (!given) ctx.fail("Unsqueeze needs axes");
  const Shape* s = input_shape(ctx, 0);
  if (!s || !axes) return propagate_elem(ctx, 0, 0, std::nullopt);
  int64_t out_rank = static_cast<int64_t>(s->size() + axes->size());
  std::vector<int64_t> norm = tensor::normalize_axes(ctx, *axes, out_rank);
  Shape out;
  size_t next = 0;
  for (int64_t k = 0; k < out_rank; ++k) {
    bool inserted = std::find(norm.begin(), norm.end(), k) != norm.end();
    out.push_back(inserted ? Dim::of(1) : (*s)[next++]);
  }
  propagate_elem(ctx, 0, 0, out);
  keep_value(ctx);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_squeeze) {
  for (int v : {1, 11, 13, 21, 23, 24, 25}) {
    OpSchema s("Squeeze", v);
    s.category(Category::kTensorShape)
        .doc("Removes the given size-1 axes, or every size-1 axis when none are given.");
    if (v < 13) s.attr_optional("axes", tessera::ir::AttrType::kInts, "Axes to remove.");
    s.input("data", "T");
    if (v >= 13) s.optional_input("axes", "tensor(int64)", "Axes to remove.");
    s.output("squeezed", "T").types("T", tensor::all_types(v)).infer(infer_squeeze);
    reg.add(std::move(s));
  }
  for (int v : {1, 11, 13, 21, 23, 24, 25}) {
    OpSchema s("Unsqueeze", v);
    s.category(Category::kTensorShape).doc("Inserts size-1 axes at the given positions of the output.");
    if (v < 13) s.attr("axes", tessera::ir::AttrType::kInts, "Output positions of the new axes.");
    s.input("data", "T");
    if (v >= 13) s.input("axes", "tensor(int64)", "Output positions of the new axes.");
    s.output("expanded", "T").types("T", tensor::all_types(v)).infer(infer_unsqueeze);
    reg.add(std::move(s));
  }
}
