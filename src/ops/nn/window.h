// Shape rules shared by the sliding-window operators of src/ops/nn: convolutions (Conv, ConvInteger,
// QLinearConv, DeformConv, ConvTranspose) and pooling (AveragePool, MaxPool, LpPool, MaxUnpool).
//
// They all read the same attributes (kernel_shape, strides, dilations, pads, auto_pad, ceil_mode),
// so their validation lives here once and every op reports the same messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops/infer.h"
#include "ops/schema.h"

namespace tessera::ops::nn {

// Validated window attributes for `spatial` spatial axes, defaults filled in.
struct Window {
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  // begin values then end values: 2 * spatial entries
  std::string auto_pad;       // NOTSET, SAME_UPPER, SAME_LOWER or VALID
  bool ceil_mode = false;
};

// Reads and checks the window attributes. `kernel` is the weight's spatial sizes for convolutions (-1
// where not static), nullopt for pooling; kernel_shape, when set, must agree with it and wins. Kernel
// entries stay -1 where nothing gives them, and the matching output sizes stay unknown.
std::optional<Window> read_window(const InferenceContext& ctx, size_t spatial,
                                  std::optional<std::vector<int64_t>> kernel);

// Output size along spatial axis i of a convolution or pooling window.
ir::Dim window_output_dim(const Window& w, const ir::Dim& in, size_t i);

// Output shape [N, channels, spatial...] of a convolution or pooling over `x`.
ir::Shape window_output_shape(const InferenceContext& ctx, const ir::Shape& x, const ir::Dim& channels,
                              const std::optional<Window>& w);

// Fails unless X has at least batch and channel axes.
void require_nc(const InferenceContext& ctx, size_t input, const ir::Shape& x, std::string_view name);

// Shape inference of a convolution: X at input `x`, W at `w` ([M, C/group, k...]), an optional bias
// of M values at `b` (or none when b < 0). Sets output 0 to `elem` with [N, M, spatial...].
// Names: "X"/"W"/"B" as the op spells them, for messages.
struct ConvInputs {
  size_t x = 0, w = 1;
  int b = 2;
  const char* x_name = "X";
  const char* w_name = "W";
  const char* b_name = "B";
};
void infer_conv(InferenceContext& ctx, const ConvInputs& in, ir::DataType elem);

// Opset 22 added bfloat16 to most of these ops.
std::vector<std::string> float_types(int version);  // bfloat16 included from opset 22

}  // namespace tessera::ops::nn
