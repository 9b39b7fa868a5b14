// Data-movement kernels over raw storage (see data_ops.h): strided copies, tiled transposes, fills, pads,
// gathers, Where and Trilu.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "backends/cuda/data_ops.h"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/type_dispatch.cuh"

namespace tessera::cuda {

namespace {

constexpr int kThreads = 256;

// by_size, and 16-byte words for the copies that move whole vectors.
template <class F>
void by_word(int bytes, F&& f) {
  if (bytes == 16) return f(Tag<uint4>{});
  by_size(bytes, f);
}

// One element per thread (grid-stride); I is int32_t when every index and offset fits, which makes the
// per-dimension division several times cheaper than in 64 bits.
template <class S, class I>
__global__ void strided_copy_kernel(const S* __restrict__ src, S* __restrict__ dst, I n, StridedCopy c) {
  for (I i = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x); i < n;
       i += static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x)) {
    I rest = i, so = 0, dof = 0;
    for (int d = c.rank - 1; d >= 0; --d) {
      const I dim = static_cast<I>(c.dims[d]);
      const I idx = rest % dim;
      rest /= dim;
      so += idx * static_cast<I>(c.src[d]);
      dof += idx * static_cast<I>(c.dst[d]);
    }
    dst[dof] = src[so];
  }
}

constexpr int kTileRows = 8;

// One kTile x kTile tile per block of 32 x kTileRows threads: coalesced reads of rows into shared memory,
// coalesced writes of columns. The padding avoids shared-memory bank conflicts on the transposed read.
// Elements of 1 or 2 bytes use 64 x 64 tiles, so that each thread keeps 16 loads in flight and each
// warp reads whole 128-byte lines.
template <class S, int kTile>
__global__ void transpose_tile_kernel(const S* __restrict__ src, S* __restrict__ dst, int64_t rows,
                                      int64_t cols, int64_t tiles_r, int64_t tiles_c, int64_t batch) {
  constexpr int kPad = sizeof(S) >= 4 ? 1 : 4 / sizeof(S);  // rows start in successive banks
  __shared__ S tile[kTile][kTile + kPad];
  const int64_t per_matrix = tiles_r * tiles_c;
  for (int64_t t = blockIdx.x; t < per_matrix * batch; t += gridDim.x) {
    const int64_t b = t / per_matrix, tr = (t % per_matrix) / tiles_c, tc = t % tiles_c;
    const S* in = src + b * rows * cols;
    S* out = dst + b * rows * cols;
#pragma unroll
    for (int x = threadIdx.x; x < kTile; x += 32) {
      const int64_t c = tc * kTile + x;
#pragma unroll
      for (int j = threadIdx.y; j < kTile; j += kTileRows) {
        const int64_t r = tr * kTile + j;
        if (r < rows && c < cols) tile[j][x] = in[r * cols + c];
      }
    }
    __syncthreads();
#pragma unroll
    for (int x = threadIdx.x; x < kTile; x += 32) {
      const int64_t oc = tr * kTile + x;  // column of the output = row of the input
#pragma unroll
      for (int j = threadIdx.y; j < kTile; j += kTileRows) {
        const int64_t orow = tc * kTile + j;
        if (orow < cols && oc < rows) out[orow * rows + oc] = tile[x][j];
      }
    }
    __syncthreads();
  }
}

// Transposes with a short side, which square tiles would leave partly empty. [batch, few, cols] with
// few up to kFewMax (an image's 3 channels: NCHW -> NHWC): a block moves `pitch` whole columns through
// shared memory, reading `few` runs of `pitch` and writing one contiguous run of pitch * few.
constexpr int kFewMax = 16;

// [batch, few, cols] -> [batch, cols, few].
template <class S>
__global__ void transpose_few_rows_kernel(const S* __restrict__ src, S* __restrict__ dst, int few,
                                          int64_t cols, int pitch, int64_t chunks, int64_t batch) {
  __shared__ S tile[16384 / sizeof(S)];
  for (int64_t t = blockIdx.x; t < chunks * batch; t += gridDim.x) {
    const int64_t b = t / chunks, c0 = (t % chunks) * pitch;
    const int span = static_cast<int>(cols - c0 < pitch ? cols - c0 : pitch);
    const S* in = src + b * few * cols + c0;
    for (int r = 0; r < few; ++r)
      for (int k = threadIdx.x; k < span; k += blockDim.x) tile[r * pitch + k] = in[r * cols + k];
    __syncthreads();
    S* out = dst + (b * cols + c0) * few;
    for (int o = threadIdx.x; o < span * few; o += blockDim.x) {
      const int k = o / few;
      out[o] = tile[(o - k * few) * pitch + k];
    }
    __syncthreads();
  }
}

