// Seeded uniform [-1, 1) floats for the own-kernel tests (pointwise, depthwise, GEMM), which check
// against plain loops over raw buffers rather than through tensors.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace tessera::test {

inline std::vector<float> random_vector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

}  // namespace tessera::test
