#include "backends/cuda/reduce_team.cuh"
#include "backends/cuda/softmax_ops.h"

namespace tessera::cuda {

namespace {

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};
// The smaller of two indices: the first position holding the maximum.
struct FirstOp {
  __device__ long long operator()(long long a, long long b) const { return a < b ? a : b; }
};

template <SoftmaxKind K, int Team, class T>
__global__ void softmax_kernel(const T* x, T* y, RowView v) {
  TeamIndex<Team> ti;
  const int64_t groups = v.outer * v.inner;
  for (int64_t g = ti.team; g < groups; g += ti.teams) {
    const int64_t base = (g / v.inner) * v.n * v.inner + g % v.inner;
    float mx = -INFINITY;
    for (int64_t r = ti.lane; r < v.n; r += Team) mx = fmaxf(mx, load(x, base + r * v.inner));
    mx = team_reduce<Team>(mx, MaxOp{});
    if constexpr (K == SoftmaxKind::kHardmax) {
      // The first index holding the maximum; the reference starts from element 0 and compares with `>`,
      // so a NaN there (or a row of NaN) picks index 0.
      long long first = v.n;
      for (int64_t r = ti.lane; r < v.n; r += Team)
        if (load(x, base + r * v.inner) == mx) {
          first = r;
          break;
        }
      first = team_reduce<Team>(first, FirstOp{});
      const float x0 = load(x, base);
      if (x0 != x0 || first == v.n) first = 0;
      for (int64_t r = ti.lane; r < v.n; r += Team) store(y, base + r * v.inner, r == first ? 1.0f : 0.0f);
    } else {
      KahanSum acc;
      for (int64_t r = ti.lane; r < v.n; r += Team) acc.add(expf(load(x, base + r * v.inner) - mx));
      const float sum = team_reduce<Team>(acc.value(), SumOp{});
      if constexpr (K == SoftmaxKind::kSoftmax) {
        const float inv = 1.0f / sum;
        for (int64_t r = ti.lane; r < v.n; r += Team) {
          const int64_t off = base + r * v.inner;
          store(y, off, expf(load(x, off) - mx) * inv);
        }
      } else {
        // (x - max) <= 0 and log(sum) >= 0 are subtracted last: no cancellation, so the result keeps a
        // few ulp relative to itself even where the logits are in the thousands.
        const float log_sum = logf(sum);
        for (int64_t r = ti.lane; r < v.n; r += Team) {
          const int64_t off = base + r * v.inner;
          store(y, off, (load(x, off) - mx) - log_sum);
        }
      }
    }
  }
}

// Rows along the last axis of up to 1024 elements (attention scores): one warp per row, the row read
// once into registers (element lane + 32 j in v[j]), with the same float32 arithmetic as softmax_kernel.
template <SoftmaxKind K, class T, int J>
__global__ void softmax_warp_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int n) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t{gridDim.x} * (blockDim.x / 32);
  for (int64_t row = int64_t{blockIdx.x} * (blockDim.x / 32) + threadIdx.x / 32; row < rows; row += warps) {
    const int64_t base = row * n;
    float v[J];
    float mx = -INFINITY;
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const int k = lane + 32 * j;
      v[j] = k < n ? load(x, base + k) : -INFINITY;
      mx = fmaxf(mx, v[j]);
    }
    mx = team_reduce<32>(mx, MaxOp{});
    KahanSum acc;
#pragma unroll
    for (int j = 0; j < J; ++j)
      if (lane + 32 * j < n) acc.add(expf(v[j] - mx));
    const float sum = team_reduce<32>(acc.value(), SumOp{});
    const float inv = 1.0f / sum, log_sum = logf(sum);
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const int k = lane + 32 * j;
      if (k >= n) continue;
      if constexpr (K == SoftmaxKind::kSoftmax)
        store(y, base + k, expf(v[j] - mx) * inv);
      else
        store(y, base + k, (v[j] - mx) - log_sum);
    }
  }
}

template <SoftmaxKind K, class T, int J>
void softmax_warp(const T* x, T* y, int64_t rows, int n, cudaStream_t s) {
  constexpr int kWarps = kBlock / 32;
  const int64_t blocks = (rows + kWarps - 1) / kWarps;
  const unsigned b = static_cast<unsigned>(blocks < 65535 * 32 ? blocks : 65535 * 32);
  softmax_warp_kernel<K, T, J><<<b, kBlock, 0, s>>>(x, y, rows, n);
}

template <SoftmaxKind K, class T>
void softmax_typed(const void* x, void* y, const RowView& v, cudaStream_t s) {
  auto* in = static_cast<const T*>(x);
  auto* out = static_cast<T*>(y);
  if constexpr (K != SoftmaxKind::kHardmax) {
    if (v.inner == 1 && v.n <= 1024) {
      const int n = static_cast<int>(v.n);
      const int per_lane = (n + 31) / 32;
      if (per_lane <= 2) return softmax_warp<K, T, 2>(in, out, v.outer, n, s);
      if (per_lane <= 4) return softmax_warp<K, T, 4>(in, out, v.outer, n, s);
      if (per_lane <= 8) return softmax_warp<K, T, 8>(in, out, v.outer, n, s);
      if (per_lane <= 16) return softmax_warp<K, T, 16>(in, out, v.outer, n, s);
      return softmax_warp<K, T, 32>(in, out, v.outer, n, s);
    }
  }
  const int64_t groups = v.outer * v.inner;
  const int team = team_for(groups, v.n, v.inner > 1);
  const unsigned b = blocks_for_teams(groups, team);
  if (team == 1) return softmax_kernel<K, 1, T><<<b, kBlock, 0, s>>>(in, out, v);
  if (team == 32) return softmax_kernel<K, 32, T><<<b, kBlock, 0, s>>>(in, out, v);
  softmax_kernel<K, kBlock, T><<<b, kBlock, 0, s>>>(in, out, v);
}

template <class T>
void softmax_kind(SoftmaxKind k, const void* x, void* y, const RowView& v, cudaStream_t s) {
  switch (k) {
    case SoftmaxKind::kSoftmax:
      return softmax_typed<SoftmaxKind::kSoftmax, T>(x, y, v, s);
    case SoftmaxKind::kLogSoftmax:
      return softmax_typed<SoftmaxKind::kLogSoftmax, T>(x, y, v, s);
    case SoftmaxKind::kHardmax:
      return softmax_typed<SoftmaxKind::kHardmax, T>(x, y, v, s);
  }
}

}  // namespace

void launch_softmax(SoftmaxKind k, ElemType t, const void* x, void* y, const RowView& v, cudaStream_t s) {
  if (v.outer * v.n * v.inner == 0) return;
  switch (t) {
    case ElemType::kFloat:
      return softmax_kind<float>(k, x, y, v, s);
    case ElemType::kHalf:
      return softmax_kind<__half>(k, x, y, v, s);
    case ElemType::kBFloat16:
      return softmax_kind<__nv_bfloat16>(k, x, y, v, s);
  }
}

}  // namespace tessera::cuda