// [batch, rows, few] -> [batch, few, rows] for few up to kFewColsMax (K^T of 64-wide heads, NHWC ->
// NCHW of an image): a block reads `span` whole rows (one contiguous run) into a tile whose rows are
// `ld` elements apart, ld chosen on the host so that a column read (consecutive rows, one column) walks
// across the banks, then writes `few` contiguous runs of `span`. The (row, column) of a thread's
// element advances by a constant step, so neither loop divides.
constexpr int kFewColsMax = 64;

template <class S>
__global__ void transpose_few_cols_kernel(const S* __restrict__ src, S* __restrict__ dst, int64_t rows,
                                          int few, int ld, int span, int64_t chunks, int64_t batch) {
  __shared__ S tile[16384 / sizeof(S)];
  const int step = static_cast<int>(blockDim.x);
  for (int64_t t = blockIdx.x; t < chunks * batch; t += gridDim.x) {
    const int64_t b = t / chunks, r0 = (t % chunks) * span;
    const int n = static_cast<int>(rows - r0 < span ? rows - r0 : span);
    const S* in = src + (b * rows + r0) * few;
    int k = static_cast<int>(threadIdx.x) / few, c = static_cast<int>(threadIdx.x) % few;
    for (int o = threadIdx.x; o < n * few; o += step) {
      tile[k * ld + c] = in[o];
      k += step / few;
      c += step % few;
      if (c >= few) c -= few, ++k;
    }
    __syncthreads();
    S* out = dst + b * few * rows + r0;
    k = static_cast<int>(threadIdx.x) % n;
    c = static_cast<int>(threadIdx.x) / n;
    for (int o = threadIdx.x; o < n * few; o += step) {
      out[c * rows + k] = tile[k * ld + c];
      k += step % n;
      c += step / n;
      if (k >= n) k -= n, ++c;
    }
    __syncthreads();
  }
}

// The tile's row pitch for `few` columns of S: the pitch in 4-byte words odd (8-byte elements: an odd
// count), so that consecutive rows of one column fall in different banks.
int few_cols_pitch(int few, int elem_bytes) {
  for (int ld = few;; ++ld) {
    if (elem_bytes >= 8) {
      if (ld % 2 == 1) return ld;
    } else if ((ld * elem_bytes) % 4 == 0 && (ld * elem_bytes / 4) % 2 == 1) {
      return ld;
    }
  }
}

template <class S>
__global__ void fill_kernel(S* dst, int64_t n, S v) {
  TESSERA_GRID_LOOP(i, n) dst[i] = v;
}

// Where output index `o` along a dimension of `n` input elements reads, or -1 for the constant.
__device__ __forceinline__ int64_t pad_source(PadMode m, int64_t o, int64_t n) {
  if (o >= 0 && o < n) return o;
  if (m == PadMode::kConstant || n == 0) return -1;
  if (m == PadMode::kEdge) return o < 0 ? 0 : n - 1;
  if (m == PadMode::kWrap) return ((o % n) + n) % n;
  if (n == 1) return 0;
  const int64_t period = 2 * (n - 1);  // reflect: ... 2 1 [0 1 2 ... n-1] n-2 ...
  int64_t p = ((o % period) + period) % period;
  return p < n ? p : period - p;
}

template <class S>
__global__ void pad_kernel(const S* src, S* dst, int64_t n, PadShape p, PadMode m, S value) {
  TESSERA_GRID_LOOP(i, n) {
    int64_t rest = i, off = 0, stride = 1;
    bool constant = false;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t o = rest % p.out_dims[d] - p.before[d];
      rest /= p.out_dims[d];
      const int64_t s = pad_source(m, o, p.in_dims[d]);
      if (s < 0) constant = true;
      off += s * stride;
      stride *= p.in_dims[d];
    }
    dst[i] = constant ? value : src[off];
  }
}

template <class I>
__device__ __forceinline__ int64_t index_at(const void* idx, int64_t i) {
  return static_cast<int64_t>(static_cast<const I*>(idx)[i]);
}

