#include "backends/cpu/gemm_f32.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

namespace tessera::cpu {
namespace {

constexpr int kRows = 8;                        // rows of the register tile
constexpr int kVectors = PackedB::kPanel / 16;  // 16-float vectors of the tile (3: 48 columns)

// K is cut into blocks of 384 (BERT's 768 and 3072 divide into 2 and 8): while every row tile of the
// task reads one block of the panel (384 x 48 floats, 72 KiB, from L1/L2), the next block is prefetched
// into L2, so that weights coming from memory (BERT-base's 340 MB never stay in the caches between
// inferences) arrive while the current block computes rather than stalling the first row tile on the
// whole panel; at 16 threads and N = 768 each thread runs a single task, so this is the only overlap.
// After a task's last block its next task's first block is prefetched, when the chunk has one. The
// partial sums go back to C between blocks (24 loads and stores per 384 x 24 FMAs). Measured on an
// AVX-512 EPYC (48 KiB L1, 1 MiB L2) at 1-2 threads, weights hot and from memory: blocks of 256, 384, 512 and
// one block over all K within 2%; blocks of 128 were 5-10% slower (short A streams, more C traffic); the
// prefetches gained ~10% with weights from memory.
constexpr int64_t kKBlock = 384;

// One tile: R rows from a (already offset to the tile's first row and the block's first k) times V
// vectors of the panel block bp over kc steps of k, into c. The first block starts from the bias (or
// zero), the next ones from C. `mask` selects the valid columns of the last vector (N's tail). Each k
// step also prefetches one line from pf into L2 (one load slot among 11, for 24 FMAs).
template <int R, int V>
__attribute__((target("avx512f"))) void tile(const float* a, int64_t lda, const float* bp, int64_t kc,
                                             const float* bias, bool accumulate, float* c, int64_t ldc,
                                             __mmask16 mask, const float* pf) {
  __m512 acc[R][V];
  if (accumulate) {
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
      for (int v = 0; v < V; ++v)
        acc[r][v] = _mm512_maskz_loadu_ps(v == V - 1 ? mask : __mmask16(0xffff), c + r * ldc + v * 16);
  } else {
#pragma GCC unroll 3
    for (int v = 0; v < V; ++v) {
      const __m512 init = bias ? _mm512_maskz_loadu_ps(v == V - 1 ? mask : __mmask16(0xffff), bias + v * 16)
                               : _mm512_setzero_ps();
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) acc[r][v] = init;
    }
  }
  const float* ar[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) ar[r] = a + r * lda;
#pragma GCC unroll 2
  for (int64_t k = 0; k < kc; ++k) {
    _mm_prefetch(reinterpret_cast<const char*>(pf + k * 16), _MM_HINT_T1);
    __m512 bv[V];
#pragma GCC unroll 3
    for (int v = 0; v < V; ++v) bv[v] = _mm512_load_ps(bp + k * PackedB::kPanel + v * 16);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(ar[r][k]);
#pragma GCC unroll 3
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
    for (int v = 0; v < V; ++v)
      _mm512_mask_storeu_ps(c + r * ldc + v * 16, v == V - 1 ? mask : __mmask16(0xffff), acc[r][v]);
}

using TileFn = void (*)(const float*, int64_t, const float*, int64_t, const float*, bool, float*, int64_t,
                        __mmask16, const float*);

template <int V, int... R>
constexpr auto tile_row(std::integer_sequence<int, R...>) {
  return std::array<TileFn, sizeof...(R)>{&tile<R + 1, V>...};
}

// kTiles[v - 1][r - 1]: the tile of r rows and v vectors.
const std::array<std::array<TileFn, kRows>, kVectors> kTiles = {
    tile_row<1>(std::make_integer_sequence<int, kRows>{}),
    tile_row<2>(std::make_integer_sequence<int, kRows>{}),
    tile_row<3>(std::make_integer_sequence<int, kRows>{}),
};

// How many groups to cut the row tiles into (a task is one panel x one group). Fewer groups mean
// more row tiles per task, so each panel of B (the weights, read from memory once per inference) is
// fetched by one core and reused from its cache; enough tasks are needed to keep every thread busy.
// Cost of a plan: the rounds of tasks the busiest thread runs, times a task's row tiles plus one (the
// panel's fetch and the hand-out). At M = 128 (16 row tiles) this gives one group at 16 threads with
// N = 768 (16 tasks of 128 x 48) and with N = 3072 (64 tasks), and one at 2 threads.
int64_t row_groups(int64_t row_tiles, int64_t panels, int64_t threads) {
  int64_t best = 1, best_cost = INT64_MAX;
  for (int64_t g = 1; g <= row_tiles; ++g) {
    const int64_t per = (row_tiles + g - 1) / g, groups = (row_tiles + per - 1) / per;
    if (groups != g) continue;  // same split as a smaller g
    const int64_t rounds = (panels * groups + threads - 1) / threads;
    const int64_t cost = rounds * (per + 1);
    if (cost < best_cost) best = g, best_cost = cost;
  }
  return best;
}

}  // namespace

bool gemm_supported() {
  static const bool ok = __builtin_cpu_supports("avx512f");
  return ok;
}

PackedB pack_b(const float* b, int64_t k, int64_t n) {
  PackedB p;
  p.k = k;
  p.n = n;
  p.panels = (n + PackedB::kPanel - 1) / PackedB::kPanel;
  p.data.assign(static_cast<size_t>(p.panels * k * PackedB::kPanel), 0.0f);
  // Row by row of B, one copy per panel: about memory speed (BERT-base's 85 M weights in ~0.2 s, once).
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t pi = 0; pi < p.panels; ++pi) {
      const int64_t col0 = pi * PackedB::kPanel, cols = std::min(PackedB::kPanel, n - col0);
      std::copy_n(b + kk * n + col0, cols, p.data.data() + (pi * k + kk) * PackedB::kPanel);
    }
  return p;
}

