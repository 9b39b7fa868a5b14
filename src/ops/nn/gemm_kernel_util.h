// The shared float matrix product of the reference kernels (Conv, ConvTranspose, Gemm, MatMul), and a
// plain loop for the other element types.
//
// gemm_f32 packs panels of A and B and runs a register-blocked micro-kernel over them, blocked over K and
// N so the panels stay in cache, split over the thread pool by tiles of C. Each element of C is the sum
// over k in increasing order, as the naive triple loop computes it, whatever the blocking and threading:
// results do not depend on the number of threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "runtime/half.h"
#include "runtime/thread_pool.h"

namespace tessera::ops::kernels {

// acc + x * y, wrapping for integers (no signed-overflow undefined behaviour).
template <class Acc>
inline Acc mul_add(Acc acc, Acc x, Acc y) {
  if constexpr (std::is_integral_v<Acc>) {
    using U = std::make_unsigned_t<Acc>;
    return static_cast<Acc>(static_cast<U>(acc) + static_cast<U>(x) * static_cast<U>(y));
  } else {
    return acc + x * y;
  }
}

// C = alpha * op(A) * op(B) + beta * C, all row-major. op(A) is [M, K] (A is [K, M] when trans_a), op(B)
// is [K, N] (B is [N, K] when trans_b); lda/ldb/ldc are the row strides of A, B and C as stored.
// beta == 0 overwrites C without reading it (NaNs there do not propagate), as BLAS does.
// `pool` may be null (single-threaded).
void gemm_f32(rt::ThreadPool* pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
              const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// The same contract for any element type: accumulates in Acc (compute_t<T>, or int64 for integers,
// stored back with a wrapping cast), rows split over the pool. For double, the 16-bit floats and ints.
// Integer products wrap (computed in the unsigned type) rather than overflow.
template <class T, class Acc>
void gemm_generic(rt::ThreadPool* pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                  Acc alpha, const T* a, int64_t lda, const T* b, int64_t ldb, Acc beta, T* c, int64_t ldc) {
  auto body = [&](int64_t i0, int64_t i1) {
    std::vector<Acc> acc(static_cast<size_t>(n));
    for (int64_t i = i0; i < i1; ++i) {
      std::fill(acc.begin(), acc.end(), Acc(0));
      for (int64_t p = 0; p < k; ++p) {
        Acc av = static_cast<Acc>(trans_a ? a[p * lda + i] : a[i * lda + p]);
        for (int64_t j = 0; j < n; ++j) {
          Acc bv = static_cast<Acc>(trans_b ? b[j * ldb + p] : b[p * ldb + j]);
          acc[j] = mul_add(acc[j], av, bv);
        }
      }
      T* row = c + i * ldc;
      for (int64_t j = 0; j < n; ++j) {
        Acc v = mul_add(Acc(0), alpha, acc[j]);
        if (beta != Acc(0)) v = mul_add(v, beta, static_cast<Acc>(row[j]));
        row[j] = static_cast<T>(v);
      }
    }
  };
  int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, n * std::max<int64_t>(k, 1)));
  if (pool)
    pool->parallel_for(m, grain, body);
  else
    body(0, m);
}

// The float type a reference kernel of element type T computes in: double for double, else float.
template <class T>
using real_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// C = alpha * op(A) * op(B) + beta * C in float (the blocked gemm_f32) or double.
template <class F>
void gemm_real(rt::ThreadPool* pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, F alpha,
               const F* a, int64_t lda, const F* b, int64_t ldb, F beta, F* c, int64_t ldc) {
  if constexpr (std::is_same_v<F, float>) {
    gemm_f32(pool, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    gemm_generic<F, F>(pool, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

// `n` elements of p as F: p itself when T is F, else converted into `buf`.
template <class F, class T>
const F* as_real(const T* p, int64_t n, std::vector<F>& buf) {
  if constexpr (std::is_same_v<F, T>) {
    return p;
  } else {
    buf.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) buf[static_cast<size_t>(i)] = static_cast<F>(p[i]);
    return buf.data();
  }
}

}  // namespace tessera::ops::kernels
