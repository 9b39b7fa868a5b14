// The flash attention kernel (float16 / bfloat16), FlashAttention-2 style on mma.sync m16n8k16.
// A block takes 16 * W query rows of one (batch, head); each warp owns 16 rows whose Q fragments stay in
// registers. Three shapes: W = 4 warps of 16 rows each sharing every 64-key K/V tile (double-buffered
// through shared memory with cp.async: tile j + 1 is in flight while tile j is multiplied; a last block
// of at most 16 rows gives its 4 warps those rows and each a 16-key step of every tile), or, when those
// blocks would leave SMs idle (batch 1), W groups of 16 rows whose S warps split the keys (W = 1, S = 4:
// a stage holds 256 keys; W = 2, S = 2: 128 keys), warp k multiplying tile k of the stage, the warps
// merging their softmax states at the end.
// S = Q K^T stays in registers (float32), is scaled and masked there and feeds the online softmax
// (running max and sum per row, base 2, ex2.approx); its exponentials, rounded once to the element type,
// are the A operand of P V directly (the accumulator layout of m16n8k16 is the A layout of the next
// product). The float32 output accumulator lives in registers, is rescaled when a row's max grows,
// divided by the row sum at the end and rounded once when stored; a row with every key masked gets zeros.
//
// Work is cut where it is not needed: the key loop stops at the last key any of the block's rows can see
// (causal/window limits, a short mask, nonpad lengths), so causal attention does about half the work; a
// warp computes only the 16-key steps some row of it sees and nothing when all its rows are past q_seq;
// masks are applied only on tiles a limit cuts. The copies' addresses are planned once per thread
// (RowCopy), indices are int32. Scores take one of three paths: no mask (scale, key bound and the
// causal/right limit only), an additive mask that is the same for every query row (BERT's padding mask
// [B,1,1,S]: each thread's two adjacent keys read as one pair per tile), and the general path
// (attn::masked_score: every mask, window and nonpad case).
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string_view>
#include <type_traits>

#include "backends/cuda/attention_common.cuh"

namespace tessera::cuda {

namespace {

constexpr int kKeys = 64;  // keys per tile
constexpr float kLog2e = 1.4426950408889634f;

// Shared-memory layout in elements: Q rows, then the stages of K and V (a stage holds S tiles of 64 keys:
// two stages when S = 1, one when S warps split the keys); row pitch padded by 16 bytes so the 8 row
// addresses of an ldmatrix fall in different banks.
template <int D, int W, int S>
struct Smem {
  static constexpr int ld = D + 8;
  static constexpr int rows = 16 * W;
  static constexpr int stage_rows = kKeys * S;
  static constexpr int stages = S == 1 ? 2 : 1;
  static constexpr size_t q = 0;
  static constexpr size_t k = q + size_t{rows} * ld;                 // stage s at k + s * stage_rows * ld
  static constexpr size_t v = k + size_t{stages} * stage_rows * ld;  // likewise
  static constexpr size_t elems = v + size_t{stages} * stage_rows * ld;
  static constexpr size_t bytes = elems * 2;
};

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared (address `dst`), zero-filled when !valid (src is then not read).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
// 16 bytes global -> shared, no zero fill (a full tile).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
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

// 2^x with the MUFU instruction (ex2.approx.ftz.f32): at most ~2 ulp of float32 relative error (PTX ISA),
// subnormal results flushed to zero. The probabilities it makes are rounded to float16/bfloat16 (2^-11 /
// 2^-8 relative) before P V, so its error is four orders of magnitude below the type's; a flushed value
// is below 2^-126 against a row maximum of 1. exp2f would add range checks around the same instruction.
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// A block's cp.async plan for tiles of `Rows` rows of D elements (16-byte chunks): thread t copies chunk
// t % chunks of rows t / chunks, + kStep, + 2 kStep, ... (kStep rows per pass of the block's threads).
// The source pointer, the shared address and the pass stride are computed once; each tile then costs a
// pointer increment per chunk and a compare with the tile's valid rows. Threads past kStep * chunks (head
// sizes whose chunk count does not divide the block) copy nothing.
template <class T, int D, int Threads, int Rows, int Ld>
struct RowCopy {
  static constexpr int kChunks = D / 8;
  static constexpr int kStep = Threads / kChunks;
  static constexpr int kPasses = (Rows + kStep - 1) / kStep;
  static constexpr bool kAllRowsIn = kStep * kChunks == Threads && Rows % kStep == 0;

