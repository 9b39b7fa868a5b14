// Host-side helpers of the reduction, softmax and normalisation kernels: element types, rank checks for
// `supports`, axis normalisation and the registration functions of the families beside the reductions.
#pragma once

#include <optional>
#include <string_view>

#include "backends/cuda/kernel_table.h"
#include "backends/cuda/reduce_ops.h"
#include "runtime/kernel.h"

namespace tessera::cuda {

// The element types the reductions are instantiated for; nullopt for the others.
std::optional<NumType> num_type(rt::DataType t);
// float32, float16, bfloat16, int32, int64: the types ArgMax/ArgMin and TopK take.
bool common_num_type(rt::DataType t);

// Input i is a tensor whose rank inference knows, within [min_rank, kMaxRank].
bool rank_known(const rt::KernelInfo& info, size_t i, int min_rank);
// Like rank_known, but an input whose rank inference could not tell is taken too (the kernel checks the
// rank it gets): expanded functions reshape through computed shapes.
bool rank_fits(const rt::KernelInfo& info, size_t i, int min_rank);

// Input i's rank when known (-1 otherwise).
int input_rank(const rt::KernelInfo& info, size_t i);

// Inputs [first, last] that are present have input 0's element type (one of the float types).
bool float_like_input0(const rt::KernelInfo& info, size_t first, size_t last);

// `axis` in [-rank, rank) made non-negative; KernelError naming `what` otherwise.
int64_t normalized_axis(int64_t axis, int64_t rank, std::string_view what = "axis");

void register_softmax_kernels(KernelTable& t);       // softmax_kernels.cpp
void register_norm_kernels(KernelTable& t);          // norm_kernels.cpp
void register_top_k_kernels(KernelTable& t);         // reduce_topk_kernels.cpp
void register_norm_contrib_kernels(KernelTable& t);  // norm_contrib_kernels.cpp
void register_softmax_loss_kernels(KernelTable& t);  // softmax_loss_kernels.cpp

}  // namespace tessera::cuda
