// own_eltwise_math.h compiled for AVX-512 (16 lanes); used only where the CPU has it.
#include <immintrin.h>

#include <cstdint>
#include <initializer_list>

#pragma GCC target("avx512f,avx512dq,avx2,fma")
#define OWN_ELTWISE_NS avx512
#define OWN_ELTWISE_W 16
#define OWN_ELTWISE_FMA(a, b, c) (F) _mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c))
#define OWN_ELTWISE_RCP(d) (F) _mm512_maskz_rcp14_ps(0xffff, (__m512)(d))  // maskz: no GCC 12 warning
#include "backends/cpu/own_eltwise_math.h"