  const T* src;   // this thread's first chunk in the next tile
  const T* base;  // a readable address for the zero-filled chunks (not read)
  int pass;       // kStep (<= 64) rows of the source, in elements (flash_attention_fits: ss < 2^24)
  int64_t tile;   // a tile of Rows rows, in elements (used when kPasses passes are not one tile)
  uint32_t dst;   // this thread's first chunk in stage 0 (shared address)
  int row;        // this thread's first row of the tile; Rows when it copies nothing

  __device__ __forceinline__ RowCopy(const T* slice, int64_t ss, int64_t r0, uint32_t smem) {
    const int t = threadIdx.x;
    row = t < kStep * kChunks ? t / kChunks : Rows;
    const int e = (t % kChunks) * 8;
    base = slice;
    src = slice + (r0 + (row < Rows ? row : 0)) * ss + e;
    pass = static_cast<int>(kStep * ss);
    tile = Rows * ss;
    dst = smem + static_cast<uint32_t>((row * Ld + e) * 2);
  }

  // The next tile into the stage at byte offset `stage`: rows at or past `valid` (relative to the tile)
  // are zero-filled.
  __device__ __forceinline__ void issue(uint32_t stage, int valid) {
    const T* s = src;
    if (valid >= Rows) {  // block-uniform: a full tile needs no compare or select per chunk
#pragma unroll
      for (int it = 0; it < kPasses; ++it) {
        if (kAllRowsIn || row + it * kStep < Rows)
          cp_async16(dst + stage + static_cast<uint32_t>(it * kStep * Ld * 2), s);
        s += pass;
      }
      advance(s);
      return;
    }
    const int left = valid - row;  // pass `it` copies a real row when it * kStep < left
#pragma unroll
    for (int it = 0; it < kPasses; ++it) {
      if (kAllRowsIn || row + it * kStep < Rows) {
        const bool ok = it * kStep < left;
        cp_async16(dst + stage + static_cast<uint32_t>(it * kStep * Ld * 2), ok ? s : base, ok);
      }
      s += pass;
    }
    advance(s);
  }

  // To the next tile; `s` is src moved by kPasses passes.
  __device__ __forceinline__ void advance(const T* s) {
    if constexpr (Rows % kStep == 0)
      src = s;  // kPasses passes are one tile
    else
      src += tile;
  }
};

enum class ScorePath { kPlain, kRowBias, kGeneral };

// op over v[0..N) (N a power of two) as a balanced tree; v is overwritten.
template <int N, class Op>
__device__ __forceinline__ float tree(float (&v)[N], Op op) {
#pragma unroll
  for (int w = N / 2; w >= 1; w /= 2)
#pragma unroll
    for (int i = 0; i < w; ++i) v[i] = op(v[i], v[i + w]);
  return v[0];
}

constexpr int kNt = kKeys / 8;      // score n-tiles of 8 keys
constexpr int kSteps = kKeys / 16;  // 16-key steps of a tile (one mma k-step of P V)

// The additive mask's values (times log2 e) for this thread's keys of the tile (j0 + n * 8 + tig * 2 + e)
// when the mask does not depend on the query row. `m` points at key 0 of the (batch, head) slice, keys
// contiguous. A full tile (no key at or past `end`) with an even-aligned slice reads each thread's two
// adjacent keys as one pair; otherwise keys at or past `end` (masked anyway) read nothing.
template <int NT, class M>
__device__ __forceinline__ void load_bias(float (&bv)[NT][2], const M* m, int j0, int tig, int end) {
  const bool pairs = j0 + NT * 8 <= end && reinterpret_cast<uintptr_t>(m) % (2 * sizeof(M)) == 0;
  if (pairs) {
    const M* at = m + j0 + tig * 2;
#pragma unroll
    for (int n = 0; n < NT; ++n) {
      if constexpr (std::is_same_v<M, float>) {
        const float2 v = *reinterpret_cast<const float2*>(at + n * 8);
        bv[n][0] = v.x * kLog2e, bv[n][1] = v.y * kLog2e;
      } else if constexpr (std::is_same_v<M, __half>) {
        const float2 v = __half22float2(*reinterpret_cast<const __half2*>(at + n * 8));
        bv[n][0] = v.x * kLog2e, bv[n][1] = v.y * kLog2e;
      } else {
        const float2 v = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(at + n * 8));
        bv[n][0] = v.x * kLog2e, bv[n][1] = v.y * kLog2e;
      }
    }
    return;
  }
#pragma unroll
  for (int n = 0; n < NT; ++n) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int j = j0 + n * 8 + tig * 2 + e;
      bv[n][e] = j < end ? load(m, j) * kLog2e : 0.0f;
    }
  }
}

