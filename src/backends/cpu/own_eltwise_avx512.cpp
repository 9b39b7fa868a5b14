// own_eltwise_math.h compiled for AVX-512 (16 lanes); used only where the CPU has it.
#include <immintrin.h>

#include <cstdint>
#include <initializer_list>

#include "backends/cpu/own_eltwise.h"  // before the target switch: only the math below is avx512

// GCC takes the target for the rest of the file; clang ignores that pragma and takes an attribute on
// every function defined until the pop at the end.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512dq,avx2,fma"))), apply_to = function)
#else
#pragma GCC target("avx512f,avx512dq,avx2,fma")
#endif
#define OWN_ELTWISE_NS avx512
#define OWN_ELTWISE_W 16
#define OWN_ELTWISE_FMA(a, b, c) (F) _mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c))
#define OWN_ELTWISE_RCP(d) (F) _mm512_maskz_rcp14_ps(0xffff, (__m512)(d))  // maskz: no GCC 12 warning
#include "backends/cpu/own_eltwise_math.h"

#if defined(__clang__)
#pragma clang attribute pop
#endif