void gemm_f32(rt::ThreadPool& pool, const float* a, int64_t m, int64_t lda, const PackedB& b,
              const float* bias, float* c, int64_t ldc) {
  if (m <= 0 || b.n <= 0) return;
  const int64_t row_tiles = (m + kRows - 1) / kRows;
  const int64_t groups = row_groups(row_tiles, b.panels, pool.size());
  const int64_t per_group = (row_tiles + groups - 1) / groups;
  // Tasks: (panel, group of row tiles), groups innermost, so that when the pool hands one thread
  // several consecutive tasks they share a panel. In a task, K blocks are outermost and row tiles
  // inner: one block of the panel serves every row tile from L1.
  pool.parallel_for(b.panels * groups, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t p = t / groups, g = t % groups;
      const int64_t col0 = p * PackedB::kPanel, cols = std::min(PackedB::kPanel, b.n - col0);
      const int vectors = static_cast<int>((cols + 15) / 16);
      const auto mask = static_cast<__mmask16>(0xffffu >> (vectors * 16 - cols));
      const auto& fns = kTiles[static_cast<size_t>(vectors - 1)];
      const int64_t rt0 = g * per_group, rt1 = std::min(row_tiles, rt0 + per_group);
      const float* panel = b.panel(p);
      for (int64_t k0 = 0; k0 == 0 || k0 < b.k; k0 += kKBlock) {
        const int64_t kc = std::min(kKBlock, b.k - k0);
        const float* block = panel + k0 * PackedB::kPanel;
        // What to bring into L2 meanwhile: the panel's next block, or after the last one the first block
        // of this thread's next task when the chunk has one on another panel.
        const float* ahead = nullptr;
        int64_t ahead_floats = 0;
        if (k0 + kc < b.k) {
          ahead = block + kc * PackedB::kPanel;
          ahead_floats = std::min(kKBlock, b.k - k0 - kc) * PackedB::kPanel;
        } else if (t + 1 < t1 && (t + 1) / groups != p) {
          ahead = b.panel((t + 1) / groups);
          ahead_floats = std::min(kKBlock, b.k) * PackedB::kPanel;
        }
        for (int64_t rt = rt0; rt < rt1; ++rt) {
          const int64_t r0 = rt * kRows;
          const int rows = static_cast<int>(std::min<int64_t>(kRows, m - r0));
          // Row tile j prefetches lines [j * kc, (j + 1) * kc) of that block (the last range moved back to
          // end with it); once it is covered, lines of the current block (L1 hits).
          const int64_t from = (rt - rt0) * kc * 16, span = kc * 16;
          const float* pf = ahead && from < ahead_floats && span <= ahead_floats
                                ? ahead + std::min(from, ahead_floats - span)
                                : block;
          fns[static_cast<size_t>(rows - 1)](a + r0 * lda + k0, lda, block, kc, bias ? bias + col0 : nullptr,
                                             k0 > 0, c + r0 * ldc + col0, ldc, mask, pf);
        }
      }
    }
  });
}

}  // namespace tessera::cpu