// N is the type of element indices and offsets: int32_t when they fit (cheaper divisions).
template <class S, class I, class N>
__global__ void gather_kernel(const S* __restrict__ data, const I* __restrict__ idx, S* __restrict__ out, N n,
                              N axis_dim, N nidx, N inner) {
  for (N i = static_cast<N>(blockIdx.x) * static_cast<N>(blockDim.x) + static_cast<N>(threadIdx.x); i < n;
       i += static_cast<N>(gridDim.x) * static_cast<N>(blockDim.x)) {
    const N in = i % inner, row = i / inner, j = row % nidx, o = row / nidx;
    int64_t k = static_cast<int64_t>(idx[j]);
    if (k < 0) k += axis_dim;
    out[i] = (k >= 0 && k < axis_dim) ? data[(o * axis_dim + static_cast<N>(k)) * inner + in] : S{};
  }
}

// Offset into the data of element i of the index tensor, with the axis coordinate taken from the
// index (-1 when it is out of range).
template <class I>
__device__ __forceinline__ int64_t element_offset(const I* idx, int64_t i, const IndexShape& s) {
  int64_t rest = i, off = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    int64_t c = rest % s.dims[d];
    rest /= s.dims[d];
    if (d == s.axis) {
      c = static_cast<int64_t>(idx[i]);
      if (c < 0) c += s.axis_dim;
      if (c < 0 || c >= s.axis_dim) return -1;
    }
    off += c * s.data_strides[d];
  }
  return off;
}

template <class S, class I>
__global__ void gather_elements_kernel(const S* data, const I* idx, S* out, int64_t n, IndexShape s) {
  TESSERA_GRID_LOOP(i, n) {
    const int64_t off = element_offset(idx, i, s);
    out[i] = off >= 0 ? data[off] : S{};
  }
}

template <class S, class I>
__global__ void gather_nd_kernel(const S* data, const I* idx, S* out, int64_t n, NdShape s) {
  TESSERA_GRID_LOOP(i, n) {
    const int64_t e = i % s.slice, tuple = i / s.slice, b = tuple / s.q;
    int64_t off = b * s.batch_stride + e;
    bool ok = true;
    for (int j = 0; j < s.k; ++j) {
      int64_t c = static_cast<int64_t>(idx[tuple * s.k + j]);
      if (c < 0) c += s.dims[j];
      ok = ok && c >= 0 && c < s.dims[j];
      off += c * s.strides[j];
    }
    out[i] = ok ? data[off] : S{};
  }
}

// N: the index type, int32_t when the output and every input fit (cheaper divisions).
template <class S, class N>
__global__ void where_kernel(const bool* __restrict__ cond, const S* __restrict__ x, const S* __restrict__ y,
                             S* __restrict__ out, N n, Broadcast3 b) {
  for (N i = static_cast<N>(blockIdx.x) * static_cast<N>(blockDim.x) + static_cast<N>(threadIdx.x); i < n;
       i += static_cast<N>(gridDim.x) * static_cast<N>(blockDim.x)) {
    N o0 = i, o1 = i, o2 = i;
    if (!b.flat) {
      N rest = i;
      o0 = o1 = o2 = 0;
      for (int d = b.rank - 1; d >= 0; --d) {
        const N dim = static_cast<N>(b.dims[d]);
        const N c = rest % dim;
        rest /= dim;
        o0 += c * static_cast<N>(b.s[0][d]);
        o1 += c * static_cast<N>(b.s[1][d]);
        o2 += c * static_cast<N>(b.s[2][d]);
      }
    }
    out[i] = cond[o0] ? x[o1] : y[o2];
  }
}

template <class S>
__global__ void trilu_kernel(const S* src, S* dst, int64_t n, int64_t rows, int64_t cols, int64_t k,
                             bool upper) {
  TESSERA_GRID_LOOP(i, n) {
    const int64_t c = i % cols, r = (i / cols) % rows;
    const bool keep = upper ? c - r >= k : c - r <= k;
    dst[i] = keep ? src[i] : S{};
  }
}

template <class S>
__global__ void reverse_sequence_kernel(const S* x, const int64_t* lens, S* y, int64_t n, int64_t d0,
                                        int64_t d1, int64_t inner, bool batch_first) {
  TESSERA_GRID_LOOP(i, n) {
    const int64_t e = i % inner, i1 = (i / inner) % d1, i0 = i / (inner * d1);
    const int64_t b = batch_first ? i0 : i1, t = batch_first ? i1 : i0, steps = batch_first ? d1 : d0;
    int64_t len = lens[b];
    len = len < 0 ? 0 : (len > steps ? steps : len);
    const int64_t from = t < len ? len - 1 - t : t;
    const int64_t f0 = batch_first ? i0 : from, f1 = batch_first ? from : i1;
    y[i] = x[(f0 * d1 + f1) * inner + e];
  }
}

}  // namespace

