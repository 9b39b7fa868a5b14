// Tessera's own matrix-vector product for AVX-512 CPUs: a Gemm with one row in A, which is how a
// classifier head runs at batch 1 (ResNet-50's 2048 -> 1000, MobileNetV2's 1280 -> 1000). Its cost is
// reading the weights once (5-8 MB) in their stored layout: each thread streams its own slice, with no
// reorder and no packing. On the GPU test machine's Xeon it ran MobileNetV2's head in 0.018 ms at 16
// threads and 0.086 ms on two cores, against 0.024 and 0.094 for oneDNN 2.6's matmul (2026-11-21,
// bench/ab_switch.sh with TESSERA_OWN_GEMV).
#pragma once

#include <cstdint>

#include "runtime/thread_pool.h"

namespace tessera::cpu {

struct GemvArgs {
  const float* x = nullptr;  // [k]
  const float* w = nullptr;  // [n, k] when rows_are_outputs (Gemm's transB = 1), else [k, n]
  int64_t k = 0, n = 0;
  bool rows_are_outputs = true;
  float alpha = 1.f;
  const float* c = nullptr;  // added after alpha: c[0] for every output when c_count is 1, else c[j]
  int64_t c_count = 0;
};

// Whether this CPU runs the kernel (AVX-512F).
bool gemv_supported();

// y[j] = alpha * sum_i x[i] * W(i, j) + c(j), j < n.
void gemv(rt::ThreadPool& pool, const GemvArgs& a, float* y);

}  // namespace tessera::cpu
