#include <algorithm>
#include <type_traits>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/norm_rows.h"
#include "backends/cuda/pack16.cuh"

namespace tessera::cuda {

namespace {

template <class T>
struct alignas(16) Pack {
  static constexpr int kN = 16 / static_cast<int>(sizeof(T));
  T v[kN];
};

template <class T>
struct VecArgs {
  const T* x;
  const T* skip;      // null, or rows of n repeating every skip_n elements
  const T* sum_bias;  // null, or n values added before the normalisation
  const T* scale;     // null (1) or n values
  const T* bias;      // null (0) or n values
  T* y;
  T* sum_out;  // null, or receives x + skip + sum_bias
  float* mean;
  float* inv;
  int64_t rows, n, skip_n;
  float eps;
  bool rms;
};

// Sum over a team of W warps; with W > 1 the team is the whole block and `part` is a shared buffer of W
// floats that no other call of the same row uses (two buffers alternate, so one barrier a call does).
template <int W>
__device__ __forceinline__ float team_sum(float v, float* part) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if constexpr (W == 1) {
    return v;
  } else {
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
    __syncthreads();
    float s = 0.0f;
#pragma unroll
    for (int w = 0; w < W; ++w) s += part[w];  // same order in every thread: all get the same sum
    return s;
  }
}

// One row per team of W warps (a block of 4 one-warp teams when W is 1). Lane l of the team holds the
// 16-byte vectors l, l + 32W, ... of the row (NV of them) as float32 in registers: all loads of a row are
// in flight at once, then two passes over the registers give the mean and the variance as the general
// kernel does: the row is shifted by its first element, so values near 1000 with a spread of 0.01 keep
// their digits (x - pivot is exact within a factor of 2 of the pivot).

// Element e of a 16-bit vector as float32, converted again at each use. bfloat16's conversion is a shift,
// which the compiler would rather do once and keep the floats of the whole row in registers (bfloat16
// rows took 69-154 registers, and spilled at the lean bound below); an opaque instruction is redone where
// it is written (52-104 without the bound, 47-64 with it).
template <class T>
__device__ __forceinline__ float again(const Pack<T>& p, int e) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const uint32_t word = reinterpret_cast<const uint32_t*>(p.v)[e / 2];
    uint32_t bits;
    if (e % 2 == 0) {
      asm volatile("shl.b32 %0, %1, 16;" : "=r"(bits) : "r"(word));
    } else {
      asm volatile("and.b32 %0, %1, 0xffff0000;" : "=r"(bits) : "r"(word));
    }
    return __uint_as_float(bits);
  } else {
    return load(p.v, e);
  }
}

// Registers decide how many rows are in flight. float16 rows of up to 3 vectors a lane in one-warp
// teams (BERT, GPT-2 and ViT's 768 values) are held to 80 registers, 6 blocks (24 warps) an SM. The lean
// form (16-bit rows without sum_bias, mean or inverse deviation; the sum output allowed: the
// SkipLayerNormalization of BERT, GPT-2 and ViT, LayerNormalization and SimplifiedLayerNormalization as
// exported) is held to kLeanRegs = 64 registers whatever the row: 32 warps an SM. A [4096, 768] float16
// batch (BERT at batch 32) is then one wave of 4,224 warps on a 132-SM H100; it took 2 waves of 2,112 at
// the 127 registers of the kernel before the 16-bit rows were converted again in each pass. ptxas -v
// (sm_90, 2026-11-25), no spills: 46-64 registers for every lean instantiation (float16 and bfloat16, 1-4
// vectors a lane, teams of 1-8 warps); float32 rows keep their own count.
constexpr int kLeanRegs = 64;
template <int W>
constexpr int kThreads = W == 1 ? 128 : 32 * W;

template <class T, int NV, int W, bool Lean>
constexpr int kMinBlocks = Lean ? 65536 / (kLeanRegs * kThreads<W>)
                           : W != 1 || NV > 3 || !std::is_same_v<T, __half> ? 1
                                                                            : 6;

