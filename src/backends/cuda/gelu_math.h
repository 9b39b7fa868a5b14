// The float32 erf GELU of the 16-bit GELU kernels (gelu.cu), shared with the host so that a test can check
// it over every float16 and bfloat16 input (tests/cuda/gelu_math_test.cpp).
#pragma once

#include <cmath>

#ifdef __CUDACC__
#define TESSERA_HD __host__ __device__
#else
#define TESSERA_HD
#endif

namespace tessera::cuda {

// x Phi(x), Phi(x) = 0.5 erfc(-x / sqrt 2) the normal distribution function, from erfc(z) = t exp(-z^2 +
// P(t)), t = 1 / (1 + z / 2), z = |x| / sqrt 2, with P the degree-9 Chebyshev fit of Numerical Recipes (2nd
// ed., section 6.2: fractional error below 1.2e-7 for every z >= 0). A fraction of erfcf's instructions
// (one approximate reciprocal, eleven FMAs, one hardware exponential): at 16 bits the erf GELU is
// otherwise compute-bound, not memory-bound. The constants are folded so that nothing but the FMAs sits
// between the reciprocal and the exponential: 0.5 erfc(z) = t 2^(-u^2 + P'(t)) with u = |x| sqrt(log2(e) / 2)
// and P' = log2(e) P - 1 (its coefficients rounded to float32 once), t = 1 / (1 + |x| / (2 sqrt 2)); then
// y = x (1 - h) for x >= 0 and x h below. Checked on the host against 0.5 x erfc(-x / sqrt 2) in double over
// every finite float16 and bfloat16 input, with the reciprocal and the exponential each also perturbed by
// 2 float32 ulps either way (the hardware's approximations): the result rounds to the exact GELU's 16-bit
// value or, within 0.501 ulp of a rounding tie, to its neighbour (float16: 8 of the 63,488 finite inputs,
// at most 27 with the perturbations; bfloat16: at most 1); never more than 1 ulp away (the accuracy
// sweep's bound is 4). The fold costs a few more near-tie roundings than the unfolded form (3 of 63,488)
// and saves two multiplications of about 30 instructions an element. exp2f (the hardware exponential,
// subnormal results kept), not __expf, which flushes them to zero: bfloat16 keeps float32's subnormals (GELU
// of -13.3 is -3e-39).
// kSubnormals: the exponential keeps float32 subnormal results (exp2f), which bfloat16 outputs need; off
// (float16 outputs, whose smallest value is 6e-8), the GPU takes the one-instruction flush-to-zero form.
template <bool kSubnormals = true>
TESSERA_HD inline float erf_gelu(float x) {
  constexpr double kLog2e = 1.4426950408889634;
  const float a = fabsf(x);
  const float den = fmaf(a, 0.35355339059327376f, 1.0f);  // >= 1: no subnormal reciprocal
#ifdef __CUDA_ARCH__
  float t;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(t) : "f"(den));  // one MUFU instruction
#else
  const float t = 1.0f / den;
#endif
  const float u = a * 0.84932180028801904f;  // sqrt(log2(e) / 2)
  float p = static_cast<float>(0.17087277 * kLog2e);
  p = fmaf(p, t, static_cast<float>(-0.82215223 * kLog2e));
  p = fmaf(p, t, static_cast<float>(1.48851587 * kLog2e));
  p = fmaf(p, t, static_cast<float>(-1.13520398 * kLog2e));
  p = fmaf(p, t, static_cast<float>(0.27886807 * kLog2e));
  p = fmaf(p, t, static_cast<float>(-0.18628806 * kLog2e));
  p = fmaf(p, t, static_cast<float>(0.09678418 * kLog2e));
  p = fmaf(p, t, static_cast<float>(0.37409196 * kLog2e));
  p = fmaf(p, t, static_cast<float>(1.00002368 * kLog2e));
  p = fmaf(p, t, static_cast<float>(-1.26551223 * kLog2e - 1.0));
  const float arg = fmaf(-u, u, p);
  float e;
#ifdef __CUDA_ARCH__
  if constexpr (kSubnormals) {
    e = exp2f(arg);
  } else {
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(arg));
  }
#else
  e = exp2f(arg);
#endif
  const float h = t * e;
  return x * (x >= 0.0f ? 1.0f - h : h);  // x (1 - h), not x - x h: GELU(inf) is inf, not inf - inf
}

}  // namespace tessera::cuda
