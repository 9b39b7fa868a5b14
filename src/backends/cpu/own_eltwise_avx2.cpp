// own_eltwise_math.h compiled for AVX2 with FMA (8 lanes); used only where the CPU has them.
#include <immintrin.h>

#include <cstdint>
#include <initializer_list>

#include "backends/cpu/own_eltwise.h"  // before the target switch: only the math below is avx2

// GCC takes the target for the rest of the file; clang ignores that pragma and takes an attribute on
// every function defined until the pop at the end.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC target("avx2,fma")
#endif
#define OWN_ELTWISE_NS avx2
#define OWN_ELTWISE_W 8
#define OWN_ELTWISE_FMA(a, b, c) (F) _mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c))
#include "backends/cpu/own_eltwise_math.h"

#if defined(__clang__)
#pragma clang attribute pop
#endif