template <class T, int NV, int W, bool Lean = false>
__global__ void __launch_bounds__(kThreads<W>, (kMinBlocks<T, NV, W, Lean>))
    row_norm_vec_kernel(VecArgs<T> a) {
  if constexpr (Lean) a.sum_bias = nullptr, a.mean = nullptr, a.inv = nullptr;
  using P = Pack<T>;
  constexpr int V = P::kN;
  constexpr int kTeam = 32 * W;
  constexpr int kTeams = W == 1 ? 4 : 1;
  __shared__ float part[2][W];
  const int lane = static_cast<int>(threadIdx.x) % kTeam;
  const int nvec = static_cast<int>(a.n / V);
  const float count = static_cast<float>(a.n);
  const P* scale = reinterpret_cast<const P*>(a.scale);
  const P* bias = reinterpret_cast<const P*>(a.bias);
  const P* sum_bias = reinterpret_cast<const P*>(a.sum_bias);
  for (int64_t row = int64_t{blockIdx.x} * kTeams + threadIdx.x / kTeam; row < a.rows;
       row += int64_t{gridDim.x} * kTeams) {
    const int64_t base = row * a.n;
    const int64_t skip_base = a.skip ? base % a.skip_n : 0;
    const P* xr = reinterpret_cast<const P*>(a.x + base);
    const P* sr = a.skip ? reinterpret_cast<const P*>(a.skip + skip_base) : nullptr;
    // Every load of the row is issued before the first use of any: a warp stalls at the first use of a
    // pending load, so a use between loads would serialise the round trips.
    P xp[NV], sp[NV], bp[NV];
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      const int idx = lane + j * kTeam;
      if (idx < nvec) {
        xp[j] = xr[idx];
        if (sr) sp[j] = sr[idx];
        if (sum_bias) bp[j] = sum_bias[idx];
      } else {
        xp[j] = sp[j] = bp[j] = P{};  // past the row: computed, never summed or stored
      }
    }
    // The pivot is the row's first value, computed exactly as its vector lane computes it.
    float pivot = 0.0f;
    if (!a.rms) {
      pivot = load(a.x, base);
      if (sr) pivot += load(a.skip, skip_base);
      if (sum_bias) pivot += load(a.sum_bias, 0);
    }
    // The row's values x (+ skip) (+ sum_bias) in float32. 16-bit rows keep only the loaded vectors
    // and convert again in each pass (a few ALU instructions, the same float each time): holding the
    // floats as well took 127 registers at NV = 3 (fewer resident warps; see kMinBlocks).
    constexpr bool kRecompute = sizeof(T) == 2;
    float v[kRecompute ? 1 : NV][V] = {};  // set below (float32 rows), unused otherwise
    auto val = [&](int j, int e) -> float {
      if constexpr (kRecompute) {
        float f = again(xp[j], e);
        if (sr) f += again(sp[j], e);
        if (sum_bias) f += again(bp[j], e);
        return f;
      } else {
        return v[j][e];
      }
    };
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < NV; ++j) {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        float f = load(xp[j].v, e);
        if (sr) f += load(sp[j].v, e);
        if (sum_bias) f += load(bp[j].v, e);
        if constexpr (!kRecompute) v[j][e] = f;
        if (lane + j * kTeam < nvec) s += f - pivot;
      }
    }
    const float shifted_mean = a.rms ? 0.0f : team_sum<W>(s, part[0]) / count;
    float q = 0.0f;
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      if (lane + j * kTeam >= nvec) continue;
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const float d = (val(j, e) - pivot) - shifted_mean;
        q += d * d;
      }
    }
    const float inv = 1.0f / sqrtf(team_sum<W>(q, part[1]) / count + a.eps);
    if (lane == 0) {
      if (a.mean) a.mean[row] = pivot + shifted_mean;
      if (a.inv) a.inv[row] = inv;
    }
    P* yr = reinterpret_cast<P*>(a.y + base);
    P* sum_r = a.sum_out ? reinterpret_cast<P*>(a.sum_out + base) : nullptr;
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      const int idx = lane + j * kTeam;
      if (idx >= nvec) continue;
      // The scale and the bias where they are used: n values shared by every row, L1 hits whose latency
      // the other warps of the SM hide; held for the whole row they would cost 8 registers a vector.
      const P sc = scale ? scale[idx] : P{}, bi = bias ? bias[idx] : P{};
      float o[V];
#pragma unroll
      for (int e = 0; e < V; ++e) {
        o[e] = ((val(j, e) - pivot) - shifted_mean) * inv;
        if (scale) o[e] *= load(sc.v, e);
        if (bias) o[e] += load(bi.v, e);
      }
      P out;
      store_rounded(out.v, o);
      yr[idx] = out;
      if (sum_r) {
#pragma unroll
        for (int e = 0; e < V; ++e) o[e] = val(j, e);
        P sum;
        store_rounded(sum.v, o);
        sum_r[idx] = sum;
      }
    }
    // The next row of this block may write part[1] before a slow warp has read it (RMS rows have one
    // barrier a row, not two).
    if constexpr (W > 1) __syncthreads();
  }
}

