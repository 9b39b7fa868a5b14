#include "backends/cuda/norm_ops.h"
#include "backends/cuda/norm_rows.h"
#include "backends/cuda/reduce_team.cuh"

namespace tessera::cuda {

namespace {

struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// Element k of a row: x, or in the skip forms x + skip + bias summed in float32.
template <class T>
__device__ __forceinline__ float row_value(const T* x, const NormParams& p, int64_t base, int64_t k) {
  float v = load(x, base + k);
  if (p.skip) v += load(static_cast<const T*>(p.skip), (base + k) % p.skip_n);
  if (p.sum_bias) v += load(static_cast<const T*>(p.sum_bias), k);
  return v;
}

template <int Team, class T>
__global__ void row_norm_kernel(const T* x, const T* scale, const T* bias, T* y, float* mean_out,
                                float* inv_out, NormParams p) {
  TeamIndex<Team> ti;
  const float count = static_cast<float>(p.n);
  T* sum_out = static_cast<T*>(p.sum_out);
  for (int64_t row = ti.team; row < p.rows; row += ti.teams) {
    const int64_t base = row * p.n;
    // The row is shifted by its first element (x - pivot is exact for values within a factor of 2 of
    // it), so that a row near 1000 with a spread of 0.01 keeps its digits in the float32 mean.
    const float pivot = p.rms || p.n == 0 ? 0.0f : row_value(x, p, base, 0);
    float shifted_mean = 0.0f;
    if (!p.rms) {
      KahanSum acc;
      for (int64_t k = ti.lane; k < p.n; k += Team) acc.add(row_value(x, p, base, k) - pivot);
      shifted_mean = team_reduce<Team>(acc.value(), SumOp{}) / count;
    }
    KahanSum sq;
    for (int64_t k = ti.lane; k < p.n; k += Team) {
      const float d = (row_value(x, p, base, k) - pivot) - shifted_mean;
      sq.add(d * d);
    }
    const float var = team_reduce<Team>(sq.value(), SumOp{}) / count;
    const float inv = 1.0f / sqrtf(var + p.eps);
    if (ti.lane == 0) {
      if (mean_out) mean_out[row] = pivot + shifted_mean;
      if (inv_out) inv_out[row] = inv;
    }
    const int64_t pbase = (row % p.param_rows) * p.param_step;
    for (int64_t k = ti.lane; k < p.n; k += Team) {
      const int64_t pi = pbase + k / p.param_div;
      const float xv = row_value(x, p, base, k);
      float v = ((xv - pivot) - shifted_mean) * inv;
      if (scale) v *= load(scale, pi * p.scale_mult);
      if (bias) v += load(bias, pi * p.bias_mult);
      store(y, base + k, v);
      if (sum_out) store(sum_out, base + k, xv);
    }
  }
}

// The common rows (n <= 1024: the hidden sizes of transformers) with one warp per row, the row read
// once into registers (element lane + 32 j in v[j]), and the same two passes in float32 as
// row_norm_kernel, so the accuracy is the same. The parameters are per element (scale[k], bias[k]) and
// a skip input, when present, repeats whole rows.
template <class T, int J>
__global__ void row_norm_warp_kernel(const T* __restrict__ x, const T* __restrict__ scale,
                                     const T* __restrict__ bias, T* __restrict__ y, float* mean_out,
                                     float* inv_out, NormParams p) {
  const int lane = threadIdx.x % 32;
  const int n = static_cast<int>(p.n);
  const float count = static_cast<float>(p.n);
  const T* skip = static_cast<const T*>(p.skip);
  const T* sum_bias = static_cast<const T*>(p.sum_bias);
  T* sum_out = static_cast<T*>(p.sum_out);
  const int64_t warps = int64_t{gridDim.x} * (blockDim.x / 32);
  for (int64_t row = int64_t{blockIdx.x} * (blockDim.x / 32) + threadIdx.x / 32; row < p.rows; row += warps) {
    const int64_t base = row * p.n;
    const int64_t skip_base = skip ? base % p.skip_n : 0;
    float v[J];
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const int k = lane + 32 * j;
      float a = 0.0f;
      if (k < n) {
        a = load(x, base + k);
        if (skip) a += load(skip, skip_base + k);
        if (sum_bias) a += load(sum_bias, k);
      }
      v[j] = a;
    }
    const float pivot = p.rms ? 0.0f : __shfl_sync(0xffffffffu, v[0], 0);
    float shifted_mean = 0.0f;
    if (!p.rms) {
      KahanSum acc;
#pragma unroll
      for (int j = 0; j < J; ++j)
        if (lane + 32 * j < n) acc.add(v[j] - pivot);
      shifted_mean = team_reduce<32>(acc.value(), SumOp{}) / count;
    }
    KahanSum sq;
#pragma unroll
    for (int j = 0; j < J; ++j) {
      if (lane + 32 * j >= n) continue;
      const float d = (v[j] - pivot) - shifted_mean;
      sq.add(d * d);
    }
    const float var = team_reduce<32>(sq.value(), SumOp{}) / count;
    const float inv = 1.0f / sqrtf(var + p.eps);
    if (lane == 0) {
      if (mean_out) mean_out[row] = pivot + shifted_mean;
      if (inv_out) inv_out[row] = inv;
    }
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const int k = lane + 32 * j;
      if (k >= n) continue;
      float o = ((v[j] - pivot) - shifted_mean) * inv;
      if (scale) o *= load(scale, k);
      if (bias) o += load(bias, k);
      store(y, base + k, o);
      if (sum_out) store(sum_out, base + k, v[j]);
    }
  }
}

