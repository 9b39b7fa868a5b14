// Accurate vectorised float32 elementwise math for the own elementwise kernels (own_eltwise_kernel.cpp):
// exp, expm1, log, log(1 + u) and the activations built on them (Sigmoid, Softplus, Tanh, Elu, QuickGelu).
// Every function is within 2 ulp of the correctly rounded result over the whole float32 range (tested
// by tests/accuracy): subnormal results are not flushed, the IEEE special values come out right, and
// the forms do not cancel (Softplus is max(x, 0) + log1p(exp(-|x|)), Sigmoid of a negative x is
// e / (1 + e) with e = exp(x), Tanh is expm1(2|x|) / (expm1(2|x|) + 2)).
//
// The code is written once over GCC vector types of W lanes and compiled three times, by
// own_eltwise_avx512.cpp (W 16), own_eltwise_avx2.cpp (W 8) and own_eltwise_kernel.cpp (W 1, any
// CPU), each after a `#pragma GCC target` and inside its own namespace OWN_ELTWISE_NS, so that the
// ISA-specific copies never merge. Only arithmetic the compiler maps onto the ISA is used: explicit
// fused multiply-adds (OWN_ELTWISE_FMA) and, for rounding to an integer, the 1.5 * 2^23 trick.
//
// Include this header only after the standard headers and the `#pragma GCC target` of the unit.
#pragma once
// (each including unit defines OWN_ELTWISE_NS, OWN_ELTWISE_W and OWN_ELTWISE_FMA first)

#include "backends/cpu/own_eltwise.h"

