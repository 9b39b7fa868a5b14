// own_eltwise_math.h compiled for AVX2 with FMA (8 lanes); used only where the CPU has them.
#include <immintrin.h>

#include <cstdint>
#include <initializer_list>

#pragma GCC target("avx2,fma")
#define OWN_ELTWISE_NS avx2
#define OWN_ELTWISE_W 8
#define OWN_ELTWISE_FMA(a, b, c) (F) _mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c))
#include "backends/cpu/own_eltwise_math.h"
