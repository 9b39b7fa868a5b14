// The flash attention kernel (float16 / bfloat16), FlashAttention-2 style on mma.sync m16n8k16:
// a block of W warps (W = 4, or 1 when 4-warp blocks would leave most SMs idle) takes 16 * W query
// rows of one (batch, head); each warp owns 16 rows whose Q fragments stay in registers. The key and
// value tiles (64 keys) go through shared memory with cp.async, double-buffered: tile j + 1 is in flight
// while tile j is multiplied. S = Q K^T stays in registers (float32), is scaled and masked there and
// feeds the online softmax (running max and sum per row, in base 2), and its exponentials, rounded once
// to the element type, are the A operand of P V directly (the accumulator layout of m16n8k16 is the A
// layout of the next product). The float32 output accumulator lives in registers, is rescaled when a
// row's max grows, divided by the row sum at the end and rounded once when stored; a row with every
// key masked gets zeros.
//
// The key loop stops at the last key any of the block's rows can see (causal/window limits, a short
// mask, nonpad lengths), so causal attention does about half the work. Scores take one of three paths:
// no mask (scale, key bound and the causal/right limit only), an additive mask that is the same for
// every query row (BERT's padding mask [B,1,1,S]: one value per key, read once per tile), and the
// general path (attn::masked_score: every mask, window and nonpad case).
#include <mutex>

#include "backends/cuda/attention_common.cuh"

namespace tessera::cuda {

namespace {

constexpr int kKeys = 64;  // keys per tile
constexpr float kLog2e = 1.4426950408889634f;

// Shared-memory layout in elements: Q rows, then two stages of K and V; row pitch padded by 16 bytes
// so the 8 row addresses of an ldmatrix fall in different banks.
template <int D, int W>
struct Smem {
  static constexpr int ld = D + 8;
  static constexpr int rows = 16 * W;
  static constexpr size_t q = 0;
  static constexpr size_t k = q + size_t{rows} * ld;       // stage s at k + s * kKeys * ld
  static constexpr size_t v = k + size_t{2} * kKeys * ld;  // likewise
  static constexpr size_t elems = v + size_t{2} * kKeys * ld;
  static constexpr size_t bytes = elems * 2;
};

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, zero-filled when !valid (src is then not read).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldsm_x4_trans(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// c += a (16x16, row) * b (16x8, col), float32 accumulation.
template <class T>
__device__ __forceinline__ void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
template <>
__device__ __forceinline__ void mma<__half>(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma<__nv_bfloat16>(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                                   uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats rounded to the element type, the first in the low half.
template <class T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi);
template <>
__device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}
template <>
__device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}

// Rows [r0, r0 + rows) of a (seq, D) slice with row stride `ss` into shared memory (pitch Smem::ld);
// rows at or past `n` are zero.
template <class T, int D, int W, int Rows>
__device__ __forceinline__ void load_rows(T* dst, const T* src, int64_t ss, int64_t r0, int64_t n) {
  constexpr int chunks = D / 8;
  constexpr int ld = Smem<D, W>::ld;
  for (int c = threadIdx.x; c < Rows * chunks; c += W * 32) {
    const int r = c / chunks, e = (c % chunks) * 8;
    const bool valid = r0 + r < n;
    cp_async16(dst + r * ld + e, valid ? src + (r0 + r) * ss + e : src, valid);
  }
}

enum class ScorePath { kPlain, kRowBias, kGeneral };

constexpr int kNt = kKeys / 8;  // score n-tiles of 8 keys

// The additive mask's values for this thread's keys of the tile (j0 + n * 8 + tig * 2 + e) when the mask
// does not depend on the query row; keys at or past `end` (masked anyway) read nothing.
template <class M>
__device__ __forceinline__ void load_bias(float (&bv)[kNt][2], const M* m, int64_t base, int64_t stride,
                                          int64_t j0, int tig, int64_t end) {
#pragma unroll
  for (int n = 0; n < kNt; ++n) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int64_t j = j0 + n * 8 + tig * 2 + e;
      bv[n][e] = j < end ? load(m, base + j * stride) * kLog2e : 0.0f;
    }
  }
}

