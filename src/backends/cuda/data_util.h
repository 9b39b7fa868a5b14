// Host-side helpers of the CUDA data kernels: storage sizes and scalar types of element types,
// broadcast layouts and the registration of each data-kernel family.
#pragma once

#include <optional>
#include <vector>

#include "backends/cuda/data_ops.h"
#include "backends/cuda/kernel_table.h"
#include "runtime/kernel.h"

namespace tessera::cuda {

// Bytes per element for types the copy kernels move (1, 2, 4, 8 bytes; not strings or sub-byte types).
std::optional<int> storage_bytes(rt::DataType t);
// storage_bytes of a tensor the kernel moves; fails the node naming the type when it moves none.
int storage_bytes_of(const rt::KernelContext& ctx, const rt::Tensor& t);
// The typed kernels' element type: float32/16, bfloat16, float64, (u)int8, int16, int32, int64, bool.
std::optional<ScalarType> scalar_type(rt::DataType t);
// Input i is present with a known element type the copy kernels move.
bool movable_input(const rt::KernelInfo& info, size_t i);
// Input i is present and known to be int32 or int64 (device index tensors).
bool index_input(const rt::KernelInfo& info, size_t i);
// Up to three inputs broadcast to `out` (throws KernelError past kMaxRank dimensions).
Broadcast3 broadcast3(const rt::Shape& out, const std::vector<const rt::Shape*>& ins);
// Row-major strides of a shape.
std::vector<int64_t> row_strides(const rt::Shape& s);
// A strided copy of every element of `dims` (rank up to kCopyRank, KernelError beyond).
StridedCopy strided(const rt::Shape& dims, const std::vector<int64_t>& src, const std::vector<int64_t>& dst);
// An axis normalised against rank (negative counts from the back); KernelError naming `what` when out.
int64_t axis_of(int64_t axis, int64_t rank, const char* what = "axis");

void register_view_kernels(KernelTable& t);   // data_view_kernels.cpp
void register_copy_kernels(KernelTable& t);   // data_copy_kernels.cpp
void register_index_kernels(KernelTable& t);  // data_index_kernels.cpp
void register_typed_kernels(KernelTable& t);  // data_typed_kernels.cpp
void register_misc_kernels(KernelTable& t);   // data_misc_kernels.cpp

}  // namespace tessera::cuda
