// DFT: discrete Fourier transform along one axis of a real ([..., 1]) or complex ([..., 2]) signal.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// The axis: the attribute before opset 20, then the optional constant input 2 (default -2).
// nullopt when it is an input whose value is not known.
std::optional<int64_t> dft_axis(const InferenceContext& ctx) {
  if (ctx.schema().since_version() < 20) return ctx.attr_int("axis", 1);
  if (!ctx.has_input(2)) return -2;
  const Shape* s = input_shape(ctx, 2);
  if (s && !s->empty()) {
    ctx.fail_input(2, fmt::format("axis must be a scalar, got shape {}", tessera::ir::shape_to_string(*s)));
  }
  auto c = constant_ints(ctx, 2);
  if (!c) return std::nullopt;
  if (c->size() != 1) ctx.fail_input(2, fmt::format("axis must be a scalar, got {} values", c->size()));
  return (*c)[0];
}

// The transform length: the constant dft_length, else the input's length along the axis (for an inverse
// onesided transform, the full length 2 * (bins - 1) of the signal the bins came from).
Dim dft_length(const InferenceContext& ctx, const Dim& along, bool inverse_onesided) {
  if (ctx.has_input(1)) {
    auto c = constant_ints(ctx, 1);
    if (!c || c->size() != 1) return Dim::unknown();
    if ((*c)[0] <= 0) ctx.fail_input(1, fmt::format("dft_length must be positive, got {}", (*c)[0]));
    return Dim::of((*c)[0]);
  }
  if (!inverse_onesided) return along;
  return along.is_static() ? Dim::of(2 * (along.value - 1)) : Dim::unknown();
}

void infer_dft(InferenceContext& ctx) {
  bool inverse = ctx.attr_int("inverse", 0) != 0;
  bool onesided = ctx.attr_int("onesided", 0) != 0;
  std::optional<int64_t> axis = dft_axis(ctx);
  const Shape* in = input_shape(ctx, 0);
  if (!in) return propagate_elem(ctx, 0, 0, std::nullopt);
  auto rank = static_cast<int64_t>(in->size());
  if (rank < 2) {
    ctx.fail_input(0, fmt::format("input must be [batch, signal dims..., 1 or 2], got {}",
                                  tessera::ir::shape_to_string(*in)));
  }
  const Dim& complex = in->back();
  if (complex.is_static() && complex.value != 1 && complex.value != 2) {
    ctx.fail_input(
        0, fmt::format("the last dimension holds real (1) or complex (2) values, got {}", complex.value));
  }
  // An inverse onesided transform returns the real signal; every other form returns complex values.
  Shape out = *in;
  out.back() = Dim::of(inverse && onesided ? 1 : 2);
  if (!axis) {
    // Which axis changes is not known; only a full-length transform leaves every length as it is.
    if (onesided || ctx.has_input(1)) {
      for (int64_t i = 0; i + 1 < rank; ++i) out[i] = Dim::unknown();
    }
    return propagate_elem(ctx, 0, 0, std::move(out));
  }
  int64_t a = *axis < 0 ? *axis + rank : *axis;
  if (a < 0 || a > rank - 2) {
    ctx.fail(
        fmt::format("axis {} must be in [{}, -2] or [0, {}] for a rank-{} input (the last dimension holds "
                    "the real and imaginary parts and cannot be transformed)",
                    *axis, -rank, rank - 2, rank));
  }
  Dim n = dft_length(ctx, (*in)[a], inverse && onesided);
  if (!inverse && onesided) n = n.is_static() ? Dim::of(n.value / 2 + 1) : Dim::unknown();
  out[a] = n;
  propagate_elem(ctx, 0, 0, std::move(out));
}

}  // namespace

TESSERA_REGISTER_OPS(signal_dft) {
  const char* doc =
      "Computes the discrete Fourier transform (or its inverse) of a signal along one axis; 'onesided' keeps "
      "only the non-redundant half of a real signal's spectrum.";
  reg.add(OpSchema("DFT", 17)
              .category(Category::kImage)
              .doc(doc)
              .input("input", "T1")
              .optional_input("dft_length", "T2")
              .output("output", "T1")
              .attr("axis", int64_t{1})
              .attr("inverse", int64_t{0})
              .attr("onesided", int64_t{0})
              .types("T1", types::kFloatBf16)
              .types("T2", types::tensors({"int32", "int64"}))
              .infer(infer_dft));
  reg.add(OpSchema("DFT", 20)
              .category(Category::kImage)
              .doc(doc)
              .input("input", "T1")
              .optional_input("dft_length", "T2")
              .optional_input("axis", "tensor(int64)")
              .output("output", "T1")
              .attr("inverse", int64_t{0})
              .attr("onesided", int64_t{0})
              .types("T1", types::kFloatBf16)
              .types("T2", types::tensors({"int32", "int64"}))
              .infer(infer_dft));
}
