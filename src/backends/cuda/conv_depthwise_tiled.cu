// The tiled depthwise 3x3 kernel (conv_depthwise.h): each thread block takes a spatial tile of outputs
// for a chunk of channel vectors, loads the tile's input (halo included, zeros for the padding) into
// shared memory once with 16-byte loads, and each thread then computes a row of four outputs of one
// channel vector from shared memory, with its 3x3 x V weights in registers: a column of input loaded
// once serves every output of the row it touches (3 columns per output at stride 1 instead of 9 loads).
// The older kernel (one thread per output, nine global loads and 9 x V scalar weight loads each) reached
// ~1.1 TB/s on MobileNetV2's shapes.
#include "backends/cuda/conv_depthwise_tiled.h"
#include "backends/cuda/conv_epilogue.cuh"
#include "backends/cuda/device_types.cuh"

namespace tessera::cuda {

// 16-byte copies from global to shared memory that do not hold registers (cp.async, sm_80+): the whole
// tile is in flight at once. `valid` false writes zeros (a source size of 0) without reading `src`.
namespace async_copy {

__device__ __forceinline__ void copy16(void* smem, const void* src, bool valid) {
  const auto dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void wait_all() {
  asm volatile("cp.async.wait_all;\n" ::);
}

}  // namespace async_copy

namespace {

constexpr int kK = 3;    // window
constexpr int kRow = 4;  // outputs per thread, consecutive along W
constexpr int kTileW = 8;
constexpr int kMaxChunk = 16;  // channel vectors per block

template <int S>
struct Tile {
  static constexpr int h = S == 1 ? 8 : 4;  // output rows
  static constexpr int w = kTileW;          // output columns
  static constexpr int in_h = (h - 1) * S + kK;
  static constexpr int in_w = (w - 1) * S + kK;
  static constexpr int slots = h * (w / kRow);  // threads per channel vector
};

template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// Bytes of the input tile in shared memory, rounded up so that the weights after it are 16-byte aligned.
template <class T, int V, int S>
__host__ __device__ constexpr int tile_bytes(int cb) {
  return (static_cast<int>(sizeof(Vec<T, V>)) * Tile<S>::in_h * Tile<S>::in_w * cb + 15) / 16 * 16;
}

// Grid: x = (n, tile row, tile column), y = channel chunk. Block: x = channel vector in the chunk (`cb`
// of them), y = one row of kRow outputs of the tile. Dynamic shared memory: the input tile,
// [in_h][in_w][cb] vectors, then the chunk's weights as float [tap][cb * V] (read back 16 bytes at a time
// without bank conflicts).
template <class T, int V, int S>
__global__ void __launch_bounds__(kMaxChunk* Tile<S>::slots)
    depthwise3x3_tiled(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                       const T* __restrict__ z, T* __restrict__ y, Depthwise g, Epilogue e, int cb,
                       int tiles_w, int tiles_h) {
  using Tl = Tile<S>;
  using VecT = Vec<T, V>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  VecT* tile = reinterpret_cast<VecT*>(smem_raw);

  const int cv = static_cast<int>(g.channels / V);
  int rest = blockIdx.x;
  const int tx = rest % tiles_w;
  rest /= tiles_w;
  const int ty = rest % tiles_h;
  const int n = rest / tiles_h;
  const int oy0 = ty * Tl::h, ox0 = tx * Tl::w;
  const int iy0 = oy0 * S - static_cast<int>(g.pad_top), ix0 = ox0 * S - static_cast<int>(g.pad_left);
  const int chunk0 = blockIdx.y * cb;
  const int in_h = static_cast<int>(g.in_h), in_w = static_cast<int>(g.in_w);

  // The input tile, zeros outside the image (the padding) and past the last channel vector.
  const T* xn = x + static_cast<int64_t>(n) * in_h * in_w * g.channels;
  // Thread (x, y) copies vector x of pixels y, y + slots, ...: no division by the chunk size, and a
  // warp's copies are still consecutive 16-byte pieces.
  const int nthreads = blockDim.x * blockDim.y;
  for (int pix = threadIdx.y; pix < Tl::in_h * Tl::in_w; pix += Tl::slots) {
    const int c = threadIdx.x, i = pix * cb + c;
    const int iy = iy0 + pix / Tl::in_w, ix = ix0 + pix % Tl::in_w;
    const bool valid = iy >= 0 && iy < in_h && ix >= 0 && ix < in_w && chunk0 + c < cv;
    const T* src = valid ? xn + (static_cast<int64_t>(iy) * in_w + ix) * g.channels +
                               static_cast<int64_t>(chunk0 + c) * V
                         : x;
    if constexpr (sizeof(VecT) == 16) {
      async_copy::copy16(tile + i, src, valid);
    } else {
      VecT v;
      if (valid) {
        v = *reinterpret_cast<const VecT*>(src);
      } else {
        for (int j = 0; j < V; ++j) v.v[j] = T(0.f);
      }
      tile[i] = v;
    }
  }
  // The chunk's weights [cb * V][3][3] are one contiguous run of W [C, 3, 3, 1].
  constexpr int kTaps = kK * kK;
  float* wsm = reinterpret_cast<float*>(smem_raw + tile_bytes<T, V, S>(cb));
  const int wcount = cb * V * kTaps, wrow = cb * V;
  const int64_t wbase = static_cast<int64_t>(chunk0) * V * kTaps;
  for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < wcount; i += nthreads) {
    const int lc = i / kTaps, t = i % kTaps;
    wsm[t * wrow + lc] = static_cast<int64_t>(chunk0) * V + lc < g.channels ? load<T>(w, wbase + i) : 0.f;
  }
  if constexpr (sizeof(VecT) == 16) async_copy::wait_all();
  __syncthreads();

