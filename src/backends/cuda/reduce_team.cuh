// Device helpers shared by the reduction, softmax and normalisation kernels: a "team" of threads that
// reduces one group of elements together (one thread, one warp or one 256-thread block), NaN-propagating
// max/min and a compensated (Kahan) running sum, so that a thread's partial sum over thousands of
// float32 values stays within a few ulp before the tree combines the partials.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/device_types.cuh"

namespace tessera::cuda {

inline constexpr int kBlock = 256;  // threads per block of every kernel here

__device__ __forceinline__ float shfl_xor(float v, int o) {
  return __shfl_xor_sync(0xffffffffu, v, o);
}
__device__ __forceinline__ long long shfl_xor(long long v, int o) {
  return __shfl_xor_sync(0xffffffffu, v, o);
}
__device__ __forceinline__ double shfl_xor(double v, int o) {
  return __shfl_xor_sync(0xffffffffu, v, o);
}

// Max and min where a NaN operand wins (fmaxf would drop it).
__device__ __forceinline__ float nan_max(float a, float b) {
  return (a != a || b != b) ? a + b : fmaxf(a, b);
}
__device__ __forceinline__ float nan_min(float a, float b) {
  return (a != a || b != b) ? a + b : fminf(a, b);
}
__device__ __forceinline__ double nan_max(double a, double b) {
  return (a != a || b != b) ? a + b : fmax(a, b);
}
__device__ __forceinline__ double nan_min(double a, double b) {
  return (a != a || b != b) ? a + b : fmin(a, b);
}

// Kahan summation: `c` holds the low-order part lost so far. Once the sum is no longer finite the
// compensation is dropped (inf - inf would turn it into NaN).
struct KahanSum {
  float s = 0.0f, c = 0.0f;
  __device__ __forceinline__ void add(float v) {
    float y = v - c;
    float t = s + y;
    c = isfinite(t) ? (t - s) - y : 0.0f;
    s = t;
  }
  __device__ __forceinline__ float value() const { return s - c; }
};

// Reduces v over the team (Team threads: 1, 32 or kBlock) with `op`; every thread of the team gets the
// result. For Team == kBlock every thread of the block must call it (it synchronises the block).
template <int Team, class V, class Op>
__device__ __forceinline__ V team_reduce(V v, Op op) {
  if constexpr (Team == 1) {
    return v;
  } else {
    for (int o = 16; o > 0; o >>= 1) v = op(v, shfl_xor(v, o));
    if constexpr (Team == 32) {
      return v;
    } else {
      __shared__ V partial[kBlock / 32];
      __syncthreads();  // the previous call's readers are done with `partial`
      if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
      __syncthreads();
      v = partial[0];
      for (int w = 1; w < kBlock / 32; ++w) v = op(v, partial[w]);  // fixed order: deterministic
      return v;
    }
  }
}

// The team this thread belongs to, counting teams over the whole grid, and its lane in the team.
template <int Team>
struct TeamIndex {
  int64_t team, teams;
  int lane;
  __device__ TeamIndex() {
    constexpr int per_block = kBlock / Team;
    team = int64_t{blockIdx.x} * per_block + threadIdx.x / Team;
    teams = int64_t{gridDim.x} * per_block;
    lane = static_cast<int>(threadIdx.x % Team);
  }
};

// Blocks for `groups` teams of `team` threads, capped (the kernels loop over the rest).
inline unsigned blocks_for_teams(int64_t groups, int team) {
  const int64_t per_block = kBlock / team;
  int64_t b = (groups + per_block - 1) / per_block;
  if (b < 1) b = 1;
  return static_cast<unsigned>(b < (int64_t{1} << 20) ? b : (int64_t{1} << 20));
}

// The team size for groups of n elements: a thread for tiny groups, a warp for rows up to a few
// thousand when there are enough of them to fill the GPU, else a block.
// `strided`: a group's elements lie apart in memory while neighbouring groups lie side by side (a
// reduction over a leading axis, a softmax over a middle one): a thread per group then reads memory
// coalesced, a warp per group would not.
inline int team_for(int64_t groups, int64_t n, bool strided = false) {
  if (n <= 8) return 1;
  if (strided && groups >= 4096) return 1;
  if (n <= 4096 && groups >= 512) return 32;
  return kBlock;
}

}  // namespace tessera::cuda
