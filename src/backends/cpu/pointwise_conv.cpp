#include "backends/cpu/pointwise_conv.h"

#include <immintrin.h>

// GCC 12 warns that _mm512_min_ps / _mm512_max_ps read an uninitialised value: their masked builtins
// take _mm512_undefined_ps() as the pass-through, which an all-ones mask never reads.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <array>
#include <utility>

namespace tessera::cpu {
namespace {

constexpr int64_t kBlock = 16;
constexpr int kTilePixels = 14;  // 14 pixels x 2 output blocks = 28 accumulators of the 32 registers

// One tile: P pixels from p0, B output blocks from ob, over every input channel.
template <int P, int B>
__attribute__((target("avx512f"))) void tile(const float* x, int64_t pixels, const PointwiseWeights& w,
                                             int64_t ob, int64_t p0, const PointwiseEpilogue& ep,
                                             const float* z, float* y) {
  __m512 acc[P][B];
#pragma GCC unroll 2
  for (int b = 0; b < B; ++b) {
    __m512 bias = _mm512_loadu_ps(w.bias.data() + (ob + b) * kBlock);
#pragma GCC unroll 14
    for (int p = 0; p < P; ++p) acc[p][b] = bias;
  }
  const int64_t cin = w.in_blocks * kBlock;
  for (int64_t ib = 0; ib < w.in_blocks; ++ib) {
    const float* xp = x + (ib * pixels + p0) * kBlock;
    const float* wp = w.packed.data() + (ob * cin + ib * kBlock) * kBlock;
    for (int l = 0; l < kBlock; ++l) {
      __m512 wv[B];
#pragma GCC unroll 2
      for (int b = 0; b < B; ++b) wv[b] = _mm512_loadu_ps(wp + b * cin * kBlock + l * kBlock);
#pragma GCC unroll 14
      for (int p = 0; p < P; ++p) {
        __m512 xv = _mm512_set1_ps(xp[p * kBlock + l]);
#pragma GCC unroll 2
        for (int b = 0; b < B; ++b) acc[p][b] = _mm512_fmadd_ps(xv, wv[b], acc[p][b]);
      }
    }
  }
  const __m512 lo = _mm512_set1_ps(ep.lo), hi = _mm512_set1_ps(ep.hi);
  for (int b = 0; b < B; ++b) {
    for (int p = 0; p < P; ++p) {
      const int64_t at = ((ob + b) * pixels + p0 + p) * kBlock;
      __m512 v = acc[p][b];
      if (z) v = _mm512_add_ps(v, _mm512_loadu_ps(z + at));
      if (ep.clip)
        v = _mm512_min_ps(
            hi, _mm512_max_ps(lo, v));  // NaN kept: vmaxps/vminps return their second operand for one
      _mm512_storeu_ps(y + at, v);
    }
  }
}

using TileFn = void (*)(const float*, int64_t, const PointwiseWeights&, int64_t, int64_t,
                        const PointwiseEpilogue&, const float*, float*);

template <int B, int... P>
constexpr auto tile_table(std::integer_sequence<int, P...>) {
  return std::array<TileFn, sizeof...(P)>{&tile<P + 1, B>...};
}

// tiles[b - 1][p - 1]: the tile of p pixels and b output blocks.
const std::array<TileFn, kTilePixels> kTiles1 = tile_table<1>(std::make_integer_sequence<int, kTilePixels>{});
const std::array<TileFn, kTilePixels> kTiles2 = tile_table<2>(std::make_integer_sequence<int, kTilePixels>{});

}  // namespace

bool pointwise_supported() {
  static const bool ok = __builtin_cpu_supports("avx512f");
  return ok;
}

PointwiseWeights pack_pointwise(const float* w, const float* bias, int64_t cout, int64_t cin) {
  PointwiseWeights p;
  p.in_blocks = (cin + kBlock - 1) / kBlock;
  p.out_blocks = (cout + kBlock - 1) / kBlock;
  const int64_t cin_pad = p.in_blocks * kBlock;
  p.packed.assign(static_cast<size_t>(p.out_blocks * cin_pad * kBlock), 0.0f);
  p.bias.assign(static_cast<size_t>(p.out_blocks * kBlock), 0.0f);
  for (int64_t oc = 0; oc < cout; ++oc) {
    for (int64_t ic = 0; ic < cin; ++ic)
      p.packed[static_cast<size_t>(((oc / kBlock) * cin_pad + ic) * kBlock + oc % kBlock)] = w[oc * cin + ic];
    if (bias) p.bias[static_cast<size_t>(oc)] = bias[oc];
  }
  return p;
}

void pointwise_conv(rt::ThreadPool& pool, const float* x, int64_t batch, int64_t pixels,
                    const PointwiseWeights& w, const PointwiseEpilogue& ep, float* y) {
  // Tasks: (image, pair of output blocks, tile of pixels). When all the weights fit in a core's L2,
  // output blocks are innermost: a thread's consecutive tasks read one tile of X (from L1) against
  // every output block, and X is read once. Otherwise pixel tiles are innermost, so that consecutive
  // tasks reuse one pair's weights.
  const int64_t pairs = (w.out_blocks + 1) / 2, tiles = (pixels + kTilePixels - 1) / kTilePixels;
  const int64_t x_image = w.in_blocks * pixels * kBlock, y_image = w.out_blocks * pixels * kBlock;
  const bool blocks_inner = w.packed.size() * sizeof(float) <= (size_t{512} << 10);
  pool.parallel_for(batch * pairs * tiles, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / (pairs * tiles), r = t % (pairs * tiles);
      const int64_t pair = blocks_inner ? r % pairs : r / tiles,
                    tile_i = blocks_inner ? r / pairs : r % tiles;
      const int64_t ob = pair * 2, p0 = tile_i * kTilePixels;
      const int pix = static_cast<int>(std::min<int64_t>(kTilePixels, pixels - p0));
      const bool two = ob + 1 < w.out_blocks;
      const TileFn fn = (two ? kTiles2 : kTiles1)[static_cast<size_t>(pix - 1)];
      fn(x + n * x_image, pixels, w, ob, p0, ep, ep.z ? ep.z + n * y_image : nullptr, y + n * y_image);
    }
  });
}

}  // namespace tessera::cpu
