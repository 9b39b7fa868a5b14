// Host-side helpers shared by the CUDA Attention and FusedAttention kernels: mask checks and strides,
// small host arrays copied to the device, and the choice between the flash and the row kernel.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "backends/cuda/attention_ops.h"
#include "runtime/kernel.h"

namespace tessera::cuda {

class KernelTable;

// The mask element types the kernels read: float32, float16, bfloat16 and bool; nullopt otherwise.
std::optional<MaskType> mask_type(rt::DataType t);

// A mask of rank 1 to 4 broadcast to `full` = (batch, q_heads, q_seq, keys): its last axis may be
// shorter than keys (the rest is masked), the others must be 1 or full. Fails naming `what` otherwise.
AttnMask attention_mask(const rt::KernelContext& ctx, const rt::Tensor& m, const std::array<int64_t, 4>& full,
                        const char* what);

// `n` int64 host values copied to device scratch (queued on the kernel's stream; the caller keeps the
// returned tensor until the kernels reading it are queued).
rt::Tensor upload_ints(rt::KernelContext& ctx, const int64_t* v, int64_t n);

// Queues the flash kernel when it fits the parameters, else the row kernel (with its scratch).
void run_attention(rt::KernelContext& ctx, const AttnParams& p);

// com.tessera FusedAttention (attention_fused_kernels.cpp).
void register_fused_attention_kernel(KernelTable& t);

}  // namespace tessera::cuda
