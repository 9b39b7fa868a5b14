// The flash attention kernel (float16 / bfloat16): a block of 4 warps takes 64 query rows of one
// (batch, head) and walks the keys in tiles of 64. Each warp multiplies its 16 query rows by the key tile
// on the tensor cores (WMMA 16x16x16, float32 accumulation) into shared memory, applies scale, softcap
// and masks, and updates the running row maximum and sum (online softmax, float32). The probabilities,
// rounded once to the element type, multiply the value tile on the tensor cores into a float32 output
// tile kept in shared memory, rescaled whenever a row's maximum grows. The output is divided by the row
// sum at the end and rounded once when stored; a row with every key masked gets zeros.
//
// The key loop stops at the last key any of the block's rows can see (causal/window limits, a short
// mask, nonpad lengths), so causal attention does about half the work.
#include <mma.h>

#include <mutex>

#include "backends/cuda/attention_common.cuh"

namespace tessera::cuda {

namespace {

using namespace nvcuda;

constexpr int kRows = 64;  // query rows per block (16 per warp)
constexpr int kKeys = 64;  // keys per tile
constexpr int kWarps = kRows / 16;
constexpr int kThreads = kWarps * 32;

// Shared-memory layout (element counts); row pitches padded against bank conflicts, every fragment
// start 32-byte aligned.
template <int D>
struct Smem {
  static constexpr int ldh = D + 8;      // Q, K, V tiles (16-bit)
  static constexpr int lds = kKeys + 4;  // scores (float)
  static constexpr int ldp = kKeys + 8;  // probabilities (16-bit)
  static constexpr int ldo = D + 4;      // output accumulator (float)
  static constexpr size_t q = 0;
  static constexpr size_t k = q + size_t{kRows} * ldh * 2;
  static constexpr size_t v = k + size_t{kKeys} * ldh * 2;
  static constexpr size_t s = v + size_t{kKeys} * ldh * 2;
  static constexpr size_t pr = s + size_t{kRows} * lds * 4;
  static constexpr size_t o = pr + size_t{kRows} * ldp * 2;
  static constexpr size_t alpha = o + size_t{kRows} * ldo * 4;
  static constexpr size_t sum = alpha + kRows * 4;
  static constexpr size_t bytes = sum + kRows * 4;
};

// Copies rows [r0, r0 + kRows) of a (seq, D) slice, 8 elements per 16-byte load; rows past `n` are zero.
template <class T, int D>
__device__ __forceinline__ void load_tile(T* dst, const T* src, int64_t ss, int64_t r0, int64_t n) {
  constexpr int chunks = D / 8;
  constexpr int ldh = Smem<D>::ldh;
  for (int c = threadIdx.x; c < kRows * chunks; c += kThreads) {
    const int r = c / chunks, e = (c % chunks) * 8;
    uint4 val = make_uint4(0, 0, 0, 0);
    if (r0 + r < n) val = *reinterpret_cast<const uint4*>(src + (r0 + r) * ss + e);
    *reinterpret_cast<uint4*>(dst + r * ldh + e) = val;
  }
}

template <class T, int D>
__global__ void __launch_bounds__(kThreads) flash_kernel(AttnParams p) {
  using L = Smem<D>;
  extern __shared__ __align__(128) unsigned char smem[];
  T* qs = reinterpret_cast<T*>(smem + L::q);
  T* ks = reinterpret_cast<T*>(smem + L::k);
  T* vs = reinterpret_cast<T*>(smem + L::v);
  float* ss = reinterpret_cast<float*>(smem + L::s);
  T* ps = reinterpret_cast<T*>(smem + L::pr);
  float* os = reinterpret_cast<float*>(smem + L::o);
  float* alpha_s = reinterpret_cast<float*>(smem + L::alpha);
  float* sum_s = reinterpret_cast<float*>(smem + L::sum);

  const int64_t i0 = int64_t{blockIdx.x} * kRows;
  const int64_t h = blockIdx.y, b = blockIdx.z;
  const int64_t kvh = h / (p.q_heads / p.kv_heads);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  load_tile<T, D>(qs, static_cast<const T*>(p.q.p) + b * p.q.sb + h * p.q.sh, p.q.ss, i0, p.q_seq);
  for (int x = threadIdx.x; x < kRows * L::ldo; x += kThreads) os[x] = 0.0f;

  // The keys any row of the block can see.
  int64_t end = p.keys;
  const int64_t last_row = min(i0 + kRows, p.q_seq) - 1;
  if (p.right >= 0) end = min(end, attn::query_pos(p, b, last_row) + p.right + 1);
  if (p.nonpad) end = min(end, p.nonpad[b]);
  if (p.add.type != MaskType::kNone) end = min(end, p.add.keys);

  const T* kb = static_cast<const T*>(p.k.p) + b * p.k.sb + kvh * p.k.sh;
  const T* vb = static_cast<const T*>(p.v.p) + b * p.v.sb + kvh * p.v.sh;
  // This lane's row of the warp's 16 (two lanes per row, 32 keys each) and its running statistics.
  const int row = warp * 16 + lane / 2, half = lane % 2;
  const int64_t i = i0 + row;
  const int64_t pos = attn::query_pos(p, b, i < p.q_seq ? i : 0);
  float m = -INFINITY, l = 0.0f;
  __syncthreads();
  wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> qf[D / 16];
  for (int kk = 0; kk < D / 16; ++kk)
    wmma::load_matrix_sync(qf[kk], qs + warp * 16 * L::ldh + kk * 16, L::ldh);

  for (int64_t j0 = 0; j0 < end; j0 += kKeys) {
    __syncthreads();  // every warp is done with the previous tiles
    load_tile<T, D>(ks, kb, p.k.ss, j0, end);
    load_tile<T, D>(vs, vb, p.v.ss, j0, end);
    __syncthreads();

    // Scores of the warp's 16 rows against the 64 keys.
    for (int n = 0; n < kKeys / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int kk = 0; kk < D / 16; ++kk) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> kf;
        wmma::load_matrix_sync(kf, ks + n * 16 * L::ldh + kk * 16, L::ldh);
        wmma::mma_sync(acc, qf[kk], kf, acc);
      }
      wmma::store_matrix_sync(ss + warp * 16 * L::lds + n * 16, acc, L::lds, wmma::mem_row_major);
    }
    __syncwarp();

