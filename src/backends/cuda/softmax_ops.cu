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

template <SoftmaxKind K, class T>
void softmax_typed(const void* x, void* y, const RowView& v, cudaStream_t s) {
  auto* in = static_cast<const T*>(x);
  auto* out = static_cast<T*>(y);
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
