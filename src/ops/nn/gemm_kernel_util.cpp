#include "ops/nn/gemm_kernel_util.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace tessera::ops::kernels {

namespace {

// Micro-tile of C computed in registers, and the cache blocks around it: a KC x NC panel of B (256 KiB)
// for L2, an MC x KC panel of A, a MC x NC accumulator tile per task.
constexpr int64_t kMR = 4;
constexpr int64_t kNR = 8;
constexpr int64_t kKC = 256;
constexpr int64_t kMC = 64;
constexpr int64_t kNC = 256;

typedef float v8f __attribute__((vector_size(32)));

// On x86-64 the micro-kernel is also compiled for AVX2 and picked at load time. Without FMA the
// products and sums round exactly as the baseline build's do, so the choice never changes a result.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define TESSERA_GEMM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TESSERA_GEMM_CLONES
#endif

// acc[r][0..NR) += sum over p of ap[p][r] * bp[p][0..NR), p in increasing order.
TESSERA_GEMM_CLONES
void micro_kernel(int64_t kc, const float* ap, const float* bp, float* acc, int64_t ldacc) {
  v8f c0, c1, c2, c3;
  std::memcpy(&c0, acc, sizeof(v8f));
  std::memcpy(&c1, acc + ldacc, sizeof(v8f));
  std::memcpy(&c2, acc + 2 * ldacc, sizeof(v8f));
  std::memcpy(&c3, acc + 3 * ldacc, sizeof(v8f));
  for (int64_t p = 0; p < kc; ++p) {
    v8f b;
    std::memcpy(&b, bp + p * kNR, sizeof(v8f));
    const float* a = ap + p * kMR;
    c0 += a[0] * b;
    c1 += a[1] * b;
    c2 += a[2] * b;
    c3 += a[3] * b;
  }
  std::memcpy(acc, &c0, sizeof(v8f));
  std::memcpy(acc + ldacc, &c1, sizeof(v8f));
  std::memcpy(acc + 2 * ldacc, &c2, sizeof(v8f));
  std::memcpy(acc + 3 * ldacc, &c3, sizeof(v8f));
}

struct Operands {
  bool trans_a, trans_b;
  int64_t m, n, k;
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
};

// Rows [i0, i0+mc) and columns [p0, p0+kc) of op(A), as MR-row panels stored column by column (zero rows
// past M).
void pack_a(const Operands& o, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* dst) {
  for (int64_t ir = 0; ir < mc; ir += kMR) {
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t r = 0; r < kMR; ++r) {
        int64_t i = i0 + ir + r;
        float v = 0.f;
        if (i < o.m) v = o.trans_a ? o.a[(p0 + p) * o.lda + i] : o.a[i * o.lda + p0 + p];
        *dst++ = v;
      }
    }
  }
}

// Rows [p0, p0+kc) and columns [j0, j0+nc) of op(B), as NR-column panels stored row by row (zero
// columns past N).
void pack_b(const Operands& o, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst) {
  for (int64_t jr = 0; jr < nc; jr += kNR) {
    int64_t valid = std::min(kNR, o.n - (j0 + jr));
    for (int64_t p = 0; p < kc; ++p) {
      if (!o.trans_b) {
        const float* src = o.b + (p0 + p) * o.ldb + j0 + jr;
        for (int64_t c = 0; c < valid; ++c) dst[c] = src[c];
      } else {
        const float* src = o.b + (j0 + jr) * o.ldb + p0 + p;
        for (int64_t c = 0; c < valid; ++c) dst[c] = src[c * o.ldb];
      }
      for (int64_t c = valid; c < kNR; ++c) dst[c] = 0.f;
      dst += kNR;
    }
  }
}

int64_t round_up(int64_t v, int64_t to) {
  return (v + to - 1) / to * to;
}

}  // namespace

void gemm_f32(rt::ThreadPool* pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
              const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  const Operands o{trans_a, trans_b, m, n, k, a, lda, b, ldb};
  const int64_t mtiles = (m + kMC - 1) / kMC;
  const int64_t ntiles = (n + kNC - 1) / kNC;
  auto run_tiles = [&](int64_t t0, int64_t t1) {
    // Per-thread buffers, kept between calls: small products should not pay for allocations.
    thread_local std::vector<float> abuf(static_cast<size_t>(kMC * kKC));
    thread_local std::vector<float> bbuf(static_cast<size_t>(kKC * kNC));
    thread_local std::vector<float> acc(static_cast<size_t>(kMC * kNC));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t i0 = (t / ntiles) * kMC, j0 = (t % ntiles) * kNC;
      const int64_t mc = std::min(kMC, m - i0), nc = std::min(kNC, n - j0);
      const int64_t mc_pad = round_up(mc, kMR), nc_pad = round_up(nc, kNR);
      for (int64_t i = 0; i < mc_pad; ++i) std::fill_n(acc.data() + i * kNC, nc_pad, 0.f);
      for (int64_t p0 = 0; p0 < k; p0 += kKC) {
        const int64_t kc = std::min(kKC, k - p0);
        pack_b(o, p0, kc, j0, nc_pad, bbuf.data());
        pack_a(o, i0, mc_pad, p0, kc, abuf.data());
        for (int64_t jr = 0; jr < nc_pad; jr += kNR) {
          for (int64_t ir = 0; ir < mc_pad; ir += kMR) {
            micro_kernel(kc, abuf.data() + ir * kc, bbuf.data() + jr * kc, acc.data() + ir * kNC + jr, kNC);
          }
        }
      }
      for (int64_t i = 0; i < mc; ++i) {
        float* crow = c + (i0 + i) * ldc + j0;
        const float* arow = acc.data() + i * kNC;
        if (beta == 0.f) {
          for (int64_t j = 0; j < nc; ++j) crow[j] = alpha * arow[j];
        } else {
          for (int64_t j = 0; j < nc; ++j) crow[j] = alpha * arow[j] + beta * crow[j];
        }
      }
    }
  };
  const int64_t tiles = mtiles * ntiles;
  if (pool && tiles > 1 && m * n * std::max<int64_t>(k, 1) > 32768)
    pool->parallel_for(tiles, 1, run_tiles);
  else
    run_tiles(0, tiles);
}

}  // namespace tessera::ops::kernels
