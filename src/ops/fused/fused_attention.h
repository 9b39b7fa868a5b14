// com.tessera FusedAttention: one node for the attention subgraph exporters write (Q K^T, scale, masks,
// Softmax, times V), made by the fuse_attention rule (passes/fuse_attention.cpp) for the CUDA flash
// kernel. Q, K and V are read where the exporter's head-splitting Reshapes left them, so the Transposes
// around the attention disappear: each is a tensor of rank 4, whose attribute `<x>_axes` names the axes
// holding (batch, heads, seq, head size), or of rank 5, whose fifth axis (the one `<x>_axes` leaves out)
// packs Q, K and V of one projection, `<x>_part` selecting the slice. Y is rank 4, laid out by `y_axes`.
// The default axes [0, 2, 1, 3] are [B, S, H, D]; [0, 1, 2, 3] is [B, H, S, D]. With 3 axes, every
// operand and Y is 3-D (batch * heads, seq, size), as torch.nn.MultiheadAttention's export multiplies
// them: batch 1, B * H heads.
// Per query head h (query heads a multiple of key/value heads; KV head h / (Hq / Hkv)):
//   s = (Q K^T) * scale
//   s = keep ? s : mask_fill        (optional boolean input `keep`, broadcast to [B, Hq, Sq, Skv])
//   s = s + attn_bias               (optional float input, broadcast to [B, Hq, Sq, Skv])
//   s = -inf where causal and key j > query i
//   Y = softmax(s) V                (a row with every score -inf gives zeros)
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tessera::ops::fused {

inline constexpr const char* kFusedAttention = "FusedAttention";
enum FusedAttentionInput { kFaQ, kFaK, kFaV, kFaBias, kFaKeep };
inline const std::vector<int64_t> kBshd = {0, 2, 1, 3};

// Where an operand's (batch, heads, seq, size) elements lie in its tensor.
struct OperandView {
  int64_t dims[4] = {0, 0, 0, 0};     // batch, heads, seq, size
  int64_t strides[4] = {0, 0, 0, 0};  // in elements
  int64_t offset = 0;                 // of element (0, 0, 0, 0)
};

// The axis of a rank-5 operand that `axes` leaves out (the packed one), or the error.
inline std::optional<std::string> check_axes(std::span<const int64_t> axes, size_t rank, int64_t part,
                                             std::string_view what) {
  if (axes.size() == 3 && rank != 3)
    return fmt::format("{}_axes has 3 values (batch * heads, seq, size) but {} has rank {}", what, what,
                       rank);
  if (axes.size() != 4 && axes.size() != 3)
    return fmt::format("{}_axes must have 4 values (or 3 for 3-D operands), got {}", what, axes.size());
  if (axes.size() == 4 && rank != 4 && rank != 5)
    return fmt::format("{} must have rank 4 or 5, got {}", what, rank);
  bool seen[5] = {false, false, false, false, false};
  for (int64_t a : axes) {
    if (a < 0 || a >= static_cast<int64_t>(rank) || seen[a])
      return fmt::format("{}_axes [{}] is not 4 distinct axes of a rank-{} tensor", what,
                         fmt::join(axes, ","), rank);
    seen[a] = true;
  }
  if (rank == 4 && part != 0)
    return fmt::format("{}_part is {} but {} is not packed (rank 4)", what, part, what);
  return std::nullopt;
}

// The view of a tensor of `shape` (checked with check_axes first); fails when part is out of range.
inline std::optional<std::string> operand_view(std::span<const int64_t> shape, std::span<const int64_t> axes,
                                               int64_t part, std::string_view what, OperandView& out) {
  if (auto e = check_axes(axes, shape.size(), part, what)) return e;
  int64_t stride[5];
  stride[shape.size() - 1] = 1;
  for (size_t k = shape.size() - 1; k > 0; --k) stride[k - 1] = stride[k] * shape[k];
  out.offset = 0;
  if (axes.size() == 3) {  // (batch * heads, seq, size): batch 1
    out.dims[0] = 1, out.strides[0] = 0;
    for (size_t w = 0; w < 3; ++w) {
      out.dims[w + 1] = shape[static_cast<size_t>(axes[w])];
      out.strides[w + 1] = stride[axes[w]];
    }
    return std::nullopt;
  }
  for (size_t w = 0; w < 4; ++w) {
    out.dims[w] = shape[static_cast<size_t>(axes[w])];
    out.strides[w] = stride[axes[w]];
  }
  if (shape.size() == 5) {
    size_t packed = 0;
    for (size_t k = 0; k < 5; ++k)
      if (k != static_cast<size_t>(axes[0]) && k != static_cast<size_t>(axes[1]) &&
          k != static_cast<size_t>(axes[2]) && k != static_cast<size_t>(axes[3]))
        packed = k;
    if (part < 0 || part >= shape[packed])
      return fmt::format("{}_part {} is outside [0, {}) (axis {})", what, part, shape[packed], packed);
    out.offset = part * stride[packed];
  }
  return std::nullopt;
}

// Y's shape: the logical (batch, heads, seq, size) laid out by `y_axes` (3 axes: batch * heads, seq, size).
inline std::vector<int64_t> output_shape(std::span<const int64_t> y_axes, const int64_t (&logical)[4]) {
  std::vector<int64_t> y(y_axes.size());
  if (y_axes.size() == 3) {
    const int64_t merged[3] = {logical[0] * logical[1], logical[2], logical[3]};
    for (size_t w = 0; w < 3; ++w) y[static_cast<size_t>(y_axes[w])] = merged[w];
  } else {
    for (size_t w = 0; w < 4; ++w) y[static_cast<size_t>(y_axes[w])] = logical[w];
  }
  return y;
}

}  // namespace tessera::ops::fused