template <class T, int NV, int W>
void launch_nv(const VecArgs<T>& a, cudaStream_t s) {
  constexpr int kTeams = W == 1 ? 4 : 1;
  const int64_t blocks = (a.rows + kTeams - 1) / kTeams;
  const auto grid = static_cast<unsigned>(std::min<int64_t>(blocks, int64_t{65535} * 32));
  if constexpr (sizeof(T) == 2) {
    if (!a.sum_bias && !a.mean && !a.inv)
      return row_norm_vec_kernel<T, NV, W, true><<<grid, kThreads<W>, 0, s>>>(a);
  }
  row_norm_vec_kernel<T, NV, W><<<grid, kThreads<W>, 0, s>>>(a);
}

// The smallest instantiated vectors-a-lane count that holds nv: 1-4, and 6 or 8 for float32.
template <class T, int W>
void launch_w(int nv, const VecArgs<T>& a, cudaStream_t s) {
  if (nv <= 1) return launch_nv<T, 1, W>(a, s);
  if (nv <= 2) return launch_nv<T, 2, W>(a, s);
  if (nv <= 3) return launch_nv<T, 3, W>(a, s);
  if (nv <= 4) return launch_nv<T, 4, W>(a, s);
  if constexpr (sizeof(T) == 4) {
    if (nv <= 6) return launch_nv<T, 6, W>(a, s);
    return launch_nv<T, 8, W>(a, s);
  }
}

bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

template <class T>
bool vec_typed(const void* x, const void* scale, const void* bias, void* y, float* mean, float* inv,
               const NormParams& p, cudaStream_t s) {
  constexpr int V = Pack<T>::kN;
  constexpr int kMaxNV = 32 / V;  // 32 float32 values a lane at most
  if (p.n < V || p.n % V != 0 || p.param_rows != 1 || p.param_div != 1) return false;
  if ((scale && p.scale_mult != 1) || (bias && p.bias_mult != 1)) return false;
  if (p.skip && p.skip_n % p.n != 0) return false;
  for (const void* ptr :
       {x, scale, bias, const_cast<const void*>(y), p.skip, p.sum_bias, const_cast<const void*>(p.sum_out)})
    if (ptr && !aligned16(ptr)) return false;
  const int64_t nvec = p.n / V;
  int w = 1;
  while (w < 8 && ceil_div(nvec, 32 * w) > kMaxNV) w *= 2;
  if (ceil_div(nvec, 32 * w) > kMaxNV) return false;
  // Few rows (batch 1): more warps a row, so that more of the GPU works and each lane waits on fewer
  // loads. About 2048 warps fill an H100.
  while (w < 8 && p.rows * w < 2048 && ceil_div(nvec, 32 * w) > 1) w *= 2;
  const auto nv = static_cast<int>(ceil_div(nvec, 32 * w));
  VecArgs<T> a{static_cast<const T*>(x),
               static_cast<const T*>(p.skip),
               static_cast<const T*>(p.sum_bias),
               static_cast<const T*>(scale),
               static_cast<const T*>(bias),
               static_cast<T*>(y),
               static_cast<T*>(p.sum_out),
               mean,
               inv,
               p.rows,
               p.n,
               p.skip_n,
               p.eps,
               p.rms};
  switch (w) {
    case 1:
      launch_w<T, 1>(nv, a, s);
      break;
    case 2:
      launch_w<T, 2>(nv, a, s);
      break;
    case 4:
      launch_w<T, 4>(nv, a, s);
      break;
    default:
      launch_w<T, 8>(nv, a, s);
  }
  return true;
}

}  // namespace

bool launch_row_norm_vec(ElemType t, const void* x, const void* scale, const void* bias, void* y, float* mean,
                         float* inv_std, const NormParams& p, cudaStream_t s) {
  switch (t) {
    case ElemType::kFloat:
      return vec_typed<float>(x, scale, bias, y, mean, inv_std, p, s);
    case ElemType::kHalf:
      return vec_typed<__half>(x, scale, bias, y, mean, inv_std, p, s);
    case ElemType::kBFloat16:
      return vec_typed<__nv_bfloat16>(x, scale, bias, y, mean, inv_std, p, s);
  }
  return false;
}

}  // namespace tessera::cuda
