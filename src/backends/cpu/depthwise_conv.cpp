#include "backends/cpu/depthwise_conv.h"

#include <immintrin.h>

#include <algorithm>

// GCC 12 warns that _mm512_min_ps / _mm512_max_ps read an uninitialised value: their masked builtins
// take _mm512_undefined_ps() as the pass-through, which an all-ones mask never reads.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tessera::cpu {
namespace {

constexpr int64_t kBlock = 16;

// One output row `oh` of one channel block: x is the block's [H, W, 16] plane, wb its [KH, KW, 16]
// weights, y (and z) its [OH, OW, 16] plane.
__attribute__((target("avx512f"))) void row(const float* x, const DepthwiseGeometry& g,
                                            const DepthwiseWeights& w, const float* wb, const float* bias,
                                            int64_t oh, const PointwiseEpilogue& ep, const float* z,
                                            float* y) {
  const __m512 b = _mm512_loadu_ps(bias);
  const __m512 lo = _mm512_set1_ps(ep.lo), hi = _mm512_set1_ps(ep.hi);
  // Kernel rows inside the image: the same for the whole output row.
  const int64_t ih0 = oh * g.stride_h - g.pad_top;
  const int64_t i_begin = std::max<int64_t>(0, -ih0), i_end = std::min<int64_t>(w.kh, g.h - ih0);
  for (int64_t ow = 0; ow < g.ow; ++ow) {
    const int64_t iw0 = ow * g.stride_w - g.pad_left;
    const int64_t j_begin = std::max<int64_t>(0, -iw0), j_end = std::min<int64_t>(w.kw, g.w - iw0);
    __m512 acc = b;
    for (int64_t i = i_begin; i < i_end; ++i) {
      const float* xr = x + ((ih0 + i) * g.w + iw0) * kBlock;
      const float* wr = wb + i * w.kw * kBlock;
      for (int64_t j = j_begin; j < j_end; ++j)
        acc = _mm512_fmadd_ps(_mm512_loadu_ps(xr + j * kBlock), _mm512_loadu_ps(wr + j * kBlock), acc);
    }
    const int64_t at = (oh * g.ow + ow) * kBlock;
    if (z) acc = _mm512_add_ps(acc, _mm512_loadu_ps(z + at));
    if (ep.clip) acc = _mm512_min_ps(_mm512_max_ps(acc, lo), hi);
    _mm512_storeu_ps(y + at, acc);
  }
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