// S = Q K^T for a warp's 16 rows and NT * 8 keys (a tile, or one 16-key step of it); with Guard, only the
// first `steps` 16-key steps (the others stay 0 and are masked by the caller).
template <class T, int D, int Ld, bool Guard, int NT>
__device__ __forceinline__ void qk_product(float (&s)[NT][4], const uint32_t (&qf)[D / 16][4], const T* ks,
                                           int lane, int steps) {
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
    for (int np = 0; np < NT / 2; ++np) {
      if (Guard && np >= steps) continue;
      uint32_t kf[4];
      ldsm_x4(kf, ks + (np * 16 + (lane / 16) * 8 + lane % 8) * Ld + kk * 16 + ((lane / 8) % 2) * 8);
      mma<T>(s[2 * np], qf[kk], kf[0], kf[1]);
      mma<T>(s[2 * np + 1], qf[kk], kf[2], kf[3]);
    }
  }
}

// O += P V: P's accumulator layout is the A layout of the next product. With Guard, only the first
// `steps` 16-key steps (the others hold zeros).
template <class T, int D, int Ld, bool Guard, int NT>
__device__ __forceinline__ void pv_product(float (&o)[D / 8][4], const float (&s)[NT][4], const T* vs,
                                           int lane, int steps) {
#pragma unroll
  for (int t = 0; t < NT / 2; ++t) {
    if (Guard && t >= steps) continue;
    const uint32_t pa[4] = {pack2<T>(s[2 * t][0], s[2 * t][1]), pack2<T>(s[2 * t][2], s[2 * t][3]),
                            pack2<T>(s[2 * t + 1][0], s[2 * t + 1][1]),
                            pack2<T>(s[2 * t + 1][2], s[2 * t + 1][3])};
#pragma unroll
    for (int dp = 0; dp < D / 16; ++dp) {
      uint32_t vf[4];
      ldsm_x4_trans(vf, vs + (t * 16 + lane % 8 + ((lane / 8) % 2) * 8) * Ld + dp * 16 + (lane / 16) * 8);
      mma<T>(o[2 * dp], pa, vf[0], vf[1]);
      mma<T>(o[2 * dp + 1], pa, vf[2], vf[3]);
    }
  }
}

// The S warps of a key-split group merge their softmax states (per row: max m, this thread's share of the
// sum l, the output accumulator o; m in the units of the kernel's scores, 2^(m f) the scale) through
// shared memory (free after the key loop's last barrier): warp 0 of the group rescales each warp's l and
// o by 2^((m_w - M) f), M the largest m, and adds them. Returns whether this warp holds the result.
template <int D, int S>
__device__ __forceinline__ bool combine(float (&o)[D / 8][4], float (&m)[2], float (&l)[2], float f,
                                        float* buf, int group, int sub, int lane) {
  constexpr int kVals = D / 8 * 4 + 4;                                             // o, m[2], l[2] per thread
  float* mine = buf + (static_cast<size_t>(group) * S + sub) * kVals * 32 + lane;  // lane-minor: no conflicts
  __syncthreads();  // no warp still reads Q (a block whose rows see no key ran no loop barrier)
  if (sub != 0) {
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
#pragma unroll
      for (int c = 0; c < 4; ++c) mine[(n * 4 + c) * 32] = o[n][c];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      mine[(D / 2 + r) * 32] = m[r];
      mine[(D / 2 + 2 + r) * 32] = l[r];
    }
  }
  __syncthreads();
  if (sub != 0) return false;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float mx = m[r];
#pragma unroll
    for (int w = 1; w < S; ++w) mx = fmaxf(mx, mine[(w * kVals + D / 2 + r) * 32]);
    const float mf = (mx == -INFINITY ? 0.0f : mx) * f;
    const float c0 = ex2(fmaf(m[r], f, -mf));
    l[r] *= c0;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) o[n][2 * r] *= c0, o[n][2 * r + 1] *= c0;
#pragma unroll
    for (int w = 1; w < S; ++w) {
      const float* other = mine + w * kVals * 32;
      const float cw = ex2(fmaf(other[(D / 2 + r) * 32], f, -mf));
      l[r] = fmaf(other[(D / 2 + 2 + r) * 32], cw, l[r]);
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        o[n][2 * r] = fmaf(other[(n * 4 + 2 * r) * 32], cw, o[n][2 * r]);
        o[n][2 * r + 1] = fmaf(other[(n * 4 + 2 * r + 1) * 32], cw, o[n][2 * r + 1]);
      }
    }
    m[r] = mx;
  }
  return true;
}

