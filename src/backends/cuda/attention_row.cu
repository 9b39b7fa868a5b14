// The row attention kernel: a 256-thread block per query row. It computes the row's scores into float32
// scratch (writing the qk_matmul output on the way), takes the softmax with block reductions, then each
// thread sums one column of V weighted by the probabilities. Every feature of the ONNX operator, any
// head size; the flash kernel takes the common float16/bfloat16 cases faster.
#include "backends/cuda/attention_common.cuh"
#include "backends/cuda/reduce_team.cuh"

namespace tessera::cuda {

namespace {

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

template <class T>
__global__ void row_attention_kernel(AttnParams p, float* scores) {
  extern __shared__ float qs[];  // the query row, float32
  const int64_t rows = p.batch * p.q_heads * p.q_seq;
  const int64_t group = p.q_heads / p.kv_heads;
  const T* q_all = static_cast<const T*>(p.q.p);
  const T* k_all = static_cast<const T*>(p.k.p);
  const T* v_all = static_cast<const T*>(p.v.p);
  T* qk = static_cast<T*>(p.qk);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t i = r % p.q_seq, h = (r / p.q_seq) % p.q_heads, b = r / (p.q_seq * p.q_heads);
    const int64_t kvh = h / group;
    const T* q = q_all + b * p.q.sb + h * p.q.sh + i * p.q.ss;
    __syncthreads();  // the previous row is done with qs
    for (int64_t e = threadIdx.x; e < p.head; e += blockDim.x) qs[e] = load(q, e);
    __syncthreads();
    const T* kb = k_all + b * p.k.sb + kvh * p.k.sh;
    const T* vb = v_all + b * p.v.sb + kvh * p.v.sh;
    const int64_t pos = attn::query_pos(p, b, i);
    float* sc = scores + r * p.keys;
    T* qk_row = qk ? qk + r * p.keys : nullptr;
    float mx = -INFINITY;
    for (int64_t j = threadIdx.x; j < p.keys; j += blockDim.x) {
      const T* kr = kb + j * p.k.ss;
      float dot = 0;
      for (int64_t e = 0; e < p.head; ++e) dot = fmaf(qs[e], load(kr, e), dot);
      const float raw = dot * p.scale;
      const float capped = attn::softcapped(p, raw);
      const float x = attn::masked_score(p, capped, b, h, i, j, pos);
      if (qk_row && p.qk_mode < 3) store(qk_row, j, p.qk_mode == 0 ? raw : p.qk_mode == 1 ? capped : x);
      sc[j] = x;
      mx = fmaxf(mx, x);
    }
    mx = team_reduce<kBlock>(mx, MaxOp{});
    // A row whose keys are all masked gets zero probabilities (and a zero output), not NaN.
    const bool empty = mx == -INFINITY;
    float part = 0;
    if (!empty)
      for (int64_t j = threadIdx.x; j < p.keys; j += blockDim.x) part += expf(sc[j] - mx);
    const float sum = team_reduce<kBlock>(part, SumOp{});
    const float inv = 1.0f / sum;
    for (int64_t j = threadIdx.x; j < p.keys; j += blockDim.x) {
      const float pr = empty ? 0.0f : expf(sc[j] - mx) * inv;
      sc[j] = pr;
      if (qk_row && p.qk_mode == 3) store(qk_row, j, pr);
    }
    __syncthreads();  // every probability of the row is written
    T* y = static_cast<T*>(p.y) + b * p.y_sb + h * p.y_sh + i * p.y_ss;
    for (int64_t e = threadIdx.x; e < p.v_head; e += blockDim.x) {
      float acc = 0;
      for (int64_t j = 0; j < p.keys; ++j) {
        const float pr = sc[j];
        if (pr != 0.0f) acc = fmaf(pr, load(vb + j * p.v.ss, e), acc);  // masked keys add nothing, NaN V too
      }
      store(y, e, acc);
    }
  }
}

template <class T>
__global__ void cache_copy_kernel(AttnOperand src, int64_t batch, int64_t heads, int64_t seq, int64_t size,
                                  T* dst, int64_t total, int64_t at) {
  const int64_t n = batch * heads * seq * size;
  const T* s = static_cast<const T*>(src.p);
  for (int64_t x = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; x < n;
       x += int64_t{gridDim.x} * blockDim.x) {
    const int64_t e = x % size, r = x / size;
    const int64_t i = r % seq, h = (r / seq) % heads, b = r / (seq * heads);
    dst[((b * heads + h) * total + at + i) * size + e] = s[b * src.sb + h * src.sh + i * src.ss + e];
  }
}

template <class T>
void row_typed(const AttnParams& p, float* scores, cudaStream_t s) {
  const int64_t rows = p.batch * p.q_heads * p.q_seq;
  if (rows == 0) return;
  const unsigned grid = static_cast<unsigned>(rows < (int64_t{1} << 20) ? rows : (int64_t{1} << 20));
  const size_t smem = static_cast<size_t>(p.head > 0 ? p.head : 1) * sizeof(float);
  if (smem > 48 * 1024)
    cudaFuncSetAttribute(row_attention_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(smem));
  row_attention_kernel<T><<<grid, kBlock, smem, s>>>(p, scores);
}

}  // namespace

void launch_row_attention(const AttnParams& p, float* scores, cudaStream_t s) {
  switch (p.t) {
    case ElemType::kFloat:
      return row_typed<float>(p, scores, s);
    case ElemType::kHalf:
      return row_typed<__half>(p, scores, s);
    case ElemType::kBFloat16:
      return row_typed<__nv_bfloat16>(p, scores, s);
  }
}

void launch_attention_cache_copy(ElemType t, const AttnOperand& src, int64_t batch, int64_t heads,
                                 int64_t seq, int64_t size, void* dst, int64_t total, int64_t at,
                                 cudaStream_t s) {
  const int64_t n = batch * heads * seq * size;
  if (n == 0) return;
  const unsigned g = grid_for(n);
  switch (t) {
    case ElemType::kFloat:
      return cache_copy_kernel<<<g, 256, 0, s>>>(src, batch, heads, seq, size, static_cast<float*>(dst),
                                                 total, at);
    case ElemType::kHalf:
      return cache_copy_kernel<<<g, 256, 0, s>>>(src, batch, heads, seq, size, static_cast<__half*>(dst),
                                                 total, at);
    case ElemType::kBFloat16:
      return cache_copy_kernel<<<g, 256, 0, s>>>(src, batch, heads, seq, size,
                                                 static_cast<__nv_bfloat16*>(dst), total, at);
  }
}

}  // namespace tessera::cuda