  const int c = threadIdx.x, cvec = chunk0 + c;
  if (cvec >= cv) return;
  const int64_t ch0 = static_cast<int64_t>(cvec) * V;
  float wr[kTaps][V];
#pragma unroll
  for (int t = 0; t < kTaps; ++t) {
    const float* src = wsm + t * wrow + c * V;
    if constexpr (V % 4 == 0) {
#pragma unroll
      for (int j = 0; j < V; j += 4) {
        const float4 q = *reinterpret_cast<const float4*>(src + j);
        wr[t][j] = q.x;
        wr[t][j + 1] = q.y;
        wr[t][j + 2] = q.z;
        wr[t][j + 3] = q.w;
      }
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) wr[t][j] = src[j];
    }
  }

  const int oy = oy0 + threadIdx.y / (Tl::w / kRow);
  const int col = (threadIdx.y % (Tl::w / kRow)) * kRow;  // first output column in the tile
  if (oy >= g.out_h) return;
  float acc[kRow][V];
  for (int r = 0; r < kRow; ++r)
    for (int j = 0; j < V; ++j) acc[r][j] = 0.f;
  const int ly = (oy - oy0) * S;
#pragma unroll
  for (int kh = 0; kh < kK; ++kh) {
    const VecT* row = tile + ((ly + kh) * Tl::in_w + col * S) * cb + c;
#pragma unroll
    for (int ci = 0; ci < (kRow - 1) * S + kK; ++ci) {
      const VecT v = row[ci * cb];
      float xf[V];
#pragma unroll
      for (int j = 0; j < V; ++j) xf[j] = load<T>(v.v, j);
#pragma unroll
      for (int r = 0; r < kRow; ++r) {
        const int kw = ci - r * S;  // resolved at compile time
        if (kw < 0 || kw >= kK) continue;
#pragma unroll
        for (int j = 0; j < V; ++j) acc[r][j] = fmaf(xf[j], wr[kh * kK + kw][j], acc[r][j]);
      }
    }
  }

  float bias[V];
  for (int j = 0; j < V; ++j) bias[j] = b ? load<T>(b, ch0 + j) : 0.f;
  const int64_t out_row = (static_cast<int64_t>(n) * g.out_h + oy) * g.out_w;
#pragma unroll
  for (int r = 0; r < kRow; ++r) {
    const int ox = ox0 + col + r;
    if (ox >= g.out_w) break;
    const int64_t at = (out_row + ox) * g.channels + ch0;
    VecT zv;
    if (z) zv = *reinterpret_cast<const VecT*>(z + at);
    VecT out;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      float v = acc[r][j] + bias[j];
      if (z) v += load<T>(zv.v, j);
      store<T>(out.v, j, conv_activate(v, e));
    }
    *reinterpret_cast<VecT*>(y + at) = out;
  }
}