void launch_reverse_sequence(int elem_bytes, const void* x, const int64_t* lens, void* y, int64_t d0,
                             int64_t d1, int64_t inner, bool batch_first, cudaStream_t s) {
  const int64_t n = d0 * d1 * inner;
  if (n == 0) return;
  by_size(elem_bytes, [&](auto tag_S) {
    using S = typename decltype(tag_S)::type;
    reverse_sequence_kernel<S><<<grid_for(n), kThreads, 0, s>>>(
        static_cast<const S*>(x), lens, static_cast<S*>(y), n, d0, d1, inner, batch_first);
  });
}

StridedCopy simplify(const StridedCopy& c) {
  StridedCopy r;
  r.src_base = c.src_base;
  r.dst_base = c.dst_base;
  for (int d = 0; d < c.rank; ++d) {
    if (c.dims[d] == 1) continue;
    if (r.rank > 0 && r.src[r.rank - 1] == c.src[d] * c.dims[d] &&
        r.dst[r.rank - 1] == c.dst[d] * c.dims[d]) {
      r.dims[r.rank - 1] *= c.dims[d];
      r.src[r.rank - 1] = c.src[d];
      r.dst[r.rank - 1] = c.dst[d];
      continue;
    }
    r.dims[r.rank] = c.dims[d];
    r.src[r.rank] = c.src[d];
    r.dst[r.rank] = c.dst[d];
    ++r.rank;
  }
  return r;
}

namespace {

// Moves words of `v` bytes instead of elements when the innermost dimension is contiguous on both
// sides and every stride, its length and both pointers allow it; returns the word size used.
int widen(StridedCopy& k, int elem_bytes, const void* in, const void* out) {
  const int last = k.rank - 1;
  if (last < 0 || k.src[last] != 1 || k.dst[last] != 1) return elem_bytes;
  for (int v = 16; v > elem_bytes; v /= 2) {
    const int f = v / elem_bytes;
    bool ok = k.dims[last] % f == 0 && reinterpret_cast<uintptr_t>(in) % v == 0 &&
              reinterpret_cast<uintptr_t>(out) % v == 0;
    for (int d = 0; d < last && ok; ++d) ok = k.src[d] % f == 0 && k.dst[d] % f == 0;
    if (!ok) continue;
    k.dims[last] /= f;
    for (int d = 0; d < last; ++d) {
      k.src[d] /= f;
      k.dst[d] /= f;
    }
    return v;
  }
  return elem_bytes;
}

// Whether every element index and offset of the copy fits in int32.
bool fits_int32(const StridedCopy& k, int64_t n) {
  int64_t so = 0, dof = 0;
  for (int d = 0; d < k.rank; ++d) {
    so += (k.dims[d] - 1) * (k.src[d] < 0 ? -k.src[d] : k.src[d]);
    dof += (k.dims[d] - 1) * (k.dst[d] < 0 ? -k.dst[d] : k.dst[d]);
  }
  // The grid-stride step (at most 2^29) must not overflow either.
  return n < (int64_t{1} << 30) && so < INT32_MAX && dof < INT32_MAX;
}

}  // namespace

void launch_strided_copy(int elem_bytes, const void* src, void* dst, const StridedCopy& c, cudaStream_t s) {
  int64_t n = 1;
  for (int d = 0; d < c.rank; ++d) n *= c.dims[d];
  if (n == 0) return;
  StridedCopy k = simplify(c);
  const char* in = static_cast<const char*>(src) + k.src_base * elem_bytes;
  char* out = static_cast<char*>(dst) + k.dst_base * elem_bytes;
  k.src_base = k.dst_base = 0;
  if (k.rank == 0 || (k.rank == 1 && k.src[0] == 1 && k.dst[0] == 1)) {
    cudaMemcpyAsync(out, in, static_cast<size_t>(n) * elem_bytes, cudaMemcpyDeviceToDevice, s);
    return;
  }
  const int word = widen(k, elem_bytes, in, out);
  n = n / (word / elem_bytes);
  by_word(word, [&](auto tag_S) {
    using S = typename decltype(tag_S)::type;
    if (fits_int32(k, n))
      strided_copy_kernel<S, int32_t><<<grid_for(n), kThreads, 0, s>>>(
          reinterpret_cast<const S*>(in), reinterpret_cast<S*>(out), static_cast<int32_t>(n), k);
    else
      strided_copy_kernel<S, int64_t>
          <<<grid_for(n), kThreads, 0, s>>>(reinterpret_cast<const S*>(in), reinterpret_cast<S*>(out), n, k);
  });
}