// Whether row_norm_warp_kernel takes the rows of p.
bool warp_rows(const NormParams& p, const void* scale, const void* bias) {
  return p.n >= 1 && p.n <= 1024 && p.param_rows == 1 && p.param_div == 1 && (!scale || p.scale_mult == 1) &&
         (!bias || p.bias_mult == 1) && (!p.skip || p.skip_n % p.n == 0);
}

template <class T, int J>
void row_norm_warp(const T* x, const T* scale, const T* bias, T* y, float* mean, float* inv,
                   const NormParams& p, cudaStream_t s) {
  constexpr int kWarps = kBlock / 32;
  const int64_t blocks = (p.rows + kWarps - 1) / kWarps;
  const unsigned b = static_cast<unsigned>(blocks < 65535 * 32 ? blocks : 65535 * 32);
  row_norm_warp_kernel<T, J><<<b, kBlock, 0, s>>>(x, scale, bias, y, mean, inv, p);
}

template <class T>
__global__ void batch_norm_kernel(const T* x, const T* scale, const T* bias, const T* mean, const T* var,
                                  T* y, int64_t total, int64_t channels, int64_t spatial, float eps) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t c = (i / spatial) % channels;
    const float inv = 1.0f / sqrtf(load(var, c) + eps);
    store(y, i, (load(x, i) - load(mean, c)) * inv * load(scale, c) + load(bias, c));
  }
}

__device__ __forceinline__ int64_t offset_of(int64_t i, int rank, const int64_t* dims,
                                             const int64_t* strides) {
  int64_t off = 0;
  for (int d = rank - 1; d > 0; --d) {
    off += (i % dims[d]) * strides[d];
    i /= dims[d];
  }
  return rank > 0 ? off + i * strides[0] : 0;
}

template <GroupNormKind K, int Team, class T>
__global__ void group_stat_norm_kernel(const T* x, T* y, ReduceGeom geom) {
  TeamIndex<Team> ti;
  const float count = static_cast<float>(geom.n);
  auto at = [&](int64_t base, int64_t r) {
    return base + offset_of(r, geom.red_rank, geom.red_dims, geom.red_strides);
  };
  for (int64_t g = ti.team; g < geom.groups; g += ti.teams) {
    const int64_t base = offset_of(g, geom.kept_rank, geom.kept_dims, geom.kept_strides);
    if constexpr (K == GroupNormKind::kMeanVariance) {
      // Shifted by the group's first element, as in the row norms.
      const float pivot = geom.n > 0 ? load(x, at(base, 0)) : 0.0f;
      KahanSum acc;
      for (int64_t r = ti.lane; r < geom.n; r += Team) acc.add(load(x, at(base, r)) - pivot);
      const float mean = team_reduce<Team>(acc.value(), SumOp{}) / count;
      KahanSum sq;
      for (int64_t r = ti.lane; r < geom.n; r += Team) {
        const float d = (load(x, at(base, r)) - pivot) - mean;
        sq.add(d * d);
      }
      const float sd = sqrtf(team_reduce<Team>(sq.value(), SumOp{}) / count) + 1e-9f;
      for (int64_t r = ti.lane; r < geom.n; r += Team) {
        const int64_t off = at(base, r);
        store(y, off, ((load(x, off) - pivot) - mean) / sd);
      }
    } else {
      KahanSum acc;
      for (int64_t r = ti.lane; r < geom.n; r += Team) {
        const float v = load(x, at(base, r));
        acc.add(K == GroupNormKind::kL1 ? fabsf(v) : v * v);
      }
      float norm = team_reduce<Team>(acc.value(), SumOp{});
      if (K == GroupNormKind::kL2) norm = sqrtf(norm);
      for (int64_t r = ti.lane; r < geom.n; r += Team) {
        const int64_t off = at(base, r);
        store(y, off, norm == 0.0f ? 0.0f : load(x, off) / norm);
      }
    }
  }
}