namespace tessera::cpu::OWN_ELTWISE_NS {
namespace {

constexpr int W = OWN_ELTWISE_W;
typedef float F __attribute__((vector_size(4 * W)));
typedef int32_t I __attribute__((vector_size(4 * W)));

inline F splat(float v) {
  return F{} + v;
}
inline F fma(F a, F b, F c) {
  return OWN_ELTWISE_FMA(a, b, c);
}
inline I bits(F x) {
  return (I)x;  // a cast between vector types of one size keeps the bits
}
inline F from_bits(I i) {
  return (F)i;
}
inline F select(I mask, F a, F b) {  // mask lanes all ones: a, zero: b (a blend instruction)
  return mask ? a : b;
}
inline F fabs(F x) {
  return from_bits(bits(x) & 0x7fffffff);
}
inline I is_nan(F x) {
  return x != x;
}
// min and max with a constant bound b that keep a NaN in a (the comparison is false for NaN).
inline F vmin(F a, F b) {
  return b < a ? b : a;
}
inline F vmax(F a, F b) {
  return b > a ? b : a;
}
// 1 / d for finite d != 0: the ISA's reciprocal estimate refined by a Newton step where the unit
// defines OWN_ELTWISE_RCP (AVX-512's 14-bit vrcp14ps: within an ulp, a third of a division's cost),
// else a division.
inline F rcp(F d) {
#ifdef OWN_ELTWISE_RCP
  F r = OWN_ELTWISE_RCP(d);
  return fma(r, fma(-d, r, splat(1.0f)), r);
#else
  return 1.0f / d;
#endif
}

// Round to the nearest integer (ties to even) for |x| < 2^22: adding 1.5 * 2^23 leaves no fraction bits.
inline F round_int(F x) {
  const F magic = splat(12582912.0f);
  return (x + magic) - magic;
}
// 2^k for integer-valued k in [-126, 127], built from its exponent bits.
inline F pow2(F k) {
  I ki = __builtin_convertvector(k, I);
  return from_bits((ki + 127) << 23);
}

constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693145751953125f;        // ln 2 with 9 trailing zero bits: n * kLn2Hi is exact
constexpr float kLn2Lo = 1.42860676533018708e-06f;  // ln 2 - kLn2Hi

// x - n ln 2 in two exact-ish steps (Cody and Waite), n = round(x / ln 2).
inline F reduce_ln2(F x, F n) {
  F r = fma(-n, splat(kLn2Hi), x);
  return fma(-n, splat(kLn2Lo), r);
}

// exp(r) - 1 for |r| <= ln(2) / 2 + a little: r + r^2 (1/2 + r/6 + ... + r^6/8!), Taylor to r^8
// (the next term is below 1e-9 relative). Written as r + r * (r * Q) so the rounding of the small
// part costs a fraction of an ulp.
inline F expm1_small(F r) {
  F q = splat(1.0f / 40320);
  q = fma(q, r, splat(1.0f / 5040));
  q = fma(q, r, splat(1.0f / 720));
  q = fma(q, r, splat(1.0f / 120));
  q = fma(q, r, splat(1.0f / 24));
  q = fma(q, r, splat(1.0f / 6));
  q = fma(q, r, splat(0.5f));
  return fma(r * q, r, r);
}

// exp(x) = a * s over the whole float range, with a = exp(r) 2^n1 and s = 2^(n - n1) both normal
// (|n1|, |n - n1| <= 108): a caller can scale a first and multiply by s last, so that a result in the
// subnormal range is rounded once instead of flushed.
inline void exp_parts(F x, F& a, F& s) {
  F xc = vmin(vmax(x, splat(-150.0f)), splat(89.0f));
  F n = round_int(xc * kLog2e);
  F r = reduce_ln2(xc, n);
  // exp(r), Taylor to r^7 (the next term is 5e-9 relative for |r| <= ln(2) / 2).
  F p = splat(1.0f / 5040);
  for (float c : {1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f}) p = fma(p, r, splat(c));
  p = fma(p, r, splat(1.0f));
  F n1 = round_int(n * 0.5f);
  a = p * pow2(n1);
  s = pow2(n - n1);
}

inline F exp(F x) {  // NaN passes through the clamps and the arithmetic
  F a, s;
  exp_parts(x, a, s);
  return a * s;
}

// exp(x) - 1 = 2^n expm1(r) + (2^n - 1), which does not cancel for n != 0 (n = 0: expm1(r) itself),
// written as 2 (h expm1(r) + (h - 1/2)) with h = 2^(n-1) so that n = 128 (x near the overflow) still
// has a float h (n = 0: expm1(r) itself); -1 below -25.
inline F expm1(F x) {
  F xc = vmin(vmax(x, splat(-25.0f)), splat(89.0f));
  F n = round_int(xc * kLog2e);
  F r = reduce_ln2(xc, n);
  F e = expm1_small(r);
  F h = pow2(n - 1.0f);
  return select(n == 0.0f, e,
                2.0f * fma(h, e, h - 0.5f));  // n = 0: e itself (halving would lose a subnormal)
}

// log(x): x = 2^k m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), s = f / (2 + f) and
// log(1 + f) = f - (f^2/2 - s (f^2/2 + R(s^2))) with R the atanh series; then k ln 2 in two parts.
inline F log(F x) {
  I sub = x < 1.17549435e-38f;  // subnormal (and zero, negative): scaled by 2^23 first
  F xs = select(sub, x * 8388608.0f, x);
  F kadj = select(sub, splat(-23.0f), splat(0.0f));
  I b = bits(xs);
  I m_bits = (b & 0x007fffff) | 0x3f800000;
  F k = __builtin_convertvector(((b >> 23) & 0xff) - 127, F) + kadj;
  F m = from_bits(m_bits);
  I big = m > 1.41421356f;
  m = select(big, m * 0.5f, m);
  k = select(big, k + 1.0f, k);
  F f = m - 1.0f;
  F s = f * rcp(f + 2.0f);
  F z = s * s;
  F r = splat(2.0f / 13);
  r = fma(r, z, splat(2.0f / 11));
  r = fma(r, z, splat(2.0f / 9));
  r = fma(r, z, splat(2.0f / 7));
  r = fma(r, z, splat(2.0f / 5));
  r = fma(r, z, splat(2.0f / 3));
  r = r * z;
  F hfsq = 0.5f * f * f;
  F y = k * kLn2Hi - ((hfsq - fma(s, hfsq + r, k * kLn2Lo)) - f);
  y = select(x == 0.0f, splat(-__builtin_inff()), y);
  y = select(x < 0.0f, splat(__builtin_nanf("")), y);
  y = select(x == __builtin_inff(), x, y);
  return select(is_nan(x), x, y);
}

// log(1 + u) for u in [0, 1] (Softplus's log1p(exp(-|x|))), without the bit work of log(): 1 + u =
// 2^k (1 + f) with f = u (k = 0) for u <= 1/2, else f = (u - 1) / 2 (exact) and k = 1; then the same
// series as log(). f is exact, so nothing is lost to the rounding of 1 + u.
inline F log1p_unit(F u) {
  I big = u > 0.5f;
  F f = select(big, (u - 1.0f) * 0.5f, u);
  F k = select(big, splat(1.0f), splat(0.0f));
  F s = f * rcp(f + 2.0f);
  F z = s * s;
  F r = splat(2.0f / 13);
  for (float c : {2.0f / 11, 2.0f / 9, 2.0f / 7, 2.0f / 5, 2.0f / 3}) r = fma(r, z, splat(c));
  r = r * z;
  F hfsq = 0.5f * f * f;
  return k * kLn2Hi - ((hfsq - fma(s, hfsq + r, k * kLn2Lo)) - f);
}

inline F copy_sign(F magnitude, F sign_of) {
  return from_bits((bits(magnitude) & 0x7fffffff) | (bits(sign_of) & int32_t(0x80000000)));
}

// Subnormal intermediates are avoided where the result does not need them: an operation with a
// subnormal result costs a microcode assist (~100 cycles) on many x86 cores. So exp(-|x|) = a s is
// only formed where it shows: in 1 + e for |x| < 80, in the result for negative x.

inline F sigmoid(F x) {  // one division: 1 / (1 + e), times e for x < 0
  F a, s;
  exp_parts(-fabs(x), a, s);
  F inv = rcp(fma(a, select(fabs(x) < 80.0f, s, splat(0.0f)), splat(1.0f)));
  F y = select(x >= 0.0f, inv, (a * inv) * select(x < 0.0f, s, splat(0.0f)));
  return select(is_nan(x), x, y);
}

// x sigmoid(z) where z = zh + zl is known to about twice float precision (zl: the rounding errors of
// computing z): exp(-|zh|) times (1 -+ zl), since rounding z alone would cost |z| ulps (60 near
// z = -80). For z < 0 the result is x e / (1 + e), scaled into the subnormal range last (exp_parts).
inline F x_sigmoid(F x, F zh, F zl) {
  zl = select(fabs(zl) < 1.0f, zl, splat(0.0f));  // z infinite: no correction
  F a, s;
  exp_parts(-fabs(zh), a, s);
  a = fma(a, select(zh >= 0.0f, -zl, zl), a);
  F inv = rcp(fma(a, select(fabs(zh) < 80.0f, s, splat(0.0f)), splat(1.0f)));
  F neg = ((x * a) * inv) * select(zh < 0.0f, s, splat(0.0f));
  neg = select(zh < -150.0f, x * 0.0f, neg);
  F y = select(zh >= 0.0f, x * inv, neg);
  return select(is_nan(x), x, y);
}

// x sigmoid(alpha x) (QuickGelu, Swish).
inline F quick_gelu(F x, float alpha) {
  F al = splat(alpha);
  F z = al * x;
  return x_sigmoid(x, z, fma(al, x, -z));
}

// The tanh GELU, x (1 + tanh(k (x + 0.044715 x^3))) / 2 = x sigmoid(u), u = x (c1 + c3 x^2) with c1 =
// 2k and c3 = 2k 0.044715, k = sqrt(2 / pi); the constants and every product carried with their
// rounding errors, so that u is known to ~1e-14 relative (its rounding alone would cost |u| ulps).
inline F gelu_tanh(F x) {
  const F c1h = splat(1.595769167e+00f), c1l = splat(-4.534068054e-08f);
  const F c3h = splat(7.135481387e-02f), c3l = splat(2.398832466e-09f);
  F x2h = x * x;
  F x2l = fma(x, x, -x2h);
  F m = c3h * x2h;
  F m_err = fma(c3h, x2h, -m);
  F sh = c1h + m;  // c1h > m's magnitude only when |x| < 4.7: the two-sum below is exact either way
  F bb = sh - c1h;
  F s_err = (c1h - (sh - bb)) + (m - bb);
  F pl = s_err + m_err + c1l + fma(c3h, x2l, c3l * x2h);
  F uh = x * sh;
  F ul = fma(x, sh, -uh) + x * pl;
  F y = x_sigmoid(x, uh, ul);
  return select(fabs(x) > 1e18f, select(x > 0.0f, x, x * 0.0f), y);  // x^3 would overflow
}

// The erf GELU, x Phi(x) = x (1 + erf(x / sqrt 2)) / 2. For |x| <= 0.75: erf(x / sqrt 2) = x Q(x^2),
// the Taylor series to x^19. Beyond, with a = |x|, x Phi(x) = x - e G(a) / 2 for x > 0 and
// -e G(a) / 2 for x < 0, where e = exp(-x^2 / 2) (x^2 split into two floats, so that its rounding
// does not cost x^2 / 2 ulps) and G(a) = a erfcx(a / sqrt 2), smooth, as a degree-16 polynomial in
// 1 / a fitted on [0.75, 14.5] (Chebyshev interpolation, 0.6 ulp). Nothing cancels: 1 + erf over
// [-0.75, 0.75] is within [0.45, 1.55]; x - e G / 2 is at least 0.85 x.
inline F gelu_erf(F x) {
  F x2 = x * x;
  F q = splat(-2.260234361e-10f);
  for (float c : {4.547059618e-09f, -8.245334726e-08f, 1.331938734e-06f, -1.888931183e-05f, 2.308693802e-04f,
                  -2.374656498e-03f, 1.994711347e-02f, -1.329807639e-01f, 7.978845835e-01f})
    q = fma(q, x2, splat(c));
  F hx = 0.5f * x;
  F small = fma(hx, x * q, hx);

  F a = vmin(fabs(x), splat(14.5f));
  F yv = fma(rcp(vmax(a, splat(0.75f))), splat(1.5818181818181818f), splat(-1.109090909090909f));
  F g = splat(-3.282116086e-04f);
  for (float c : {4.981259117e-04f, 7.571434253e-04f, -1.470099553e-03f, -9.671811131e-05f, 5.408265861e-04f,
                  9.777910309e-04f, -1.004102873e-03f, -8.411165909e-04f, 3.410373116e-03f, -7.470814046e-03f,
                  1.317426469e-02f, -1.721194014e-02f, 8.890891448e-03f, 3.992213309e-02f, -1.959372014e-01f,
                  6.065373421e-01f})
    g = fma(g, yv, splat(c));
  F x2l = select(x2 < 300.0f, fma(x, x, -x2), splat(0.0f));  // beyond, exp(-x^2 / 2) is 0 anyway
  F ea, es;
  exp_parts(-0.5f * x2, ea, es);  // halving is exact
  ea = fma(ea, -0.5f * x2l, ea);  // times exp(-x2l / 2)
  F neg = ((-0.5f * g) * ea) * select(x < 0.0f, es, splat(0.0f));
  neg = select(x < -14.5f, x * 0.0f, neg);
  // Past x = 9 the term is below x's ulp: left out, so that no lane computes a subnormal it does not
  // need (a subnormal result costs a microcode assist of ~100 cycles on many x86 cores).
  F pos = x - (0.5f * g) * (ea * select(x < 9.0f, es, splat(0.0f)));
  F y = select(fabs(x) <= 0.75f, small, select(x < 0.0f, neg, pos));
  return select(is_nan(x), x, y);
}

inline F softplus(F x) {  // e = exp(-|x|) left out past x = 80, where it is below x's ulp
  F a, s;
  exp_parts(-fabs(x), a, s);
  F e = a * select(x < 80.0f, s, splat(0.0f));
  F y = vmax(x, splat(0.0f)) + log1p_unit(e);
  return select(is_nan(x), x, y);
}

inline F tanh(F x) {
  F a = fabs(x);
  F t = expm1(a + a);
  F y = t * rcp(t + 2.0f);  // t infinite (|x| > 44): replaced below
  y = select(a > 9.1f, splat(1.0f), y);
  return select(is_nan(x), x, copy_sign(y, x));
}

inline F apply(const EltwiseOp& op, F x) {
  switch (op.kind) {
    case EltwiseKind::kExp:
      return exp(x);
    case EltwiseKind::kLog:
      return log(x);
    case EltwiseKind::kSigmoid:
      return sigmoid(x);
    case EltwiseKind::kSoftplus:
      return softplus(x);
    case EltwiseKind::kTanh:
      return tanh(x);
    case EltwiseKind::kElu:
      return select(x >= 0.0f, x, op.alpha * expm1(x));
    case EltwiseKind::kQuickGelu:
      return quick_gelu(x, op.alpha);
    case EltwiseKind::kGeluErf:
      return gelu_erf(x);
    case EltwiseKind::kGeluTanh:
      return gelu_tanh(x);
    case EltwiseKind::kRelu:  // NaN and -0 pass through (oneDNN's relu makes NaN 0)
      return select(x < 0.0f, splat(0.0f), x);
    case EltwiseKind::kLeakyRelu:
      return select(x < 0.0f, op.alpha * x, x);
    case EltwiseKind::kHardSigmoid: {  // max(0, min(1, alpha x + beta)), NaN kept (as the reference)
      F y = fma(splat(op.alpha), x, splat(op.beta));  // rounded once
      y = select(y > 1.0f, splat(1.0f), y);
      return select(y < 0.0f, splat(0.0f), y);
    }
  }
  return x;
}

}  // namespace

// y[i] = op(x[i] + bias[i % bias_len]) for i in [0, n) (no bias when bias_len is 0); the last partial
// vector goes through a padded copy, so every element gets the same arithmetic wherever it sits.
void eltwise_run(const EltwiseOp& op, const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    F v;
    __builtin_memcpy(&v, x + i, sizeof v);
    v = apply(op, v);
    __builtin_memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {
    F v = splat(0.0f);
    __builtin_memcpy(&v, x + i, sizeof(float) * static_cast<size_t>(n - i));
    v = apply(op, v);
    __builtin_memcpy(y + i, &v, sizeof(float) * static_cast<size_t>(n - i));
  }
}

}  // namespace tessera::cpu::OWN_ELTWISE_NS
