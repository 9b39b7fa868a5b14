#include "backends/cuda/reduce_team.cuh"
#include "backends/cuda/softmax_loss_ops.h"

namespace tessera::cuda {

namespace {

struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// The loss of entry i and its weight (0 and 0 where ignored).
template <class T>
__device__ __forceinline__ void entry(const T* x, const int64_t* target, const T* weight, const NllParams& p,
                                      int64_t i, float& loss, float& w) {
  const int64_t c = target[i];
  if (p.has_ignore && c == p.ignore) {
    loss = 0.0f;
    w = 0.0f;
    return;
  }
  const int64_t n = i / p.positions, pos = i % p.positions;
  w = weight ? load(weight, c) : 1.0f;
  loss = -load(x, (n * p.classes + c) * p.positions + pos) * w;
}

template <class T>
__global__ void nll_none_kernel(const T* x, const int64_t* target, const T* weight, T* out, NllParams p) {
  const int64_t total = p.batch * p.positions;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    float loss, w;
    entry(x, target, weight, p, i, loss, w);
    store(out, i, loss);
  }
}

// One block sums every entry (the reduced forms make one value).
template <class T>
__global__ void nll_reduce_kernel(const T* x, const int64_t* target, const T* weight, T* out, NllParams p) {
  const int64_t total = p.batch * p.positions;
  KahanSum loss_sum, weight_sum;
  for (int64_t i = threadIdx.x; i < total; i += kBlock) {
    float loss, w;
    entry(x, target, weight, p, i, loss, w);
    loss_sum.add(loss);
    weight_sum.add(w);
  }
  const float l = team_reduce<kBlock>(loss_sum.value(), SumOp{});
  const float w = team_reduce<kBlock>(weight_sum.value(), SumOp{});
  if (threadIdx.x == 0) store(out, 0, p.reduction == LossReduction::kSum ? l : l / w);
}

template <class T>
void nll_typed(const void* x, const int64_t* target, const void* weight, void* out, const NllParams& p,
               cudaStream_t s) {
  auto* in = static_cast<const T*>(x);
  auto* w = static_cast<const T*>(weight);
  auto* o = static_cast<T*>(out);
  if (p.reduction == LossReduction::kNone) {
    if (p.batch * p.positions == 0) return;
    return nll_none_kernel<T><<<grid_for(p.batch * p.positions), kBlock, 0, s>>>(in, target, w, o, p);
  }
  nll_reduce_kernel<T><<<1, kBlock, 0, s>>>(in, target, w, o, p);
}

}  // namespace

void launch_nll(ElemType t, const void* x, const int64_t* target, const void* weight, void* out,
                const NllParams& p, cudaStream_t s) {
  switch (t) {
    case ElemType::kFloat:
      return nll_typed<float>(x, target, weight, out, p, s);
    case ElemType::kHalf:
      return nll_typed<__half>(x, target, weight, out, p, s);
    case ElemType::kBFloat16:
      return nll_typed<__nv_bfloat16>(x, target, weight, out, p, s);
  }
}

}  // namespace tessera::cuda
