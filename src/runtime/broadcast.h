// Multidirectional (NumPy-style) broadcasting for elementwise kernels.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace tessera::rt {

// The broadcast shape of several shapes; KernelError naming both shapes when they do not broadcast.
Shape broadcast_shapes(std::span<const Shape* const> shapes);
Shape broadcast_shapes(const Shape& a, const Shape& b);

// Element strides of `in` (row-major) aligned to `out`'s rank, with 0 on broadcast dimensions.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

// Calls fn(out_index, {offset into input k...}) for every element of `out`, split over threads by
// rows of the last dimension. Equal shapes and scalars take a flat loop.
template <size_t N, class F>
void for_each_broadcast(ThreadPool* pool, const Shape& out, const std::array<const Shape*, N>& ins, F&& fn) {
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  if (total == 0) return;
  std::array<bool, N> flat{};
  bool all_flat = true;
  for (size_t k = 0; k < N; ++k) {
    int64_t n = 1;
    for (int64_t d : *ins[k]) n *= d;
    flat[k] = n == total;  // same element count as the output: same layout, index directly
    all_flat = all_flat && (flat[k] || n == 1);
  }
  constexpr int64_t kGrain = 16384;
  if (all_flat) {
    auto body = [&](int64_t b, int64_t e) {
      std::array<int64_t, N> off{};
      for (int64_t i = b; i < e; ++i) {
        for (size_t k = 0; k < N; ++k) off[k] = flat[k] ? i : 0;
        fn(i, off);
      }
    };
    if (pool && total > kGrain)
      pool->parallel_for(total, kGrain, body);
    else
      body(0, total);
    return;
  }
  const int rank = static_cast<int>(out.size());
  std::array<std::vector<int64_t>, N> strides;
  for (size_t k = 0; k < N; ++k) strides[k] = broadcast_strides(*ins[k], out);
  const int64_t inner = out[rank - 1];
  const int64_t rows = total / inner;
  auto body = [&](int64_t rb, int64_t re) {
    std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
    // Position of row rb.
    int64_t r = rb;
    for (int d = rank - 2; d >= 0; --d) {
      idx[d] = r % out[d];
      r /= out[d];
    }
    for (int64_t row = rb; row < re; ++row) {
      std::array<int64_t, N> base{};
      for (size_t k = 0; k < N; ++k)
        for (int d = 0; d < rank - 1; ++d) base[k] += idx[d] * strides[k][d];
      std::array<int64_t, N> off{};
      for (int64_t j = 0; j < inner; ++j) {
        for (size_t k = 0; k < N; ++k) off[k] = base[k] + j * strides[k][rank - 1];
        fn(row * inner + j, off);
      }
      for (int d = rank - 2; d >= 0; --d) {
        if (++idx[d] < out[d]) break;
        idx[d] = 0;
      }
    }
  };
  if (pool && total > kGrain)
    pool->parallel_for(rows, std::max<int64_t>(1, kGrain / inner), body);
  else
    body(0, rows);
}

}  // namespace tessera::rt