    // Online softmax over this lane's 32 keys, the row's two lanes combined by a shuffle.
    float* srow = ss + row * L::lds + half * 32;
    float tile_max = -INFINITY;
    for (int c = 0; c < 32; ++c) {
      const int64_t j = j0 + half * 32 + c;
      float x = -INFINITY;
      if (j < end && i < p.q_seq)
        x = attn::masked_score(p, attn::softcapped(p, srow[c] * p.scale), b, h, i, j, pos);
      srow[c] = x;
      tile_max = fmaxf(tile_max, x);
    }
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    const float m_new = fmaxf(m, tile_max);
    const float alpha = m_new == -INFINITY ? 1.0f : expf(m - m_new);
    float part = 0.0f;
    T* prow = ps + row * L::ldp + half * 32;
    for (int c = 0; c < 32; ++c) {
      const float e = m_new == -INFINITY ? 0.0f : expf(srow[c] - m_new);
      part += e;
      store(prow, c, e);
    }
    part += __shfl_xor_sync(0xffffffffu, part, 1);
    l = l * alpha + part;
    m = m_new;
    if (half == 0) alpha_s[row] = alpha;
    __syncwarp();

    // Rescale the warp's output rows, then add P V.
    for (int x = lane; x < 16 * D; x += 32) {
      const int r = warp * 16 + x / D;
      os[r * L::ldo + x % D] *= alpha_s[r];
    }
    __syncwarp();
    for (int n = 0; n < D / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      float* o_tile = os + warp * 16 * L::ldo + n * 16;
      wmma::load_matrix_sync(acc, o_tile, L::ldo, wmma::mem_row_major);
      for (int kk = 0; kk < kKeys / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> pf;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> vf;
        wmma::load_matrix_sync(pf, ps + warp * 16 * L::ldp + kk * 16, L::ldp);
        wmma::load_matrix_sync(vf, vs + kk * 16 * L::ldh + n * 16, L::ldh);
        wmma::mma_sync(acc, pf, vf, acc);
      }
      wmma::store_matrix_sync(o_tile, acc, L::ldo, wmma::mem_row_major);
    }
    __syncwarp();
  }

  if (half == 0) sum_s[row] = l;
  __syncwarp();
  T* yb = static_cast<T*>(p.y) + b * p.y_sb + h * p.y_sh;
  for (int x = lane; x < 16 * D; x += 32) {
    const int r = warp * 16 + x / D, e = x % D;
    const int64_t qi = i0 + r;
    if (qi >= p.q_seq) continue;
    const float s = sum_s[r];
    store(yb + qi * p.y_ss, e, s > 0.0f ? os[r * L::ldo + e] / s : 0.0f);
  }
}

template <class T, int D>
void launch_typed(const AttnParams& p, cudaStream_t s) {
  const size_t bytes = Smem<D>::bytes;
  // Once, before any launch: not a stream operation, but a CUDA graph capture of a later run should see
  // nothing but launches.
  static std::once_flag opt_in;
  std::call_once(opt_in, [] {
    cudaFuncSetAttribute(flash_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(Smem<D>::bytes));
  });
  const dim3 grid(static_cast<unsigned>((p.q_seq + kRows - 1) / kRows), static_cast<unsigned>(p.q_heads),
                  static_cast<unsigned>(p.batch));
  flash_kernel<T, D><<<grid, kThreads, bytes, s>>>(p);
}

template <class T>
void launch_head(const AttnParams& p, cudaStream_t s) {
  switch (p.head) {
    case 16:
      return launch_typed<T, 16>(p, s);
    case 32:
      return launch_typed<T, 32>(p, s);
    case 48:
      return launch_typed<T, 48>(p, s);
    case 64:
      return launch_typed<T, 64>(p, s);
    case 80:
      return launch_typed<T, 80>(p, s);
    case 96:
      return launch_typed<T, 96>(p, s);
    case 112:
      return launch_typed<T, 112>(p, s);
    default:
      return launch_typed<T, 128>(p, s);
  }
}

bool aligned(const AttnOperand& x) {
  return reinterpret_cast<uintptr_t>(x.p) % 16 == 0 && x.sb % 8 == 0 && x.sh % 8 == 0 && x.ss % 8 == 0;
}

}  // namespace

bool flash_attention_fits(const AttnParams& p) {
  if (p.t == ElemType::kFloat || p.qk) return false;
  // Head sizes the WMMA tiles cover: multiples of 16 up to 128, the same for V.
  if (p.head != p.v_head || p.head % 16 != 0 || p.head < 16 || p.head > 128) return false;
  if (p.q_heads > 65535 || p.batch > 65535 || p.q_seq > int64_t{kRows} * 0x7fffffff) return false;
  return aligned(p.q) && aligned(p.k) && aligned(p.v);
}

void launch_flash_attention(const AttnParams& p, cudaStream_t s) {
  if (p.t == ElemType::kHalf) return launch_head<__half>(p, s);
  launch_head<__nv_bfloat16>(p, s);
}

}  // namespace tessera::cuda
