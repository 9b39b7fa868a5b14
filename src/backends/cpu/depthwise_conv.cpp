#include "backends/cpu/depthwise_conv.h"

#include <immintrin.h>

#include <algorithm>

// GCC 12 warns that _mm512_min_ps / _mm512_max_ps read an uninitialised value: their masked builtins
// take _mm512_undefined_ps() as the pass-through, which an all-ones mask never reads.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tessera::cpu {
namespace {

constexpr int64_t kBlock = 16;

// The epilogue of one output pixel at `at`: Z, then Relu/Clip.
__attribute__((target("avx512f"))) inline void store(__m512 acc, int64_t at, const PointwiseEpilogue& ep,
                                                     __m512 lo, __m512 hi, const float* z, float* y) {
  if (z) acc = _mm512_add_ps(acc, _mm512_loadu_ps(z + at));
  if (ep.clip) acc = _mm512_min_ps(hi, _mm512_max_ps(lo, acc));  // NaN kept (second operand)
  _mm512_storeu_ps(y + at, acc);
}

// Output pixels [ow0, ow1) of row `oh` of one channel block, taps tested per pixel: the image's left
// and right edges (and every pixel of a window other than 3x3). x is the block's [H, W, 16] plane, wb
// its [KH, KW, 16] weights, y (and z) its [OH, OW, 16] plane.
__attribute__((target("avx512f"))) void edge_pixels(const float* x, const DepthwiseGeometry& g,
                                                    const DepthwiseWeights& w, const float* wb, __m512 b,
                                                    int64_t oh, int64_t ow0, int64_t ow1,
                                                    const PointwiseEpilogue& ep, const float* z, float* y) {
  const __m512 lo = _mm512_set1_ps(ep.lo), hi = _mm512_set1_ps(ep.hi);
  // Kernel rows inside the image: the same for the whole output row.
  const int64_t ih0 = oh * g.stride_h - g.pad_top;
  const int64_t i_begin = std::max<int64_t>(0, -ih0), i_end = std::min<int64_t>(w.kh, g.h - ih0);
  for (int64_t ow = ow0; ow < ow1; ++ow) {
    const int64_t iw0 = ow * g.stride_w - g.pad_left;
    const int64_t j_begin = std::max<int64_t>(0, -iw0), j_end = std::min<int64_t>(w.kw, g.w - iw0);
    __m512 acc = b;
    for (int64_t i = i_begin; i < i_end; ++i) {
      const float* xr = x + ((ih0 + i) * g.w + iw0) * kBlock;
      const float* wr = wb + i * w.kw * kBlock;
      for (int64_t j = j_begin; j < j_end; ++j)
        acc = _mm512_fmadd_ps(_mm512_loadu_ps(xr + j * kBlock), _mm512_loadu_ps(wr + j * kBlock), acc);
    }
    store(acc, (oh * g.ow + ow) * kBlock, ep, lo, hi, z, y);
  }
}

// Output pixels [ow0, ow1) of row `oh` whose 3x3 windows lie inside the image's columns, for stride S:
// the nine weights stay in registers, and P neighbouring pixels share each input column they read
// (6 loads for 4 pixels at stride 1 instead of 36). Rows outside the image are skipped as a whole.
template <int S>
__attribute__((target("avx512f"))) void interior_pixels_3x3(const float* x, const DepthwiseGeometry& g,
                                                            const float* wb, __m512 b, int64_t oh,
                                                            int64_t ow0, int64_t ow1,
                                                            const PointwiseEpilogue& ep, const float* z,
                                                            float* y) {
  constexpr int P = 4, kCols = (P - 1) * S + 3;
  const __m512 lo = _mm512_set1_ps(ep.lo), hi = _mm512_set1_ps(ep.hi);
  const int64_t ih0 = oh * g.stride_h - g.pad_top;
  const int i_begin = static_cast<int>(std::max<int64_t>(0, -ih0));
  const int i_end = static_cast<int>(std::min<int64_t>(3, g.h - ih0));
  __m512 wv[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) wv[i][j] = _mm512_loadu_ps(wb + (i * 3 + j) * kBlock);

  int64_t ow = ow0;
  for (; ow + P <= ow1; ow += P) {
    __m512 acc[P];
    for (int p = 0; p < P; ++p) acc[p] = b;
    for (int i = 0; i < 3; ++i) {
      if (i < i_begin || i >= i_end) continue;
      const float* xr = x + ((ih0 + i) * g.w + ow * S - g.pad_left) * kBlock;
      __m512 col[kCols];
      for (int c = 0; c < kCols; ++c) col[c] = _mm512_loadu_ps(xr + c * kBlock);
      for (int p = 0; p < P; ++p)
        for (int j = 0; j < 3; ++j) acc[p] = _mm512_fmadd_ps(col[p * S + j], wv[i][j], acc[p]);
    }
    for (int p = 0; p < P; ++p) store(acc[p], (oh * g.ow + ow + p) * kBlock, ep, lo, hi, z, y);
  }
  for (; ow < ow1; ++ow) {
    __m512 acc = b;
    for (int i = 0; i < 3; ++i) {
      if (i < i_begin || i >= i_end) continue;
      const float* xr = x + ((ih0 + i) * g.w + ow * S - g.pad_left) * kBlock;
      for (int j = 0; j < 3; ++j) acc = _mm512_fmadd_ps(_mm512_loadu_ps(xr + j * kBlock), wv[i][j], acc);
    }
    store(acc, (oh * g.ow + ow) * kBlock, ep, lo, hi, z, y);
  }
}

// One output row `oh` of one channel block: edges per pixel, the interior of 3x3 windows with stride 1
// or 2 register-tiled.
__attribute__((target("avx512f"))) void row(const float* x, const DepthwiseGeometry& g,
                                            const DepthwiseWeights& w, const float* wb, const float* bias,
                                            int64_t oh, const PointwiseEpilogue& ep, const float* z,
                                            float* y) {
  const __m512 b = _mm512_loadu_ps(bias);
  const bool tiled =
      w.kh == 3 && w.kw == 3 && g.stride_w == g.stride_h && (g.stride_w == 1 || g.stride_w == 2);
  if (!tiled) return edge_pixels(x, g, w, wb, b, oh, 0, g.ow, ep, z, y);
  // Pixels whose window columns are all inside the image: iw0 = ow * s - pad_left >= 0 and
  // iw0 + 2 < W.
  const int64_t s = g.stride_w;
  const int64_t lo = std::min(g.ow, (g.pad_left + s - 1) / s);
  const int64_t hi =
      std::clamp<int64_t>(g.w - 3 + g.pad_left >= 0 ? (g.w - 3 + g.pad_left) / s + 1 : 0, lo, g.ow);
  edge_pixels(x, g, w, wb, b, oh, 0, lo, ep, z, y);
  if (s == 1)
    interior_pixels_3x3<1>(x, g, wb, b, oh, lo, hi, ep, z, y);
  else
    interior_pixels_3x3<2>(x, g, wb, b, oh, lo, hi, ep, z, y);
  edge_pixels(x, g, w, wb, b, oh, hi, g.ow, ep, z, y);
}

}  // namespace

