// Device launches of the data-movement kernels (Transpose, Slice, Expand, Concat, Gather, Scatter, Pad,
// Where...). They move elements as raw storage of 1, 2, 4 or 8 bytes, so one instantiation serves every
// element type of that size; index tensors are int32 or int64 on the device.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::cuda {

// A type as a value, for the generic lambdas that dispatch over element types (C++17 for nvcc).
template <class T>
struct Tag {
  using type = T;
};

inline constexpr int kCopyRank = 16;  // Tile views rank r as 2r dimensions

// dst[dst_base + sum idx_d * dst[d]] = src[src_base + sum idx_d * src[d]] for every index of dims
// (strides in elements, negative for reversed slices).
struct StridedCopy {
  int rank = 0;
  int64_t dims[kCopyRank] = {};
  int64_t src[kCopyRank] = {};
  int64_t dst[kCopyRank] = {};
  int64_t src_base = 0, dst_base = 0;
};

// Merges dimensions that are contiguous in both source and destination and drops those of size 1,
// so that the kernel's index arithmetic runs over as few dimensions as possible.
StridedCopy simplify(const StridedCopy& c);
void launch_strided_copy(int elem_bytes, const void* src, void* dst, const StridedCopy& c, cudaStream_t s);
// out[b][c][r] = in[b][r][c] for `batch` row-major rows x cols matrices, tiled through shared memory.
void launch_transpose_tiles(int elem_bytes, const void* src, void* dst, int64_t batch, int64_t rows,
                            int64_t cols, cudaStream_t s);
// n elements of elem_bytes each set to the low bytes of `pattern`.
void launch_fill(int elem_bytes, void* dst, int64_t n, uint64_t pattern, cudaStream_t s);

enum class PadMode { kConstant, kReflect, kEdge, kWrap };
struct PadShape {
  int rank = 0;
  int64_t out_dims[8] = {};
  int64_t in_dims[8] = {};
  int64_t before[8] = {};  // negative crops
};
void launch_pad(int elem_bytes, PadMode mode, const void* src, void* dst, const PadShape& p, uint64_t value,
                cudaStream_t s);

// Gather along an axis: data viewed as [outer, axis_dim, inner], out as [outer, nidx, inner]. Indices
// out of [-axis_dim, axis_dim) give zeros (the host cannot see device indices without a sync).
void launch_gather(int elem_bytes, const void* data, const void* idx, bool idx64, void* out, int64_t outer,
                   int64_t axis_dim, int64_t nidx, int64_t inner, cudaStream_t s);

// GatherElements / ScatterElements: the index tensor's shape, the data tensor's strides and the axis.
struct IndexShape {
  int rank = 0;
  int axis = 0;
  int64_t axis_dim = 0;
  int64_t dims[8] = {};          // the indices' (and updates') shape
  int64_t data_strides[8] = {};  // the data's row-major strides
};
void launch_gather_elements(int elem_bytes, const void* data, const void* idx, bool idx64, void* out,
                            const IndexShape& s, int64_t n, cudaStream_t s_);

enum class ScatterReduce { kNone, kAdd, kMul, kMax, kMin };
// Element types the reductions take.
enum class ScalarType {
  kFloat,
  kHalf,
  kBFloat16,
  kDouble,
  kInt8,
  kUint8,
  kInt16,
  kUint16,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kBool
};
// `out` already holds a copy of the data; the updates land at their indices.
void launch_scatter_elements(ScalarType t, int elem_bytes, ScatterReduce r, const void* idx, bool idx64,
                             const void* upd, void* out, const IndexShape& s, int64_t n, cudaStream_t st);

// GatherND with batch_dims: indices [batch..., q..., k]; the data's dims after batch... are addressed
// by k indices, then a slice of `slice` elements is copied.
struct NdShape {
  int k = 0;
  int64_t batch = 1;         // product of the batch dimensions
  int64_t q = 1;             // index tuples per batch
  int64_t slice = 1;         // elements per addressed slice
  int64_t batch_stride = 0;  // data elements per batch
  int64_t dims[8] = {};      // data dims addressed by the k indices
  int64_t strides[8] = {};   // their strides in elements
};
void launch_gather_nd(int elem_bytes, const void* data, const void* idx, void* out, const NdShape& s,
                      cudaStream_t st);
// ScatterND (batch 1): `out` already holds the data; `upd` is [q, slice].
void launch_scatter_nd(ScalarType t, int elem_bytes, ScatterReduce r, const void* idx, const void* upd,
                       void* out, const NdShape& s, cudaStream_t st);

// Three-input broadcast layout (Where's condition, x, y; two for the comparisons).
struct Broadcast3 {
  int rank = 0;
  bool flat = false;  // every input has the output's shape
  int64_t dims[8] = {};
  int64_t s[3][8] = {};
};
void launch_where(int elem_bytes, const bool* cond, const void* x, const void* y, void* out, int64_t n,
                  const Broadcast3& b, cudaStream_t st);

// Trilu over the last two dims (rows x cols) of `batch` matrices; keeps j - i >= k (upper) or <= k.
void launch_trilu(int elem_bytes, const void* src, void* dst, int64_t batch, int64_t rows, int64_t cols,
                  int64_t k, bool upper, cudaStream_t st);

// ReverseSequence on x viewed as [d0, d1, inner] with (batch, time) = (d0, d1) when batch_first, else
// (d1, d0): the first lens[b] steps of each batch entry reversed (lengths clamped to [0, steps]).
void launch_reverse_sequence(int elem_bytes, const void* x, const int64_t* lens, void* y, int64_t d0,
                             int64_t d1, int64_t inner, bool batch_first, cudaStream_t st);

}  // namespace tessera::cuda