// 4-warp (8-warp) blocks of head size <= 64 on the plain and row-bias paths are held to 128 registers, so
// that 4 blocks (16 warps) fit an SM (their 46 KB of shared memory allow 4 too); the general path's mask code
// would spill there, so it gets 3 (170 registers). Larger heads are limited by shared memory anyway, and
// key-split blocks (small grids) by their count.
template <int D, int W, int S, ScorePath P>
constexpr int min_blocks() {
  // 2 groups of 16 rows, each split between 2 warps (4 warps, 41 KB of shared memory at d = 64): as 4-warp
  // blocks of 64 rows.
  if (W == 2 && S == 2 && D <= 64 && P != ScorePath::kGeneral) return 4;
  if (W < 4 || S != 1 || D > 64) return 1;
  return (P == ScorePath::kGeneral ? 12 : 16) / W;  // warps per SM: 8-warp blocks get 2 (1)
}

// How a launch lays its blocks out (the same for every block of it).
struct BlockPlan {
  // Grid order. 0: (q blocks, heads, batch), a (batch, head)'s query blocks dispatched together. 1: (heads,
  // batch, q blocks), the first query block of every (batch, head) before any second one, so a short last
  // block (ViT: 197 = 3 * 64 + 5) is dispatched last and fills the last wave's gaps. 2: the same, last query
  // block first (causal attention: the block with the most keys first).
  int order = 0;
  // A 4-warp block whose real rows fit one warp (q_seq - i0 <= 16) gives its 4 warps those 16 rows and
  // splits each 64-key tile among them (warp k takes the 16-key step k), merging their softmax states at
  // the end: a quarter of the key loop's math per warp instead of one warp doing all of it while three
  // only load.
  bool split_tail = false;
};

