#include "backends/cuda/norm_ops.h"
#include "backends/cuda/reduce_team.cuh"

namespace tessera::cuda {

namespace {

struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

template <int Team, class T>
__global__ void row_norm_kernel(const T* x, const T* scale, const T* bias, T* y, float* mean_out,
                                float* inv_out, NormParams p) {
  TeamIndex<Team> ti;
  const float count = static_cast<float>(p.n);
  for (int64_t row = ti.team; row < p.rows; row += ti.teams) {
    const int64_t base = row * p.n;
    // The row is shifted by its first element (x - pivot is exact for values within a factor of 2 of
    // it), so that a row near 1000 with a spread of 0.01 keeps its digits in the float32 mean.
    const float pivot = p.rms || p.n == 0 ? 0.0f : load(x, base);
    float shifted_mean = 0.0f;
    if (!p.rms) {
      KahanSum acc;
      for (int64_t k = ti.lane; k < p.n; k += Team) acc.add(load(x, base + k) - pivot);
      shifted_mean = team_reduce<Team>(acc.value(), SumOp{}) / count;
    }
    KahanSum sq;
    for (int64_t k = ti.lane; k < p.n; k += Team) {
      const float d = (load(x, base + k) - pivot) - shifted_mean;
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
      float v = ((load(x, base + k) - pivot) - shifted_mean) * inv;
      if (scale) v *= load(scale, pi);
      if (bias) v += load(bias, pi);
      store(y, base + k, v);
    }
  }
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

template <class T>
void row_norm_typed(const void* x, const void* scale, const void* bias, void* y, float* mean, float* inv,
                    const NormParams& p, cudaStream_t s) {
  auto* in = static_cast<const T*>(x);
  auto* sc = static_cast<const T*>(scale);
  auto* bi = static_cast<const T*>(bias);
  auto* out = static_cast<T*>(y);
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

}  // namespace

void launch_row_norm(ElemType t, const void* x, const void* scale, const void* bias, void* y, float* mean,
                     float* inv_std, const NormParams& p, cudaStream_t s) {
  if (p.rows == 0) return;
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
