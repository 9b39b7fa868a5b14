// Tessera's own float32 GEMM for AVX-512 CPUs: C = A * B + bias with A an activation (row-major, any
// leading dimension) and B constant weights packed once. BERT-base spends ~70% of its time in the
// MatMuls of its linear layers ([128 x 768] x [768 x 768 | 3072] and [128 x 3072] x [3072 x 768] at
// batch 1); oneDNN 2.6's brgemm matmul ran them ~15% slower than ONNX Runtime's MLAS sgemm at 16
// threads. This kernel follows pointwise_conv.h: a register tile of broadcast-FMAs, tails by smaller
// templated tiles, and tasks handed out dynamically over the pool. On the GPU test machine's Xeon
// (2026-11-21, bench/gemm_bench.cpp and bench/ab_switch.sh) it took 0.76-0.99x oneDNN's time on those
// layers at 16 threads and 0.93-0.98x on two cores; BERT-base end to end 0.88x and 0.95x.
//
// Micro-kernel: 8 rows x 48 columns (3 vectors of 16): 24 accumulators + 3 B vectors + a broadcast of
// the 32 zmm registers. Per k step it issues 24 FMAs against 3 vector loads and 8 broadcasts (11
// loads): the two FMA ports stay the bottleneck with room to spare on the two load ports (a 14 x 2
// tile needs 16 loads per 28 FMAs). 8 rows also divide BERT's 128 exactly (14 would leave a 2-row
// tail), and 48 columns divide 768 and 3072 into 16 and 64 panels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "runtime/thread_pool.h"

namespace tessera::cpu {

// Storage aligned to cache lines, so that a panel row of 48 floats is exactly 3 lines.
template <class T>
struct CacheAligned {
  using value_type = T;
  CacheAligned() = default;
  template <class U>
  CacheAligned(const CacheAligned<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(64))); }
  void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t(64)); }
  template <class U>
  bool operator==(const CacheAligned<U>&) const {
    return true;
  }
};

// B [K, N] packed for the kernel in column panels of 48: [N / 48][K][48], the last panel zero-padded
// (only its ceil(width / 16) first vectors are read). A panel is contiguous, so a task streams it
// front to back and the hardware prefetchers follow.
struct PackedB {
  static constexpr int64_t kPanel = 48;
  int64_t k = 0, n = 0, panels = 0;
  std::vector<float, CacheAligned<float>> data;
  const float* panel(int64_t p) const { return data.data() + p * k * kPanel; }
};
PackedB pack_b(const float* b, int64_t k, int64_t n);

// Whether this CPU runs the kernel (AVX-512F).
bool gemm_supported();

// C[m, n] = A[m, k] * B + bias (bias: n floats, or null). A and C are row-major with leading
// dimensions lda >= k and ldc >= n; C's columns past n are not written.
void gemm_f32(rt::ThreadPool& pool, const float* a, int64_t m, int64_t lda, const PackedB& b,
              const float* bias, float* c, int64_t ldc);

}  // namespace tessera::cpu