// W groups of 16 query rows; S warps per group split each stage's S * 64 keys (warp k of a group takes
// tile k of the stage) and combine their partial softmax states at the end (small grids: BERT or ViT at
// batch 1 would otherwise have one warp per block walk every key tile alone).
template <class T, int D, int W, int S, ScorePath P>
__global__ void __launch_bounds__(W* S * 32, min_blocks<D, W, S, P>())
    flash_kernel(AttnParams p, BlockPlan plan) {
  using L = Smem<D, W, S>;
  constexpr int kThreads = W * S * 32;
  constexpr int kRows = 16 * W;
  constexpr int kTile = L::stage_rows;  // keys per stage
  constexpr int ld = L::ld;
  constexpr uint32_t kStageBytes = kTile * ld * 2;
  // A tail split needs one 16-key step per warp of each 64-key tile.
  constexpr bool kCanSplitTail = S == 1 && W == kSteps;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* smem = reinterpret_cast<T*>(smem_raw);

  // int32 rows and keys (flash_attention_fits keeps them below 2^30); int64 only for element offsets.
  int qblock;
  int64_t h, b;
  if (plan.order == 0) {
    qblock = static_cast<int>(blockIdx.x), h = blockIdx.y, b = blockIdx.z;
  } else {
    h = blockIdx.x, b = blockIdx.y;
    qblock = static_cast<int>(plan.order == 1 ? blockIdx.z : gridDim.z - 1 - blockIdx.z);
  }
  const int i0 = qblock * kRows;
  const int q_seq = static_cast<int>(p.q_seq);
  const int64_t kvh = h / (p.q_heads / p.kv_heads);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const bool tail = kCanSplitTail && plan.split_tail && q_seq - i0 <= 16;  // block-uniform
  // The warp's 16 rows, and its tile of each stage (tail: its 16-key step of each tile).
  const int group = tail ? 0 : warp / S, sub = tail ? warp : warp % S;
  const int g = lane / 4, tig = lane % 4;

  // The keys the row `i` can see: up to its causal/right limit and the block's end.
  auto limit = [&](int i, int64_t e) -> int {
    return static_cast<int>(p.right >= 0 ? min(e, attn::query_pos(p, b, i) + p.right + 1) : e);
  };
  // The keys any row of the block can see.
  int64_t end64 = p.keys;
  if (p.nonpad) end64 = min(end64, p.nonpad[b]);
  if (p.add.type != MaskType::kNone) end64 = min(end64, p.add.keys);
  const int end = limit(min(i0 + kRows, q_seq) - 1, end64);

  const T* kb = static_cast<const T*>(p.k.p) + b * p.k.sb + kvh * p.k.sh;
  const T* vb = static_cast<const T*>(p.v.p) + b * p.v.sb + kvh * p.v.sh;
  const T* qb = static_cast<const T*>(p.q.p) + b * p.q.sb + h * p.q.sh;
  const uint32_t s0 = smem_addr(smem);
  RowCopy<T, D, kThreads, kTile, ld> kc(kb, p.k.ss, 0, s0 + static_cast<uint32_t>(L::k * 2));
  RowCopy<T, D, kThreads, kTile, ld> vc(vb, p.v.ss, 0, s0 + static_cast<uint32_t>(L::v * 2));
  {
    RowCopy<T, D, kThreads, kRows, ld> qc(qb, p.q.ss, i0, s0 + static_cast<uint32_t>(L::q * 2));
    qc.issue(0, q_seq - i0);
  }
  cp_commit();
  if (end > 0) {
    kc.issue(0, end);
    vc.issue(0, end);
  }
  cp_commit();

  // This warp's rows: whether any is real, the keys its first (fewest) and last real (most) row see.
  // The limits grow with the row, so a tile below lim_lo needs no mask and one at or past lim_hi no math.
  const int wr0 = i0 + group * 16;
  const bool warp_live = wr0 < q_seq;
  const int lim_lo = limit(wr0, end), lim_hi = limit(min(wr0 + 15, q_seq - 1), end);
  // This thread's two rows (g and g + 8 of the warp's 16), their positions and limits.
  const int rows[2] = {wr0 + g, wr0 + g + 8};
  [[maybe_unused]] int64_t pos[2];
  int lim[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int i = min(rows[r], q_seq - 1);
    pos[r] = attn::query_pos(p, b, i);
    lim[r] = limit(i, end);
  }
  // Plain: scores stay unscaled until the exponential, 2^(s * scale2 - m * scale2), one FFMA (the
  // path needs scale > 0, so the maximum of s is that of the scaled scores). The others: base-2 units.
  const float scale2 = p.scale * kLog2e;
  const float f = P == ScorePath::kPlain ? scale2 : 1.0f;
  [[maybe_unused]] const int64_t bias_base = b * p.add.stride[0] + h * p.add.stride[1];

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
    ldsm_x4(qf[kk], smem + L::q + (group * 16 + lane % 16) * ld + kk * 16 + (lane / 16) * 8);

  // The warp's NT * 8 keys from j0 (K and V rows at ks, vs in shared memory), of which the first `steps`
  // 16-key steps hold a key some row of the warp sees (Guard: fewer than NT / 2 may): scores, mask,
  // online softmax, P V.
  auto keys_step = [&](auto nt, auto guard, const T* ks, const T* vs, int j0, int steps) {
    constexpr int NT = decltype(nt)::value;
    constexpr bool kGuard = decltype(guard)::value;
    // The row-independent mask's values first, so that their loads overlap the product.
    [[maybe_unused]] float bv[NT][2];
    if constexpr (P == ScorePath::kRowBias) {
      if (p.add.type == MaskType::kFloat)
        load_bias<NT>(bv, static_cast<const float*>(p.add.p) + bias_base, j0, tig, end);
      else if (p.add.type == MaskType::kHalf)
        load_bias<NT>(bv, static_cast<const __half*>(p.add.p) + bias_base, j0, tig, end);
      else
        load_bias<NT>(bv, static_cast<const __nv_bfloat16*>(p.add.p) + bias_base, j0, tig, end);
    }

    float s[NT][4];
#pragma unroll
    for (int n = 0; n < NT; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
    qk_product<T, D, ld, kGuard, NT>(s, qf, ks, lane, steps);

    // Scale and mask. Keys below every row's limit (warp-uniform) need no mask; a cut step compares
    // each key with its row's limit (keys past the block's end are past every limit).
    [[maybe_unused]] const bool cut = j0 + NT * 8 > lim_lo;
    [[maybe_unused]] const int rel[2] = {lim[0] - j0 - tig * 2, lim[1] - j0 - tig * 2};
#pragma unroll
    for (int n = 0; n < NT; ++n) {
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int r = c / 2;
        float x = s[n][c];
        if constexpr (P == ScorePath::kGeneral) {
          const int64_t j = j0 + n * 8 + tig * 2 + (c & 1);
          x = rows[r] < q_seq && j < end
                  ? attn::masked_score(p, attn::softcapped(p, x * p.scale), b, h, rows[r], j, pos[r]) * kLog2e
                  : -INFINITY;
        } else {
          if constexpr (P == ScorePath::kRowBias) x = fmaf(x, scale2, bv[n][c & 1]);
          if (cut && n * 8 + (c & 1) >= rel[r]) x = -INFINITY;
        }
        s[n][c] = x;
      }
    }

    // Online softmax: the rows' maxima over the quad's 4 threads, then exponentials. A row with no
    // visible key yet keeps m = -inf and subtracts 0 (its exponentials are 2^-inf = 0).
    float alpha[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float t[NT];  // pairwise trees: depth log2 NT instead of a chain of 2 NT dependent operations
#pragma unroll
      for (int n = 0; n < NT; ++n) t[n] = fmaxf(s[n][2 * r], s[n][2 * r + 1]);
      float mx = tree<NT>(t, [](float a, float b) { return fmaxf(a, b); });
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(m[r], mx);
      const float mf = (m_new == -INFINITY ? 0.0f : m_new) * f;
      alpha[r] = ex2(fmaf(m[r], f, -mf));
#pragma unroll
      for (int n = 0; n < NT; ++n) {
        s[n][2 * r] = ex2(fmaf(s[n][2 * r], f, -mf));
        s[n][2 * r + 1] = ex2(fmaf(s[n][2 * r + 1], f, -mf));
        t[n] = s[n][2 * r] + s[n][2 * r + 1];
      }
      const float part = tree<NT>(t, [](float a, float b) { return a + b; });
      l[r] = l[r] * alpha[r] + part;  // this thread's share; the quad's shares are added at the end
      m[r] = m_new;
    }
#pragma unroll
    for (int n = 0; n < kDt; ++n) {
      o[n][0] *= alpha[0], o[n][1] *= alpha[0];
      o[n][2] *= alpha[1], o[n][3] *= alpha[1];
    }

    pv_product<T, D, ld, kGuard, NT>(o, s, vs, lane, steps);
  };

  uint32_t stage = 0;
  for (int js = 0; js < end; js += kTile, stage ^= (S == 1 ? kStageBytes : 0)) {
    if constexpr (S == 1) {
      // One barrier per tile: after it, tile js has landed for every thread and every warp is done with
      // tile js - 1, whose stage then takes tile js + 1 while this one is multiplied.
      cp_wait<0>();
      __syncthreads();
      if (js + kTile < end) {
        kc.issue(stage ^ kStageBytes, end - js - kTile);
        vc.issue(stage ^ kStageBytes, end - js - kTile);
        cp_commit();
      }
    } else {
      if (js > 0) {  // one stage: the previous one was read by every warp (the loop's last barrier)
        kc.issue(0, end - js);
        vc.issue(0, end - js);
        cp_commit();
      }
      cp_wait<0>();
      __syncthreads();
    }
    const T* ks = smem + L::k + stage / 2;
    const T* vs = smem + L::v + stage / 2;
    if (kCanSplitTail && tail) {
      // The warp's 16-key step of the tile, when some row of the block sees a key of it.
      const int j0 = js + sub * 16;
      if (j0 < lim_hi)
        keys_step(std::integral_constant<int, 2>{}, std::false_type{}, ks + sub * 16 * ld, vs + sub * 16 * ld,
                  j0, 1);
    } else {
      // The warp's tile of the stage, and its 16-key steps that hold a key some row of the warp sees
      // (warp-uniform); a warp with no real row or no such key only helps load.
      const int j0 = js + sub * kKeys;
      const int steps = min(kSteps, max(0, lim_hi - j0 + 15) / 16);
      if (warp_live && steps > 0)
        keys_step(std::integral_constant<int, kNt>{}, std::true_type{}, ks + sub * kKeys * ld,
                  vs + sub * kKeys * ld, j0, steps);
    }
    if constexpr (S > 1) __syncthreads();  // every warp is done with the stage before it is loaded again
  }
  cp_wait<0>();
  if constexpr (S > 1) {
    if (!combine<D, S>(o, m, l, f, reinterpret_cast<float*>(smem_raw), group, sub, lane)) return;
  } else if constexpr (kCanSplitTail) {
    static_assert(size_t{W} * (D / 2 + 4) * 32 * 4 <= L::bytes, "the merge buffer fits the tiles' memory");
    if (tail && !combine<D, W>(o, m, l, f, reinterpret_cast<float*>(smem_raw), 0, sub, lane)) return;
  }

  T* yb = static_cast<T*>(p.y) + b * p.y_sb + h * p.y_sh;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = l[r];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    if (rows[r] >= q_seq) continue;
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    T* yr = yb + rows[r] * p.y_ss;
    const bool pairs = reinterpret_cast<uintptr_t>(yr) % 4 == 0;  // then every even column is 4-aligned
#pragma unroll
    for (int n = 0; n < kDt; ++n) {
      const int e = n * 8 + tig * 2;
      if (pairs) {
        *reinterpret_cast<uint32_t*>(yr + e) = pack2<T>(o[n][2 * r] * inv, o[n][2 * r + 1] * inv);
      } else {
        store(yr, e, o[n][2 * r] * inv);
        store(yr, e + 1, o[n][2 * r + 1] * inv);
      }
    }
  }
}

