#include "backends/cuda/attention_host.h"

#include <fmt/format.h>

#include "backends/cuda/kernel_util.h"

namespace tessera::cuda {

std::optional<MaskType> mask_type(rt::DataType t) {
  switch (t) {
    case rt::DataType::kFloat:
      return MaskType::kFloat;
    case rt::DataType::kFloat16:
      return MaskType::kHalf;
    case rt::DataType::kBFloat16:
      return MaskType::kBFloat16;
    case rt::DataType::kBool:
      return MaskType::kBool;
    default:
      return std::nullopt;
  }
}

AttnMask attention_mask(const rt::KernelContext& ctx, const rt::Tensor& t, const std::array<int64_t, 4>& full,
                        const char* what) {
  auto type = mask_type(t.dtype());
  if (!type)
    ctx.fail(
        fmt::format("{} must be bool, float, float16 or bfloat16, got {}", what, ir::dtype_name(t.dtype())));
  const int rank = t.rank();
  if (rank < 1 || rank > 4)
    ctx.fail(fmt::format(
        "{} must have rank 1 to 4 (broadcastable to batch, heads, q_seq, total_seq), got shape {}", what,
        rt::shape_str(t.shape())));
  int64_t dims[4] = {1, 1, 1, 1};
  for (int k = 0; k < rank; ++k) dims[4 - rank + k] = t.dim(k);
  for (int k = 0; k < 3; ++k) {
    if (dims[k] != 1 && dims[k] != full[static_cast<size_t>(k)])
      ctx.fail(fmt::format("{} {} does not broadcast to (batch, q_heads, q_seq, total_seq) = [{},{},{},{}]",
                           what, rt::shape_str(t.shape()), full[0], full[1], full[2], full[3]));
  }
  if (dims[3] > full[3])
    ctx.fail(fmt::format("{} {} covers {} keys, more than the total sequence length {}", what,
                         rt::shape_str(t.shape()), dims[3], full[3]));
  AttnMask m;
  m.type = *type;
  m.p = t.raw();
  m.keys = dims[3];
  int64_t stride = 1;
  for (int k = 3; k >= 0; --k) {
    m.stride[k] = dims[k] == 1 && k < 3 ? 0 : stride;
    stride *= dims[k];
  }
  return m;
}

rt::Tensor upload_ints(rt::KernelContext& ctx, const int64_t* v, int64_t n) {
  rt::Tensor dev = ctx.scratch_uninitialized(rt::DataType::kInt64, {n});
  if (n > 0)
    check(cudaMemcpyAsync(dev.raw(), v, static_cast<size_t>(n) * sizeof(int64_t), cudaMemcpyHostToDevice,
                          native(ctx.stream())),
          ctx.info().op_type().c_str());
  return dev;
}

void run_attention(rt::KernelContext& ctx, const AttnParams& p) {
  if (p.batch * p.q_heads * p.q_seq == 0 || p.v_head == 0) return;
  const cudaStream_t s = native(ctx.stream());
  if (flash_attention_fits(p)) {
    ctx.set_path("flash");
    launch_flash_attention(p, s);
    check_launch(ctx);
    return;
  }
  ctx.set_path("rows");
  rt::Tensor scores =
      ctx.scratch_uninitialized(rt::DataType::kFloat, {p.batch * p.q_heads * p.q_seq, p.keys});
  launch_row_attention(p, static_cast<float*>(scores.raw()), s);
  check_launch(ctx);
}

}  // namespace tessera::cuda
