#include "backends/cpu/gemv.h"

#include <immintrin.h>

// GCC 12 warns that _mm512_reduce_add_ps reads an uninitialised value: its shuffles start from
// _mm512_undefined_ps(), whose lanes the result never takes.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>

namespace tessera::cpu {
namespace {

constexpr int64_t kLanes = 16;

__attribute__((target("avx512f"))) inline __mmask16 tail_mask(int64_t left) {
  return left >= kLanes ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
}

__attribute__((target("avx512f"))) inline float finish(const GemvArgs& a, int64_t j, float dot) {
  const float c = a.c ? a.c[a.c_count == 1 ? 0 : j] : 0.f;
  return a.alpha * dot + c;
}

// Outputs [j0, j1) of W [n, k]: four rows at a time share each load of x.
__attribute__((target("avx512f"))) void rows(const GemvArgs& a, int64_t j0, int64_t j1, float* y) {
  int64_t j = j0;
  for (; j + 4 <= j1; j += 4) {
    const float* w = a.w + j * a.k;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t i = 0; i < a.k; i += kLanes) {
      const __mmask16 m = tail_mask(a.k - i);
      const __m512 x = _mm512_maskz_loadu_ps(m, a.x + i);
      s0 = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(m, w + i), s0);
      s1 = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(m, w + a.k + i), s1);
      s2 = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(m, w + 2 * a.k + i), s2);
      s3 = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(m, w + 3 * a.k + i), s3);
    }
    y[j] = finish(a, j, _mm512_reduce_add_ps(s0));
    y[j + 1] = finish(a, j + 1, _mm512_reduce_add_ps(s1));
    y[j + 2] = finish(a, j + 2, _mm512_reduce_add_ps(s2));
    y[j + 3] = finish(a, j + 3, _mm512_reduce_add_ps(s3));
  }
  for (; j < j1; ++j) {
    __m512 s = _mm512_setzero_ps();
    for (int64_t i = 0; i < a.k; i += kLanes) {
      const __mmask16 m = tail_mask(a.k - i);
      s = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a.x + i), _mm512_maskz_loadu_ps(m, a.w + j * a.k + i), s);
    }
    y[j] = finish(a, j, _mm512_reduce_add_ps(s));
  }
}

// Outputs [j0, j1) of W [k, n], at most 64 of them: each row of W adds x[i] times its slice.
__attribute__((target("avx512f"))) void columns(const GemvArgs& a, int64_t j0, int64_t j1, float* y) {
  __m512 s[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  __mmask16 m[4];
  for (int v = 0; v < 4; ++v) m[v] = tail_mask(std::max<int64_t>(0, j1 - j0 - v * kLanes));
  for (int64_t i = 0; i < a.k; ++i) {
    const __m512 x = _mm512_set1_ps(a.x[i]);
    const float* w = a.w + i * a.n + j0;
    for (int v = 0; v < 4; ++v) s[v] = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(m[v], w + v * kLanes), s[v]);
  }
  alignas(64) float out[4 * kLanes];
  for (int v = 0; v < 4; ++v) _mm512_store_ps(out + v * kLanes, s[v]);
  for (int64_t j = j0; j < j1; ++j) y[j] = finish(a, j, out[j - j0]);
}

}  // namespace

bool gemv_supported() {
  static const bool ok = __builtin_cpu_supports("avx512f");
  return ok;
}

void gemv(rt::ThreadPool& pool, const GemvArgs& a, float* y) {
  if (a.rows_are_outputs) {
    // Chunks of 8 outputs: 125 for a 1000-class head, enough to even out 16 threads.
    const int64_t chunk = 8;
    pool.parallel_for((a.n + chunk - 1) / chunk, 1,
                      [&](int64_t t0, int64_t t1) { rows(a, t0 * chunk, std::min(a.n, t1 * chunk), y); });
    return;
  }
  const int64_t chunk = 4 * kLanes;
  pool.parallel_for((a.n + chunk - 1) / chunk, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) columns(a, t * chunk, std::min(a.n, (t + 1) * chunk), y);
  });
}

}  // namespace tessera::cpu
