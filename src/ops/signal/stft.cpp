// STFT: short-time Fourier transform, one DFT per frame of a sliding window over the signal.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// A scalar integer constant input; nullopt when absent or not constant.
std::optional<int64_t> scalar_constant(const InferenceContext& ctx, size_t i, const char* what) {
  const auto* s = input_shape(ctx, i);
  if (s && !s->empty()) {
    ctx.fail_input(i,
                   fmt::format("{} must be a scalar, got shape {}", what, tessera::ir::shape_to_string(*s)));
  }
  auto c = constant_ints(ctx, i);
  if (!c || c->size() != 1) return std::nullopt;
  if ((*c)[0] <= 0) ctx.fail_input(i, fmt::format("{} must be positive, got {}", what, (*c)[0]));
  return (*c)[0];
}

// [batch, signal_length, 1 or 2] -> [batch, frames, bins, 2] with
// frames = (signal_length - frame_length) / frame_step + 1 and bins = frame_length (/ 2 + 1 when onesided).
void infer_stft(InferenceContext& ctx) {
  require_rank(ctx, 0, 3, "signal ([batch, signal_length, 1 or 2])");
  std::optional<int64_t> step = scalar_constant(ctx, 1, "frame_step");
  std::optional<int64_t> length = ctx.has_input(3) ? scalar_constant(ctx, 3, "frame_length") : std::nullopt;
  Dim frame = length ? Dim::of(*length) : Dim::unknown();
  if (ctx.has_input(2)) {
    require_rank(ctx, 2, 1, "window");
    const auto* w = input_shape(ctx, 2);
    if (w) frame = unify_dims(ctx, frame, (*w)[0], "window length and frame_length differ");
  }
  const Shape* sig = input_shape(ctx, 0);
  Dim batch = sig ? (*sig)[0] : Dim::unknown();
  Dim frames = Dim::unknown();
  if (sig) {
    const Dim& c = (*sig)[2];
    if (c.is_static() && c.value != 1 && c.value != 2) {
      ctx.fail_input(0,
                     fmt::format("the last dimension holds real (1) or complex (2) values, got {}", c.value));
    }
    const Dim& n = (*sig)[1];
    if (n.is_static() && frame.is_static() && frame.value > n.value) {
      ctx.fail(fmt::format("frame length {} is longer than the signal ({})", frame.value, n.value));
    }
    if (n.is_static() && frame.is_static() && step) frames = Dim::of((n.value - frame.value) / *step + 1);
  }
  Dim bins = frame;
  if (ctx.attr_int("onesided", 1) != 0)
    bins = frame.is_static() ? Dim::of(frame.value / 2 + 1) : Dim::unknown();
  propagate_elem(ctx, 0, 0, Shape{batch, frames, bins, Dim::of(2)});
}

}  // namespace

TESSERA_REGISTER_OPS(signal_stft) {
  reg.add(
      OpSchema("STFT", 17)
          .category(Category::kImage)
          .doc("Short-time Fourier transform: slides a frame of 'frame_length' samples by 'frame_step' along "
               "the signal, applies the optional window and takes the DFT of each frame.")
          .input("signal", "T1")
          .input("frame_step", "T2")
          .optional_input("window", "T1")
          .optional_input("frame_length", "T2")
          .output("output", "T1")
          .attr("onesided", int64_t{1})
          .types("T1", types::kFloatBf16)
          .types("T2", types::tensors({"int32", "int64"}))
          .infer(infer_stft));
}