template <GroupNormKind K, class T>
void group_stat_norm_typed(const void* x, void* y, const ReduceGeom& geom, cudaStream_t s) {
  auto* in = static_cast<const T*>(x);
  auto* out = static_cast<T*>(y);
  const bool strided = geom.red_rank > 0 && geom.red_strides[geom.red_rank - 1] != 1 && geom.kept_rank > 0 &&
                       geom.kept_strides[geom.kept_rank - 1] == 1;
  const int team = team_for(geom.groups, geom.n, strided);
  const unsigned b = blocks_for_teams(geom.groups, team);
  if (team == 1) return group_stat_norm_kernel<K, 1, T><<<b, kBlock, 0, s>>>(in, out, geom);
  if (team == 32) return group_stat_norm_kernel<K, 32, T><<<b, kBlock, 0, s>>>(in, out, geom);
  group_stat_norm_kernel<K, kBlock, T><<<b, kBlock, 0, s>>>(in, out, geom);
}

template <class T>
void group_stat_norm_kind(GroupNormKind k, const void* x, void* y, const ReduceGeom& geom, cudaStream_t s) {
  switch (k) {
    case GroupNormKind::kL1:
      return group_stat_norm_typed<GroupNormKind::kL1, T>(x, y, geom, s);
    case GroupNormKind::kL2:
      return group_stat_norm_typed<GroupNormKind::kL2, T>(x, y, geom, s);
    case GroupNormKind::kMeanVariance:
      return group_stat_norm_typed<GroupNormKind::kMeanVariance, T>(x, y, geom, s);
  }
}

template <class T>
void row_norm_typed(const void* x, const void* scale, const void* bias, void* y, float* mean, float* inv,
                    const NormParams& p, cudaStream_t s) {
  auto* in = static_cast<const T*>(x);
  auto* sc = static_cast<const T*>(scale);
  auto* bi = static_cast<const T*>(bias);
  auto* out = static_cast<T*>(y);
  if (warp_rows(p, scale, bias)) {
    const int64_t per_lane = (p.n + 31) / 32;
    if (per_lane <= 4) return row_norm_warp<T, 4>(in, sc, bi, out, mean, inv, p, s);
    if (per_lane <= 8) return row_norm_warp<T, 8>(in, sc, bi, out, mean, inv, p, s);
    if (per_lane <= 16) return row_norm_warp<T, 16>(in, sc, bi, out, mean, inv, p, s);
    if (per_lane <= 24) return row_norm_warp<T, 24>(in, sc, bi, out, mean, inv, p, s);
    return row_norm_warp<T, 32>(in, sc, bi, out, mean, inv, p, s);
  }
  const int team = team_for(p.rows, p.n);
  const unsigned b = blocks_for_teams(p.rows, team);
  if (team == 1) return row_norm_kernel<1, T><<<b, kBlock, 0, s>>>(in, sc, bi, out, mean, inv, p);
  if (team == 32) return row_norm_kernel<32, T><<<b, kBlock, 0, s>>>(in, sc, bi, out, mean, inv, p);
  row_norm_kernel<kBlock, T><<<b, kBlock, 0, s>>>(in, sc, bi, out, mean, inv, p);
}

template <class T>
void batch_norm_typed(const void* x, const void* scale, const void* bias, const void* mean, const void* var,
                      void* y, int64_t total, int64_t channels, int64_t spatial, float eps, cudaStream_t s) {
  batch_norm_kernel<T><<<grid_for(total), kBlock, 0, s>>>(
      static_cast<const T*>(x), static_cast<const T*>(scale), static_cast<const T*>(bias),
      static_cast<const T*>(mean), static_cast<const T*>(var), static_cast<T*>(y), total, channels, spatial,
      eps);
}