template <class T, int D, int W, ScorePath P>
__global__ void __launch_bounds__(W * 32) flash_kernel(AttnParams p) {
  using L = Smem<D, W>;
  constexpr int kRows = 16 * W;
  constexpr int ld = L::ld;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* smem = reinterpret_cast<T*>(smem_raw);
  T* qs = smem + L::q;

  const int64_t i0 = int64_t{blockIdx.x} * kRows;
  const int64_t h = blockIdx.y, b = blockIdx.z;
  const int64_t kvh = h / (p.q_heads / p.kv_heads);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, tig = lane % 4;

  // The keys any row of the block can see.
  int64_t end = p.keys;
  const int64_t last_row = min(i0 + kRows, p.q_seq) - 1;
  if (p.right >= 0) end = min(end, attn::query_pos(p, b, last_row) + p.right + 1);
  if (p.nonpad) end = min(end, p.nonpad[b]);
  if (p.add.type != MaskType::kNone) end = min(end, p.add.keys);

  const T* kb = static_cast<const T*>(p.k.p) + b * p.k.sb + kvh * p.k.sh;
  const T* vb = static_cast<const T*>(p.v.p) + b * p.v.sb + kvh * p.v.sh;
  auto load_kv = [&](int64_t j0, int stage) {
    load_rows<T, D, W, kKeys>(smem + L::k + static_cast<size_t>(stage) * kKeys * ld, kb, p.k.ss, j0, end);
    load_rows<T, D, W, kKeys>(smem + L::v + static_cast<size_t>(stage) * kKeys * ld, vb, p.v.ss, j0, end);
  };
  load_rows<T, D, W, kRows>(qs, static_cast<const T*>(p.q.p) + b * p.q.sb + h * p.q.sh, p.q.ss, i0, p.q_seq);
  cp_commit();
  if (end > 0) load_kv(0, 0);
  cp_commit();

  // This thread's two rows (g and g + 8 of the warp's 16), their positions and (no-mask and row-bias
  // paths) the key each one's causal/right limit and the block's end leave it: keys at or past are out.
  const int64_t rows[2] = {i0 + warp * 16 + g, i0 + warp * 16 + g + 8};
  int64_t pos[2], lim[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    pos[r] = attn::query_pos(p, b, rows[r] < p.q_seq ? rows[r] : 0);
    lim[r] = p.right >= 0 ? min(end, pos[r] + p.right + 1) : end;
  }
  const float scale2 = p.scale * kLog2e;
  const int64_t bias_base = b * p.add.stride[0] + h * p.add.stride[1];

  constexpr int kDt = D / 8;  // output n-tiles of 8 columns
  float o[kDt][4];
#pragma unroll
  for (int n = 0; n < kDt; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  // The warp's Q fragments, once (the K/V tile 0 may still be in flight).
  uint32_t qf[D / 16][4];
  cp_wait<1>();
  __syncthreads();
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
    ldsm_x4(qf[kk], qs + (warp * 16 + lane % 16) * ld + kk * 16 + (lane / 16) * 8);

  int stage = 0;
  for (int64_t j0 = 0; j0 < end; j0 += kKeys, stage ^= 1) {
    if (j0 + kKeys < end) load_kv(j0 + kKeys, stage ^ 1);
    cp_commit();
    cp_wait<1>();  // everything but the tile just issued has landed
    __syncthreads();
    const T* ks = smem + L::k + static_cast<size_t>(stage) * kKeys * ld;
    const T* vs = smem + L::v + static_cast<size_t>(stage) * kKeys * ld;

    // The row-independent mask's values first, so that their loads overlap the product.
    [[maybe_unused]] float bv[kNt][2];
    if constexpr (P == ScorePath::kRowBias) {
      if (p.add.type == MaskType::kFloat)
        load_bias(bv, static_cast<const float*>(p.add.p), bias_base, p.add.stride[3], j0, tig, end);
      else if (p.add.type == MaskType::kHalf)
        load_bias(bv, static_cast<const __half*>(p.add.p), bias_base, p.add.stride[3], j0, tig, end);
      else
        load_bias(bv, static_cast<const __nv_bfloat16*>(p.add.p), bias_base, p.add.stride[3], j0, tig, end);
    }

    // S = Q K^T for the warp's 16 rows and the tile's 64 keys.
    float s[kNt][4];
#pragma unroll
    for (int n = 0; n < kNt; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
      for (int np = 0; np < kNt / 2; ++np) {
        uint32_t kf[4];
        ldsm_x4(kf, ks + (np * 16 + (lane / 16) * 8 + lane % 8) * ld + kk * 16 + ((lane / 8) % 2) * 8);
        mma<T>(s[2 * np], qf[kk], kf[0], kf[1]);
        mma<T>(s[2 * np + 1], qf[kk], kf[2], kf[3]);
      }
    }

// Scale and mask, in base-2 units.
#pragma unroll
    for (int n = 0; n < kNt; ++n) {
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int r = c / 2;
        const int64_t j = j0 + n * 8 + tig * 2 + (c & 1);
        float x = s[n][c] * scale2;
        if constexpr (P == ScorePath::kGeneral) {
          x = rows[r] < p.q_seq && j < end
                  ? attn::masked_score(p, attn::softcapped(p, s[n][c] * p.scale), b, h, rows[r], j, pos[r]) *
                        kLog2e
                  : -INFINITY;
        } else {
          if constexpr (P == ScorePath::kRowBias) x += bv[n][c & 1];
          if (j >= lim[r]) x = -INFINITY;
        }
        s[n][c] = x;
      }
    }

    // Online softmax: the rows' maxima over the quad's 4 threads, then exponentials.
    float alpha[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = -INFINITY;
#pragma unroll
      for (int n = 0; n < kNt; ++n) mx = fmaxf(mx, fmaxf(s[n][2 * r], s[n][2 * r + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(m[r], mx);
      alpha[r] = m_new == -INFINITY ? 1.0f : exp2f(m[r] - m_new);
      float part = 0.0f;
#pragma unroll
      for (int n = 0; n < kNt; ++n) {
#pragma unroll
        for (int c = 2 * r; c < 2 * r + 2; ++c) {
          const float e = m_new == -INFINITY ? 0.0f : exp2f(s[n][c] - m_new);
          s[n][c] = e;
          part += e;
        }
      }
      l[r] = l[r] * alpha[r] + part;  // this thread's share; the quad's shares are added at the end
      m[r] = m_new;
    }
#pragma unroll
    for (int n = 0; n < kDt; ++n) {
      o[n][0] *= alpha[0], o[n][1] *= alpha[0];
      o[n][2] *= alpha[1], o[n][3] *= alpha[1];
    }

// O += P V: P's accumulator layout is the A layout of the next product.
#pragma unroll
    for (int t = 0; t < kKeys / 16; ++t) {
      const uint32_t pa[4] = {pack2<T>(s[2 * t][0], s[2 * t][1]), pack2<T>(s[2 * t][2], s[2 * t][3]),
                              pack2<T>(s[2 * t + 1][0], s[2 * t + 1][1]),
                              pack2<T>(s[2 * t + 1][2], s[2 * t + 1][3])};
#pragma unroll
      for (int dp = 0; dp < kDt / 2; ++dp) {
        uint32_t vf[4];
        ldsm_x4_trans(vf, vs + (t * 16 + lane % 8 + ((lane / 8) % 2) * 8) * ld + dp * 16 + (lane / 16) * 8);
        mma<T>(o[2 * dp], pa, vf[0], vf[1]);
        mma<T>(o[2 * dp + 1], pa, vf[2], vf[3]);
      }
    }
    __syncthreads();  // every warp is done with this stage before it is loaded again
  }
  cp_wait<0>();

  T* yb = static_cast<T*>(p.y) + b * p.y_sb + h * p.y_sh;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = l[r];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    if (rows[r] >= p.q_seq) continue;
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    T* yr = yb + rows[r] * p.y_ss;
#pragma unroll
    for (int n = 0; n < kDt; ++n) {
      const int e = n * 8 + tig * 2;
      store(yr, e, o[n][2 * r] * inv);
      store(yr, e + 1, o[n][2 * r + 1] * inv);
    }
  }
}

ScorePath score_path(const AttnParams& p) {
  if (p.keep.type != MaskType::kNone || p.softcap > 0 || p.left >= 0 || p.nonpad) return ScorePath::kGeneral;
  if (p.add.type == MaskType::kNone) return ScorePath::kPlain;
  if (p.add.type == MaskType::kBool || p.add.stride[2] != 0) return ScorePath::kGeneral;
  return ScorePath::kRowBias;
}

int sm_count() {
  static const int n = [] {
    int dev = 0, count = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
      return 132;
    return count;
  }();
  return n;
}

template <class T, int D, int W, ScorePath P>
void launch_path(const AttnParams& p, cudaStream_t s) {
  constexpr size_t bytes = Smem<D, W>::bytes;
  // Once, before any launch: not a stream operation, but a CUDA graph capture of a later run should see
  // nothing but launches.
  static std::once_flag opt_in;
  std::call_once(opt_in, [] {
    cudaFuncSetAttribute(flash_kernel<T, D, W, P>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(bytes));
  });
  constexpr int rows = 16 * W;
  const dim3 grid(static_cast<unsigned>((p.q_seq + rows - 1) / rows), static_cast<unsigned>(p.q_heads),
                  static_cast<unsigned>(p.batch));
  flash_kernel<T, D, W, P><<<grid, W * 32, bytes, s>>>(p);
}

// One kernel per score path: the general path's code (every mask kind, softcap) inlined into the
// unrolled score loop would make the common kernels several times larger than the instruction cache.
template <class T, int D, int W>
void launch_typed(const AttnParams& p, cudaStream_t s) {
  switch (score_path(p)) {
    case ScorePath::kPlain:
      return launch_path<T, D, W, ScorePath::kPlain>(p, s);
    case ScorePath::kRowBias:
      return launch_path<T, D, W, ScorePath::kRowBias>(p, s);
    default:
      return launch_path<T, D, W, ScorePath::kGeneral>(p, s);
  }
}

// 4-warp blocks (64 rows) share each K/V tile among more rows; when they would not fill the GPU
// (BERT at batch 1: 2 x 12 blocks), 1-warp blocks of 16 rows give four times as many.
template <class T, int D>
void launch_rows(const AttnParams& p, cudaStream_t s) {
  const int64_t blocks4 = (p.q_seq + 63) / 64 * p.q_heads * p.batch;
  if (blocks4 >= sm_count()) return launch_typed<T, D, 4>(p, s);
  launch_typed<T, D, 1>(p, s);
}

template <class T>
void launch_head(const AttnParams& p, cudaStream_t s) {
  switch (p.head) {
    case 16:
      return launch_rows<T, 16>(p, s);
    case 32:
      return launch_rows<T, 32>(p, s);
    case 48:
      return launch_rows<T, 48>(p, s);
    case 64:
      return launch_rows<T, 64>(p, s);
    case 80:
      return launch_rows<T, 80>(p, s);
    case 96:
      return launch_rows<T, 96>(p, s);
    case 112:
      return launch_rows<T, 112>(p, s);
    default:
      return launch_rows<T, 128>(p, s);
  }
}

bool aligned(const AttnOperand& x) {
  return reinterpret_cast<uintptr_t>(x.p) % 16 == 0 && x.sb % 8 == 0 && x.sh % 8 == 0 && x.ss % 8 == 0;
}

}  // namespace

bool flash_attention_fits(const AttnParams& p) {
  if (p.t == ElemType::kFloat || p.qk) return false;
  // Head sizes the mma tiles cover: multiples of 16 up to 128, the same for V.
  if (p.head != p.v_head || p.head % 16 != 0 || p.head < 16 || p.head > 128) return false;
  if (p.q_heads > 65535 || p.batch > 65535 || p.q_seq > int64_t{16} * 0x7fffffff) return false;
  return aligned(p.q) && aligned(p.k) && aligned(p.v);
}

void launch_flash_attention(const AttnParams& p, cudaStream_t s) {
  if (p.t == ElemType::kHalf) return launch_head<__half>(p, s);
  launch_head<__nv_bfloat16>(p, s);
}

}  // namespace tessera::cuda
