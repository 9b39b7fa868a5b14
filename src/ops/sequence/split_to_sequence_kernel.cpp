// Reference kernel of SplitToSequence: cuts a tensor along an axis into a sequence of pieces, either of
// the sizes a 1-D `split` lists, of a scalar `split` chunk size (the last piece may be shorter), or of
// size 1 each when `split` is absent (then keepdims=0 drops the axis).
#include <fmt/format.h>

#include "ops/control/tensor_slices.h"
#include "runtime/kernel.h"

namespace {

using namespace tessera::ops::kernels;
using tessera::rt::KernelContext;
using tessera::rt::Shape;
using tessera::rt::Tensor;

// The piece sizes along an axis of length `dim`.
std::vector<int64_t> piece_sizes(const KernelContext& ctx, int64_t dim) {
  if (!ctx.has_input(1)) return std::vector<int64_t>(static_cast<size_t>(dim), 1);
  const Tensor& split = ctx.input(1);
  if (split.dtype() != tessera::ir::DataType::kInt32 && split.dtype() != tessera::ir::DataType::kInt64)
    ctx.fail(
        fmt::format("input 'split' must be int32 or int64, got {}", tessera::ir::dtype_name(split.dtype())));
  if (split.rank() > 1)
    ctx.fail(fmt::format("input 'split' must be a scalar or 1-D, got shape {}",
                         tessera::rt::shape_str(split.shape())));
  std::vector<int64_t> sizes;
  if (split.rank() == 0) {
    int64_t chunk = split.to_int64(0);
    if (chunk <= 0) ctx.fail(fmt::format("input 'split' is {}; a chunk size must be positive", chunk));
    for (int64_t left = dim; left > 0; left -= chunk) sizes.push_back(std::min(chunk, left));
    return sizes;
  }
  int64_t total = 0;
  for (int64_t i = 0; i < split.numel(); ++i) {
    int64_t v = split.to_int64(i);
    if (v < 0) ctx.fail(fmt::format("input 'split' holds {} at index {}; sizes must not be negative", v, i));
    if (v > dim - total)
      ctx.fail(fmt::format("input 'split' sizes add up to more than the axis length {}", dim));
    total += v;
    sizes.push_back(v);
  }
  if (total != dim)
    ctx.fail(fmt::format("input 'split' sizes add up to {} but the axis has length {}", total, dim));
  return sizes;
}

void split_to_sequence(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) ctx.fail("input 'input' must have at least one dimension to split along");
  auto axis = static_cast<size_t>(
      normalize_axis_or_throw(ctx.info().get_int("axis", 0), x.rank(), "attribute 'axis'"));
  bool drop_axis = !ctx.has_input(1) && ctx.info().get_int("keepdims", 1) == 0;
  tessera::rt::Sequence seq{tessera::ir::Type::tensor(x.dtype()), {}};
  int64_t start = 0;
  for (int64_t len : piece_sizes(ctx, x.shape()[axis])) {
    Shape s = x.shape();
    s[axis] = len;
    Tensor piece = Tensor::zeros(x.dtype(), s);
    copy_axis_range(x, axis, start, len, piece, 0);
    start += len;
    if (drop_axis) {
      s.erase(s.begin() + static_cast<ptrdiff_t>(axis));
      piece = piece.reshaped(s);
    }
    seq.items.emplace_back(std::move(piece));
  }
  ctx.set_output(0, tessera::rt::Value::sequence(std::move(seq)));
}

}  // namespace

TESSERA_REGISTER_KERNELS(sequence_split_to_sequence) {
  reg.add(tessera::rt::KernelDef::fn("SplitToSequence", split_to_sequence));
}