void launch_transpose_tiles(int elem_bytes, const void* src, void* dst, int64_t batch, int64_t rows,
                            int64_t cols, cudaStream_t s) {
  if (batch * rows * cols == 0) return;
  if (rows <= kFewMax) {
    by_size(elem_bytes, [&](auto tag_S) {
      using S = typename decltype(tag_S)::type;
      // Columns a block moves: what 16 KB holds, down to about 2 blocks a thread slot of an H100 (132 SMs
      // x 8 blocks of 256) but not below 256; more columns a block keep more loads in flight a thread.
      const int few = static_cast<int>(rows);
      const int64_t most = static_cast<int64_t>(16384 / sizeof(S)) / few;
      const int64_t share = ((batch * cols + 2111) / 2112 + 63) / 64 * 64;
      const auto pitch = static_cast<int>(std::min<int64_t>(most, std::max<int64_t>(256, share)));
      const int64_t chunks = (cols + pitch - 1) / pitch;
      const auto grid = static_cast<unsigned>(std::min<int64_t>(chunks * batch, int64_t{65535} * 16));
      transpose_few_rows_kernel<S><<<grid, kThreads, 0, s>>>(static_cast<const S*>(src), static_cast<S*>(dst),
                                                             few, cols, pitch, chunks, batch);
    });
    return;
  }
  if (cols <= kFewColsMax) {
    by_size(elem_bytes, [&](auto tag_S) {
      using S = typename decltype(tag_S)::type;
      const int few = static_cast<int>(cols);
      const int ld = few_cols_pitch(few, static_cast<int>(sizeof(S)));
      const int span = static_cast<int>(16384 / sizeof(S)) / ld;
      const int64_t chunks = (rows + span - 1) / span;
      const auto grid = static_cast<unsigned>(std::min<int64_t>(chunks * batch, int64_t{65535} * 16));
      transpose_few_cols_kernel<S><<<grid, kThreads, 0, s>>>(static_cast<const S*>(src), static_cast<S*>(dst),
                                                             rows, few, ld, span, chunks, batch);
    });
    return;
  }
  auto launch = [&](auto tile_size) {
    constexpr int kTile = decltype(tile_size)::value;
    const int64_t tr = (rows + kTile - 1) / kTile, tc = (cols + kTile - 1) / kTile;
    const int64_t tiles = tr * tc * batch;
    const unsigned grid = static_cast<unsigned>(tiles < 65535 * 16 ? tiles : 65535 * 16);
    by_size(elem_bytes, [&](auto tag_S) {
      using S = typename decltype(tag_S)::type;
      transpose_tile_kernel<S, kTile><<<grid, dim3(32, kTileRows), 0, s>>>(
          static_cast<const S*>(src), static_cast<S*>(dst), rows, cols, tr, tc, batch);
    });
  };
  if (elem_bytes <= 2)
    launch(std::integral_constant<int, 64>{});
  else
    launch(std::integral_constant<int, 32>{});
}

void launch_fill(int elem_bytes, void* dst, int64_t n, uint64_t pattern, cudaStream_t s) {
  if (n == 0) return;
  by_size(elem_bytes, [&](auto tag_S) {
    using S = typename decltype(tag_S)::type;
    fill_kernel<S><<<grid_for(n), kThreads, 0, s>>>(static_cast<S*>(dst), n, static_cast<S>(pattern));
  });
}

void launch_pad(int elem_bytes, PadMode mode, const void* src, void* dst, const PadShape& p, uint64_t value,
                cudaStream_t s) {
  int64_t n = 1;
  for (int d = 0; d < p.rank; ++d) n *= p.out_dims[d];
  if (n == 0) return;
  by_size(elem_bytes, [&](auto tag_S) {
    using S = typename decltype(tag_S)::type;
    pad_kernel<S><<<grid_for(n), kThreads, 0, s>>>(static_cast<const S*>(src), static_cast<S*>(dst), n, p,
                                                   mode, static_cast<S>(value));
  });
}