template <class T>
__global__ void lrn_kernel(const T* x, T* y, int64_t batch, int64_t channels, int64_t spatial, int64_t size,
                           double alpha, double beta, double bias) {
  const int64_t total = batch * channels * spatial;
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t sp = i % spatial, c = (i / spatial) % channels, n = i / (spatial * channels);
    const int64_t lo = c - before < 0 ? 0 : c - before,
                  hi = c + after > channels - 1 ? channels - 1 : c + after;
    double sq = 0;
    for (int64_t k = lo; k <= hi; ++k) {
      const double v = load(x, (n * channels + k) * spatial + sp);
      sq += v * v;
    }
    store(y, i,
          static_cast<float>(static_cast<double>(load(x, i)) /
                             pow(bias + alpha / static_cast<double>(size) * sq, beta)));
  }
}

}  // namespace

void launch_lrn(ElemType t, const void* x, void* y, int64_t batch, int64_t channels, int64_t spatial,
                int64_t size, double alpha, double beta, double bias, cudaStream_t s) {
  const int64_t total = batch * channels * spatial;
  if (total == 0) return;
  switch (t) {
    case ElemType::kFloat:
      return lrn_kernel<float><<<grid_for(total), kBlock, 0, s>>>(static_cast<const float*>(x),
                                                                  static_cast<float*>(y), batch, channels,
                                                                  spatial, size, alpha, beta, bias);
    case ElemType::kHalf:
      return lrn_kernel<__half><<<grid_for(total), kBlock, 0, s>>>(static_cast<const __half*>(x),
                                                                   static_cast<__half*>(y), batch, channels,
                                                                   spatial, size, alpha, beta, bias);
    case ElemType::kBFloat16:
      return lrn_kernel<__nv_bfloat16><<<grid_for(total), kBlock, 0, s>>>(
          static_cast<const __nv_bfloat16*>(x), static_cast<__nv_bfloat16*>(y), batch, channels, spatial,
          size, alpha, beta, bias);
  }
}

void launch_group_stat_norm(GroupNormKind k, ElemType t, const void* x, void* y, const ReduceGeom& geom,
                            cudaStream_t s) {
  if (geom.groups == 0 || geom.n == 0) return;
  switch (t) {
    case ElemType::kFloat:
      return group_stat_norm_kind<float>(k, x, y, geom, s);
    case ElemType::kHalf:
      return group_stat_norm_kind<__half>(k, x, y, geom, s);
    case ElemType::kBFloat16:
      return group_stat_norm_kind<__nv_bfloat16>(k, x, y, geom, s);
  }
}

void launch_row_norm(ElemType t, const void* x, const void* scale, const void* bias, void* y, float* mean,
                     float* inv_std, const NormParams& p, cudaStream_t s) {
  if (p.rows == 0) return;
  if (launch_row_norm_vec(t, x, scale, bias, y, mean, inv_std, p, s)) return;
  switch (t) {
    case ElemType::kFloat:
      return row_norm_typed<float>(x, scale, bias, y, mean, inv_std, p, s);
    case ElemType::kHalf:
      return row_norm_typed<__half>(x, scale, bias, y, mean, inv_std, p, s);
    case ElemType::kBFloat16:
      return row_norm_typed<__nv_bfloat16>(x, scale, bias, y, mean, inv_std, p, s);
  }
}

void launch_batch_norm(ElemType t, const void* x, const void* scale, const void* bias, const void* mean,
                       const void* var, void* y, int64_t total, int64_t channels, int64_t spatial, float eps,
                       cudaStream_t s) {
  if (total == 0) return;
  switch (t) {
    case ElemType::kFloat:
      return batch_norm_typed<float>(x, scale, bias, mean, var, y, total, channels, spatial, eps, s);
    case ElemType::kHalf:
      return batch_norm_typed<__half>(x, scale, bias, mean, var, y, total, channels, spatial, eps, s);
    case ElemType::kBFloat16:
      return batch_norm_typed<__nv_bfloat16>(x, scale, bias, mean, var, y, total, channels, spatial, eps, s);
  }
}

}  // namespace tessera::cuda
