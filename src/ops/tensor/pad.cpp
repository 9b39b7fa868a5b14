// Pad: adds (or, with negative amounts, removes) values at the start and end of each axis.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

void check_mode(const InferenceContext& ctx) {
  std::string mode = ctx.attr_string("mode", "constant");
  bool wrap_ok = ctx.opset() >= 19;
  if (mode == "constant" || mode == "reflect" || mode == "edge" || (wrap_ok && mode == "wrap")) return;
  ctx.fail(fmt::format("attribute 'mode' is '{}'; expected 'constant', 'reflect', 'edge'{}", mode,
                       wrap_ok ? " or 'wrap'" : ""));
}

// The pads: an attribute before opset 11 ('paddings' in Pad-1), an input after.
std::optional<std::vector<int64_t>> pads_of(const InferenceContext& ctx) {
  if (ctx.opset() < 2) return ctx.attr_ints("paddings");
  if (ctx.opset() < 11) return ctx.attr_ints("pads");
  return tensor::static_ints(ctx, 1);
}

void infer_pad(InferenceContext& ctx) {
  check_mode(ctx);
  if (ctx.opset() >= 11) require_rank(ctx, 1, 1, "input 'pads'");
  const Shape* s = input_shape(ctx, 0);
  if (!s) return propagate_elem(ctx, 0, 0, std::nullopt);
  int64_t rank = static_cast<int64_t>(s->size());
  // The padded axes: all, or those of the 'axes' input (18+).
  std::vector<int64_t> axes;
  if (ctx.has_input(3)) {
    auto a = tensor::static_ints(ctx, 3);
    if (!a) return propagate_elem(ctx, 0, 0, Shape(s->size()));
    axes = tensor::normalize_axes(ctx, *a, rank);
  } else {
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  }
  auto pads = pads_of(ctx);
  if (!pads) {
    Shape out = *s;
    for (int64_t a : axes) out[a] = Dim::unknown();
    return propagate_elem(ctx, 0, 0, out);
  }
  size_t n = axes.size();
  if (pads->size() != 2 * n) {
    ctx.fail(fmt::format("pads {} has {} values; {} axes need {} (all begins, then all ends)",
                         tensor::ints_string(*pads), pads->size(), n, 2 * n));
  }
  Shape out = *s;
  for (size_t k = 0; k < n; ++k) {
    const Dim& d = (*s)[axes[k]];
    int64_t total = (*pads)[k] + (*pads)[k + n];
    if (!d.is_static()) {
      out[axes[k]] = total == 0 ? d : Dim::unknown();
      continue;
    }
    if (d.value + total < 0) {
      ctx.fail(fmt::format("pads {} shrink axis {} of size {} below zero", tensor::ints_string(*pads),
                           axes[k], d.value));
    }
    out[axes[k]] = Dim::of(d.value + total);
  }
  propagate_elem(ctx, 0, 0, out);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_pad) {
  const char* doc =
      "Pads each axis with 'begin' and 'end' amounts (negative ones crop), filling with a constant or by "
      "reflecting, repeating the edge or wrapping around.";
  for (int v : {1, 2, 11, 13, 18, 19, 21, 23, 24, 25}) {
    OpSchema s("Pad", v);
    s.category(Category::kTensorShape)
        .doc(doc)
        .attr("mode", "constant", "'constant', 'reflect', 'edge' or 'wrap' (19+).");
    if (v < 11) {
      s.attr(v < 2 ? "paddings" : "pads", tessera::ir::AttrType::kInts,
             "Begin amounts of every axis, then the ends.");
      s.attr("value", 0.0f, "Fill value of 'constant' mode.");
    }
    s.input("data", "T");
    if (v >= 11) {
      s.input("pads", "tensor(int64)", "Begin amounts of every padded axis, then the ends.");
      s.optional_input("constant_value", "T", "Fill value of 'constant' mode (0 when omitted).");
    }
    if (v >= 18) s.optional_input("axes", "Tind", "Axes that 'pads' refers to; all when omitted.");
    s.output("output", "T");
    s.types("T", v < 11 ? types::kFloat : v < 13 ? types::kNumeric : tensor::all_types(v));
    if (v >= 18) s.types("Tind", types::tensors({"int32", "int64"}));
    s.infer(infer_pad);
    reg.add(std::move(s));
  }
}