DepthwiseWeights pack_depthwise(const float* w, const float* bias, int64_t channels, int64_t kh, int64_t kw) {
  DepthwiseWeights p;
  p.blocks = (channels + kBlock - 1) / kBlock;
  p.kh = kh;
  p.kw = kw;
  p.packed.assign(static_cast<size_t>(p.blocks * kh * kw * kBlock), 0.0f);
  p.bias.assign(static_cast<size_t>(p.blocks * kBlock), 0.0f);
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t k = 0; k < kh * kw; ++k)
      p.packed[static_cast<size_t>(((c / kBlock) * kh * kw + k) * kBlock + c % kBlock)] = w[c * kh * kw + k];
    if (bias) p.bias[static_cast<size_t>(c)] = bias[c];
  }
  return p;
}

void depthwise_conv(rt::ThreadPool& pool, const float* x, int64_t batch, const DepthwiseGeometry& g,
                    const DepthwiseWeights& w, const PointwiseEpilogue& ep, float* y) {
  const int64_t x_plane = g.h * g.w * kBlock, y_plane = g.oh * g.ow * kBlock;
  // Tasks: (image, block, output row).
  pool.parallel_for(batch * w.blocks * g.oh, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t plane = t / g.oh, oh = t % g.oh, cb = plane % w.blocks;
      row(x + plane * x_plane, g, w, w.packed.data() + cb * w.kh * w.kw * kBlock, w.bias.data() + cb * kBlock,
          oh, ep, ep.z ? ep.z + plane * y_plane : nullptr, y + plane * y_plane);
    }
  });
}

}  // namespace tessera::cpu