// Channel vectors per block: the largest divisor of cv up to kMaxChunk (no idle threads), unless that is
// small against cv (a prime count): then kMaxChunk with the last chunk part idle.
int chunk_for(int cv) {
  int best = 1;
  for (int d = 1; d <= kMaxChunk && d <= cv; ++d)
    if (cv % d == 0) best = d;
  if (best * 2 < kMaxChunk && cv > best * 2) return cv < kMaxChunk ? cv : kMaxChunk;
  return best;
}

template <class T, int V, int S>
void launch_s(const void* x, const void* w, const void* b, const void* z, void* y, const Depthwise& g,
              const Epilogue& e, cudaStream_t s) {
  using Tl = Tile<S>;
  const int cv = static_cast<int>(g.channels / V);
  const int cb = chunk_for(cv);
  const int tiles_w = static_cast<int>((g.out_w + Tl::w - 1) / Tl::w);
  const int tiles_h = static_cast<int>((g.out_h + Tl::h - 1) / Tl::h);
  const dim3 grid(static_cast<unsigned>(g.batch * tiles_h * tiles_w),
                  static_cast<unsigned>((cv + cb - 1) / cb));
  const dim3 block(static_cast<unsigned>(cb), Tl::slots);
  const size_t smem = static_cast<size_t>(tile_bytes<T, V, S>(cb)) + sizeof(float) * kK * kK * V * cb;
  depthwise3x3_tiled<T, V, S><<<grid, block, smem, s>>>(static_cast<const T*>(x), static_cast<const T*>(w),
                                                        static_cast<const T*>(b), static_cast<const T*>(z),
                                                        static_cast<T*>(y), g, e, cb, tiles_w, tiles_h);
}

template <class T, int V>
void launch_v(const void* x, const void* w, const void* b, const void* z, void* y, const Depthwise& g,
              const Epilogue& e, cudaStream_t s) {
  if (g.stride_h == 1) return launch_s<T, V, 1>(x, w, b, z, y, g, e, s);
  return launch_s<T, V, 2>(x, w, b, z, y, g, e, s);
}

bool aligned(const void* p, uintptr_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

template <class T>
void launch_t(const void* x, const void* w, const void* b, const void* z, void* y, const Depthwise& g,
              const Epilogue& e, cudaStream_t s) {
  constexpr int kWide = 16 / sizeof(T);
  if (g.channels % kWide == 0 && aligned(x, 16) && aligned(y, 16) && (!z || aligned(z, 16)))
    return launch_v<T, kWide>(x, w, b, z, y, g, e, s);
  return launch_v<T, 1>(x, w, b, z, y, g, e, s);
}

}  // namespace

bool depthwise_tiled_takes(const Depthwise& g) {
  // Grid x counts (n, tile row, tile column) in 31 bits, grid y the channel chunks in 16; the kernel's
  // pixel indices are 32-bit.
  const int64_t tiles = g.batch * ((g.out_h + 3) / 4) * ((g.out_w + kTileW - 1) / kTileW);
  return g.kernel_h == kK && g.kernel_w == kK && g.dilation_h == 1 && g.dilation_w == 1 &&
         g.stride_h == g.stride_w && (g.stride_h == 1 || g.stride_h == 2) && g.channels > 0 &&
         g.channels <= 65535 && tiles < (int64_t{1} << 31) && g.in_h * g.in_w < (int64_t{1} << 31) &&
         g.out_h * g.out_w < (int64_t{1} << 31) && g.pad_top >= 0 && g.pad_left >= 0 && g.pad_top < 1024 &&
         g.pad_left < 1024;
}

void launch_depthwise_tiled(ElemType t, const void* x, const void* w, const void* b, const void* z, void* y,
                            const Depthwise& g, const Epilogue& e, cudaStream_t s) {
  if (g.batch == 0 || g.out_h == 0 || g.out_w == 0) return;
  switch (t) {
    case ElemType::kFloat:
      return launch_t<float>(x, w, b, z, y, g, e, s);
    case ElemType::kHalf:
      return launch_t<__half>(x, w, b, z, y, g, e, s);
    case ElemType::kBFloat16:
      return launch_t<__nv_bfloat16>(x, w, b, z, y, g, e, s);
  }
}

}  // namespace tessera::cuda