ScorePath score_path(const AttnParams& p) {
  if (p.keep.type != MaskType::kNone || p.softcap > 0 || p.left >= 0 || p.nonpad) return ScorePath::kGeneral;
  // The plain path takes the row maximum of the unscaled scores: that of the scaled ones when scale > 0.
  if (p.add.type == MaskType::kNone) return p.scale > 0 ? ScorePath::kPlain : ScorePath::kGeneral;
  // The row-bias path reads the mask's keys as contiguous values (pairs where aligned).
  if (p.add.type == MaskType::kBool || p.add.stride[2] != 0 || p.add.stride[3] != 1)
    return ScorePath::kGeneral;
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

template <class T, int D, int W, int S, ScorePath P>
void launch_path(const AttnParams& p, BlockPlan plan, cudaStream_t s) {
  constexpr size_t bytes = Smem<D, W, S>::bytes;
  // Once, before any launch: not a stream operation, but a CUDA graph capture of a later run should see
  // nothing but launches.
  static std::once_flag opt_in;
  std::call_once(opt_in, [] {
    cudaFuncSetAttribute(flash_kernel<T, D, W, S, P>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(bytes));
  });
  constexpr int rows = 16 * W;
  const auto qblocks = static_cast<unsigned>((p.q_seq + rows - 1) / rows);
  const auto heads = static_cast<unsigned>(p.q_heads), batch = static_cast<unsigned>(p.batch);
  // The query blocks on the grid's z axis when it holds them (65535).
  if (qblocks > 65535) plan.order = 0;
  const dim3 grid = plan.order == 0 ? dim3(qblocks, heads, batch) : dim3(heads, batch, qblocks);
  flash_kernel<T, D, W, S, P><<<grid, W * S * 32, bytes, s>>>(p, plan);
}

// One kernel per score path: the general path's code (every mask kind, softcap) inlined into the
// unrolled score loop would make the common kernels several times larger than the instruction cache.
template <class T, int D, int W, int S>
void launch_typed(const AttnParams& p, BlockPlan plan, cudaStream_t s) {
  switch (score_path(p)) {
    case ScorePath::kPlain:
      return launch_path<T, D, W, S, ScorePath::kPlain>(p, plan, s);
    case ScorePath::kRowBias:
      return launch_path<T, D, W, S, ScorePath::kRowBias>(p, plan, s);
    default:
      return launch_path<T, D, W, S, ScorePath::kGeneral>(p, plan, s);
  }
}

// What TESSERA_FLASH_BLOCK forces, for measuring one choice against another (the attention
// micro-benchmark, the tests of each): a block shape, "rows64" (4 warps of 16 rows), "rows128" (8 warps;
// head size 64 only, others take rows64), "split16" (16 rows, 4 warps splitting the keys), "split32" (2
// groups of 16 rows, 2 warps splitting the keys of each; head size 64 only, others take split16), or "auto"
// (the launcher's choice of shape), followed by any of "+tail" (rows64: a last block of at most 16 rows
// splits its keys among its warps, BlockPlan::split_tail), "+order" (query blocks dispatched on the grid's z
// axis, last blocks last; causal: first) and "+plain" (neither: the grid order and blocks of 2026-11-25
// 07:00). Unset or unknown: the launcher's choice of everything (plan_for, launch_rows). Read at each launch
// (a getenv: nothing next to a kernel launch).
enum class BlockShape { kAuto, kRows64, kRows128, kSplit16, kSplit32 };

struct Forced {
  BlockShape shape = BlockShape::kAuto;
  std::optional<bool> split_tail, order;
};

Forced forced_choice() {
  Forced f;
  const char* v = std::getenv("TESSERA_FLASH_BLOCK");
  if (!v) return f;
  std::string_view s(v);
  const size_t plus = s.find('+');
  const std::string_view shape = s.substr(0, plus);
  if (shape == "rows64") f.shape = BlockShape::kRows64;
  if (shape == "rows128") f.shape = BlockShape::kRows128;
  if (shape == "split16") f.shape = BlockShape::kSplit16;
  if (shape == "split32") f.shape = BlockShape::kSplit32;
  const std::string_view flags = plus == std::string_view::npos ? std::string_view() : s.substr(plus);
  if (flags.find("+plain") != std::string_view::npos) f.split_tail = f.order = false;
  if (flags.find("+tail") != std::string_view::npos) f.split_tail = true;
  if (flags.find("+order") != std::string_view::npos) f.order = true;
  return f;
}

// The grid plan: TESSERA_FLASH_BLOCK's switches, else the launcher's defaults, from the H100 run of
// 2026-11-25 09:55 (CUPTI, us, 64-row blocks, plain / +tail / +order / both): ViT b32 36.2 / 35.2 / 35.9 /
// 34.2, GPT-2 b32 13.9 / 13.9 / 13.1 / 12.9, BERT b32 17.5 / 17.5 / 17.8 / 17.8. So: the tail split always
// (it changes only blocks of <= 16 rows); 64-row blocks' query blocks on z where their work differs (causal:
// descending; a last block of <= 16 rows: ascending, it is dispatched last), not where every block is
// alike (BERT: 17.8 against 17.5); other shapes in the plain order (at batch 1 "+order" gained nothing).
BlockPlan plan_for(const AttnParams& p, const Forced& f, bool rows64) {
  BlockPlan plan;
  plan.split_tail = f.split_tail.value_or(true);
  const bool causal = p.right >= 0;
  const int64_t last = p.q_seq % 64;
  const bool order = f.order.value_or(rows64 && (causal || (last > 0 && last <= 16)));
  if (order) plan.order = causal ? 2 : 1;
  return plan;
}

// 4-warp blocks (64 rows) share each K/V tile among more rows; when they would not fill the GPU
// (BERT at batch 1: 2 x 12 blocks), smaller blocks give more, and warps split the keys instead of one
// warp walking them all: 2 groups of 16 rows with 2 warps each when the keys fit 2 tiles of 64 (head size
// 64: BERT/GPT-2 at batch 1, 4.3 / 3.9 us against 16-row blocks' 4.7 / 4.0, whose 4 warps split 256 keys
// of which 128 are there), else 16 rows with 4 warps (ViT b1: 6.0 us either way).
template <class T, int D>
void launch_rows(const AttnParams& p, cudaStream_t s) {
  const Forced f = forced_choice();
  switch (f.shape) {
    case BlockShape::kRows64:
      return launch_typed<T, D, 4, 1>(p, plan_for(p, f, true), s);
    case BlockShape::kRows128:
      if constexpr (D == 64) return launch_typed<T, D, 8, 1>(p, plan_for(p, f, false), s);
      return launch_typed<T, D, 4, 1>(p, plan_for(p, f, true), s);
    case BlockShape::kSplit16:
      return launch_typed<T, D, 1, 4>(p, plan_for(p, f, false), s);
    case BlockShape::kSplit32:
      if constexpr (D == 64) return launch_typed<T, D, 2, 2>(p, plan_for(p, f, false), s);
      return launch_typed<T, D, 1, 4>(p, plan_for(p, f, false), s);
    case BlockShape::kAuto:
      break;
  }
  const int64_t blocks4 = (p.q_seq + 63) / 64 * p.q_heads * p.batch;
  if (blocks4 >= sm_count()) return launch_typed<T, D, 4, 1>(p, plan_for(p, f, true), s);
  if constexpr (D == 64) {
    if (p.keys <= 2 * kKeys) return launch_typed<T, D, 2, 2>(p, plan_for(p, f, false), s);
  }
  launch_typed<T, D, 1, 4>(p, plan_for(p, f, false), s);
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

// 16-byte rows, and a row stride small enough that 64 rows of it are an int32 (the copy plan's passes).
bool aligned(const AttnOperand& x) {
  return reinterpret_cast<uintptr_t>(x.p) % 16 == 0 && x.sb % 8 == 0 && x.sh % 8 == 0 && x.ss % 8 == 0 &&
         x.ss >= 0 && x.ss < (int64_t{1} << 24);
}

}  // namespace

bool flash_attention_fits(const AttnParams& p) {
  if (p.t == ElemType::kFloat || p.qk) return false;
  // Head sizes the mma tiles cover: multiples of 16 up to 128, the same for V.
  if (p.head != p.v_head || p.head % 16 != 0 || p.head < 16 || p.head > 128) return false;
  // The kernel indexes rows and keys in 32 bits.
  if (p.q_heads > 65535 || p.batch > 65535 || p.q_seq >= (int64_t{1} << 30) || p.keys >= (int64_t{1} << 30))
    return false;
  return aligned(p.q) && aligned(p.k) && aligned(p.v);
}

void launch_flash_attention(const AttnParams& p, cudaStream_t s) {
  if (p.t == ElemType::kHalf) return launch_head<__half>(p, s);
  launch_head<__nv_bfloat16>(p, s);
}

}  // namespace tessera::cuda
