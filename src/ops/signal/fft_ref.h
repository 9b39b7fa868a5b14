// A plain complex DFT in double for the DFT and STFT reference kernels: radix-2 FFT when the length is
// a power of two, the O(n^2) sum otherwise. Twiddles are computed from (j * k) mod n so that long
// transforms do not lose precision in the angle.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <utility>
#include <vector>

namespace tessera::ops::fft_ref {

using Complex = std::complex<double>;

inline Complex twiddle(int64_t jk, int64_t n, bool inverse) {
  const double angle = 2.0 * std::numbers::pi * static_cast<double>(jk % n) / static_cast<double>(n);
  return {std::cos(angle), inverse ? std::sin(angle) : -std::sin(angle)};
}

// Unnormalised transform in place: X[k] = sum_j x[j] exp(-+2 pi i j k / n) (+ for inverse).
inline void transform(std::vector<Complex>& a, bool inverse) {
  const int64_t n = static_cast<int64_t>(a.size());
  if (n <= 1) return;
  if ((n & (n - 1)) != 0) {
    std::vector<Complex> out(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      Complex acc = 0;
      for (int64_t j = 0; j < n; ++j) acc += a[j] * twiddle(j * k % n, n, inverse);
      out[k] = acc;
    }
    a.swap(out);
    return;
  }
  // Iterative radix-2: bit-reversal permutation, then butterflies.
  for (int64_t i = 1, j = 0; i < n; ++i) {
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (int64_t len = 2; len <= n; len <<= 1) {
    const int64_t half = len / 2;
    for (int64_t start = 0; start < n; start += len) {
      for (int64_t k = 0; k < half; ++k) {
        const Complex w = twiddle(k, len, inverse);
        const Complex u = a[start + k], v = a[start + k + half] * w;
        a[start + k] = u + v;
        a[start + k + half] = u - v;
      }
    }
  }
}

}  // namespace tessera::ops::fft_ref