void launch_gather(int elem_bytes, const void* data, const void* idx, bool idx64, void* out, int64_t outer,
                   int64_t axis_dim, int64_t nidx, int64_t inner, cudaStream_t s) {
  if (outer * nidx * inner == 0) return;
  // Rows of `inner` elements move as 16-, 8- or 4-byte words where their length and the pointers allow.
  int word = elem_bytes;
  for (int v = 16; v > elem_bytes; v /= 2) {
    if ((inner * elem_bytes) % v == 0 && reinterpret_cast<uintptr_t>(data) % v == 0 &&
        reinterpret_cast<uintptr_t>(out) % v == 0) {
      word = v;
      break;
    }
  }
  inner = inner * elem_bytes / word;
  const int64_t n = outer * nidx * inner;
  const bool small = n < (int64_t{1} << 30) && outer * axis_dim * inner < INT32_MAX;
  by_word(word, [&](auto tag_S) {
    using S = typename decltype(tag_S)::type;
    auto* d = static_cast<const S*>(data);
    auto* o = static_cast<S*>(out);
    auto go = [&](auto tag_I) {
      using I = typename decltype(tag_I)::type;
      const I* ix = static_cast<const I*>(idx);
      if (small)
        gather_kernel<S, I, int32_t><<<grid_for(n), kThreads, 0, s>>>(
            d, ix, o, static_cast<int32_t>(n), static_cast<int32_t>(axis_dim), static_cast<int32_t>(nidx),
            static_cast<int32_t>(inner));
      else
        gather_kernel<S, I, int64_t><<<grid_for(n), kThreads, 0, s>>>(d, ix, o, n, axis_dim, nidx, inner);
    };
    if (idx64)
      go(Tag<int64_t>{});
    else
      go(Tag<int32_t>{});
  });
}

void launch_gather_elements(int elem_bytes, const void* data, const void* idx, bool idx64, void* out,
                            const IndexShape& sh, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  by_size(elem_bytes, [&](auto tag_S) {
    using S = typename decltype(tag_S)::type;
    auto* d = static_cast<const S*>(data);
    auto* o = static_cast<S*>(out);
    if (idx64)
      gather_elements_kernel<S, int64_t>
          <<<grid_for(n), kThreads, 0, s>>>(d, static_cast<const int64_t*>(idx), o, n, sh);
    else
      gather_elements_kernel<S, int32_t>
          <<<grid_for(n), kThreads, 0, s>>>(d, static_cast<const int32_t*>(idx), o, n, sh);
  });
}

void launch_gather_nd(int elem_bytes, const void* data, const void* idx, void* out, const NdShape& sh,
                      cudaStream_t s) {
  const int64_t n = sh.batch * sh.q * sh.slice;
  if (n == 0) return;
  by_size(elem_bytes, [&](auto tag_S) {
    using S = typename decltype(tag_S)::type;
    gather_nd_kernel<S, int64_t><<<grid_for(n), kThreads, 0, s>>>(
        static_cast<const S*>(data), static_cast<const int64_t*>(idx), static_cast<S*>(out), n, sh);
  });
}

void launch_where(int elem_bytes, const bool* cond, const void* x, const void* y, void* out, int64_t n,
                  const Broadcast3& b, cudaStream_t s) {
  if (n == 0) return;
  by_size(elem_bytes, [&](auto tag_S) {
    using S = typename decltype(tag_S)::type;
    // Broadcast inputs are no larger than the output, so its size bounds every offset.
    if (n < (int64_t{1} << 30))
      where_kernel<S, int32_t>
          <<<grid_for(n), kThreads, 0, s>>>(cond, static_cast<const S*>(x), static_cast<const S*>(y),
                                            static_cast<S*>(out), static_cast<int32_t>(n), b);
    else
      where_kernel<S, int64_t><<<grid_for(n), kThreads, 0, s>>>(
          cond, static_cast<const S*>(x), static_cast<const S*>(y), static_cast<S*>(out), n, b);
  });
}

void launch_trilu(int elem_bytes, const void* src, void* dst, int64_t batch, int64_t rows, int64_t cols,
                  int64_t k, bool upper, cudaStream_t s) {
  const int64_t n = batch * rows * cols;
  if (n == 0) return;
  by_size(elem_bytes, [&](auto tag_S) {
    using S = typename decltype(tag_S)::type;
    trilu_kernel<S><<<grid_for(n), kThreads, 0, s>>>(static_cast<const S*>(src), static_cast<S*>(dst), n,
                                                     rows, cols, k, upper);
  });
}

}  // namespace tessera::cuda
