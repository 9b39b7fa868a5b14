// Helpers of the sequence kernels: reading a sequence input and a (possibly negative) position.
#pragma once

#include <fmt/format.h>

#include <string>

#include "runtime/kernel.h"

namespace tessera::ops::kernels {

// Input i as a sequence; KernelError naming it when it is something else.
inline const rt::Sequence& sequence_input(const rt::KernelContext& ctx, size_t i, std::string_view name) {
  const rt::Value& v = ctx.value(i);
  if (!v.is_sequence()) ctx.fail(fmt::format("input '{}' must be a sequence, got {}", name, v.describe()));
  return v.sequence();
}

// The single integer of position input i (int32 or int64, scalar or [1]).
inline int64_t position_input(const rt::KernelContext& ctx, size_t i) {
  const rt::Tensor& p = ctx.input(i);
  if (p.dtype() != ir::DataType::kInt32 && p.dtype() != ir::DataType::kInt64)
    ctx.fail(fmt::format("input 'position' must be int32 or int64, got {}", ir::dtype_name(p.dtype())));
  if (p.numel() != 1)
    ctx.fail(fmt::format("input 'position' must hold one value, got shape {}", rt::shape_str(p.shape())));
  return p.to_int64(0);
}

// `pos` made non-negative for a sequence of n elements; it must lie in [-n, n - 1], or [-n, n] when
// `allow_end` (SequenceInsert may append).
inline size_t resolve_position(const rt::KernelContext& ctx, int64_t pos, size_t n, bool allow_end) {
  auto len = static_cast<int64_t>(n);
  int64_t hi = allow_end ? len : len - 1;
  if (pos < -len || pos > hi)
    ctx.fail(fmt::format("position {} is out of range for a sequence of {} element(s) (valid: [{}, {}])", pos,
                         n, -len, hi));
  return static_cast<size_t>(pos < 0 ? pos + len : pos);
}

}  // namespace tessera::ops::kernels
