// A fast Transpose for every fixed-size element type (1, 2, 4 or 8 bytes: float32/16, bfloat16, double,
// the integers, bool, complex64), multi-threaded. Transformers transpose activations four times a block
// ([B, S, H, D] -> [B, H, S, D] around attention, K^T), and the reference kernel walks the output one
// element at a time through a generic strided index.
//
// Element values are only moved, so the kernel works on unsigned words of the element's size. The
// permutation is simplified first: size-1 axes are dropped and runs of axes that stay adjacent and in
// order are merged (BERT's [B, S, H, D] -> [B, H, S, D] becomes [S, H, D] -> [H, S, D] for B = 1). Then:
//   - an identity permutation is one copy;
//   - when the innermost axis stays innermost, each output row of it is one memcpy of a contiguous input
//     row (the attention head split / merge: rows of D values);
//   - otherwise the plane of the input's innermost axis and the output's innermost axis is transposed in
//     16x16 tiles (both fit in L1), for every index of the remaining axes: reads of one tile touch 16
//     cache lines, writes stay contiguous.
// Strings, sub-byte types and invalid permutations (which the reference reports) go to the reference.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "backends/cpu/dnnl_common.h"
#include "runtime/thread_pool.h"

namespace tessera::cpu {
namespace {

// The element size when it is a plain 1-, 2-, 4- or 8-byte value, else 0.
size_t word_size(ir::DataType dt) {
  using D = ir::DataType;
  switch (dt) {
    case D::kFloat:
    case D::kInt32:
    case D::kUint32:
      return 4;
    case D::kUint8:
    case D::kInt8:
    case D::kBool:
      return 1;
    case D::kUint16:
    case D::kInt16:
    case D::kFloat16:
    case D::kBFloat16:
      return 2;
    case D::kInt64:
    case D::kUint64:
    case D::kDouble:
    case D::kComplex64:
      return 8;
    default:
      return 0;
  }
}

// A permutation reduced to its essential axes: input shape `in` and output axis i = input axis perm[i].
struct Plan {
  std::vector<int64_t> in, perm;
};

Plan simplify(const rt::Shape& shape, const std::vector<int64_t>& perm) {
  // Drop size-1 axes, relabelling the others in input order.
  const size_t r = shape.size();
  std::vector<int64_t> label(r, -1);
  std::vector<int64_t> in;
  for (size_t k = 0; k < r; ++k)
    if (shape[k] != 1) {
      label[k] = static_cast<int64_t>(in.size());
      in.push_back(shape[k]);
    }
  std::vector<int64_t> p;
  for (int64_t a : perm)
    if (label[static_cast<size_t>(a)] >= 0) p.push_back(label[static_cast<size_t>(a)]);
  // Merge output runs whose input axes are consecutive: group g covers input axes [first[g], last[g]].
  std::vector<int64_t> first, last;
  for (int64_t a : p) {
    if (!last.empty() && last.back() + 1 == a) {
      last.back() = a;
    } else {
      first.push_back(a);
      last.push_back(a);
    }
  }
  const size_t g = first.size();
  // New input axes: groups in input order.
  std::vector<size_t> order(g);
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return first[x] < first[y]; });
  Plan plan;
  plan.in.resize(g);
  plan.perm.resize(g);
  std::vector<int64_t> new_label(g);
  for (size_t k = 0; k < g; ++k) new_label[order[k]] = static_cast<int64_t>(k);
  for (size_t k = 0; k < g; ++k) {
    int64_t n = 1;
    for (int64_t a = first[order[k]]; a <= last[order[k]]; ++a) n *= in[static_cast<size_t>(a)];
    plan.in[k] = n;
  }
  for (size_t k = 0; k < g; ++k) plan.perm[k] = new_label[k];
  return plan;
}

// Input offset of the output position `index` over the output axes [0, count), with the input strides of
// those axes (the output is walked in row-major order).
inline int64_t offset_of(int64_t index, const std::vector<int64_t>& out_dims,
                         const std::vector<int64_t>& in_strides, size_t count) {
  int64_t off = 0;
  for (size_t k = count; k-- > 0;) {
    off += (index % out_dims[k]) * in_strides[k];
    index /= out_dims[k];
  }
  return off;
}

template <class W>
void transpose_tiled(rt::ThreadPool& pool, const W* src, W* dst, const Plan& p) {
  const size_t k = p.in.size();
  std::vector<int64_t> in_stride(k);
  int64_t st = 1;
  for (size_t i = k; i-- > 0;) {
    in_stride[i] = st;
    st *= p.in[i];
  }
  std::vector<int64_t> out_dims(k), out_in_stride(k);  // per output axis: its size and input stride
  for (size_t i = 0; i < k; ++i) {
    out_dims[i] = p.in[static_cast<size_t>(p.perm[i])];
    out_in_stride[i] = in_stride[static_cast<size_t>(p.perm[i])];
  }
  std::vector<int64_t> out_stride(k);
  st = 1;
  for (size_t i = k; i-- > 0;) {
    out_stride[i] = st;
    st *= out_dims[i];
  }
  const int64_t l2 = out_dims[k - 1];       // output innermost; input stride sa
  const int64_t sa = out_in_stride[k - 1];  // > 1
  // q: the output axis that is the input's innermost (input stride 1, output stride so).
  size_t q = 0;
  while (p.perm[q] != static_cast<int64_t>(k - 1)) ++q;
  const int64_t l1 = out_dims[q], so = out_stride[q];
  // The other output axes, in order: the outer index runs over them.
  std::vector<int64_t> rest_dims, rest_in, rest_out;
  for (size_t i = 0; i + 1 < k; ++i) {
    if (i == q) continue;
    rest_dims.push_back(out_dims[i]);
    rest_in.push_back(out_in_stride[i]);
    rest_out.push_back(out_stride[i]);
  }
  int64_t outer = 1;
  for (int64_t d : rest_dims) outer *= d;
  constexpr int64_t kTile = 16;
  const int64_t tiles1 = (l1 + kTile - 1) / kTile;
  const int64_t items = outer * tiles1;
  const int64_t grain = std::max<int64_t>(1, 4096 / (kTile * l2));  // about 4K words a chunk
  pool.parallel_for(items, grain, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      const int64_t o = it / tiles1, j1_0 = (it % tiles1) * kTile;
      const int64_t j1_1 = std::min(l1, j1_0 + kTile);
      const int64_t in_base = offset_of(o, rest_dims, rest_in, rest_dims.size());
      const int64_t out_base = offset_of(o, rest_dims, rest_out, rest_dims.size());
      for (int64_t j2_0 = 0; j2_0 < l2; j2_0 += kTile) {
        const int64_t j2_1 = std::min(l2, j2_0 + kTile);
        for (int64_t j1 = j1_0; j1 < j1_1; ++j1) {
          const W* s = src + in_base + j1;
          W* d = dst + out_base + j1 * so;
          for (int64_t j2 = j2_0; j2 < j2_1; ++j2) d[j2] = s[j2 * sa];
        }
      }
    }
  });
}

// The innermost axis stays innermost: output rows of `inner` words are contiguous input rows.
void transpose_rows(rt::ThreadPool& pool, const char* src, char* dst, const Plan& p, size_t word) {
  const size_t k = p.in.size();
  std::vector<int64_t> in_stride(k);
  int64_t st = 1;
  for (size_t i = k; i-- > 0;) {
    in_stride[i] = st;
    st *= p.in[i];
  }
  std::vector<int64_t> out_dims(k - 1), out_in_stride(k - 1);
  for (size_t i = 0; i + 1 < k; ++i) {
    out_dims[i] = p.in[static_cast<size_t>(p.perm[i])];
    out_in_stride[i] = in_stride[static_cast<size_t>(p.perm[i])];
  }
  const int64_t inner = p.in[k - 1];
  const int64_t rows = st / inner;
  const size_t bytes = static_cast<size_t>(inner) * word;
  // About 16 KiB a chunk: BERT's 384 KiB head split then spreads over 16 threads (every thread of the
  // pool joins the region anyway).
  const int64_t grain = std::max<int64_t>(1, 16384 / static_cast<int64_t>(bytes));
  pool.parallel_for(rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t off = offset_of(r, out_dims, out_in_stride, k - 1);
      std::memcpy(dst + static_cast<size_t>(r) * bytes, src + static_cast<size_t>(off) * word, bytes);
    }
  });
}

void copy_all(rt::ThreadPool& pool, const char* src, char* dst, size_t bytes) {
  constexpr int64_t kChunk = 1 << 15;
  const int64_t chunks = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
  pool.parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
    size_t from = static_cast<size_t>(b * kChunk), to = std::min(bytes, static_cast<size_t>(e * kChunk));
    std::memcpy(dst + from, src + from, to - from);
  });
}

class FastTranspose : public rt::OpKernel {
 public:
  explicit FastTranspose(const rt::KernelInfo& info) : reference_(make_reference_kernel(info)) {
    if (info.has_attr("perm")) perm_ = info.get_ints("perm");
    has_perm_ = info.has_attr("perm");
  }

  // Element types of 1, 2, 4 or 8 bytes as inference found them (strings and unknown types decline).
  static bool supports(const rt::KernelInfo& info) { return word_size(info.input_dtype(0)) != 0; }

  void compute(rt::KernelContext& ctx) const override {
    const rt::Tensor& x = ctx.input(0);
    const size_t word = word_size(x.dtype());
    const size_t r = static_cast<size_t>(x.rank());
    std::vector<int64_t> perm = perm_;
    if (!has_perm_) {
      perm.resize(r);
      for (size_t k = 0; k < r; ++k) perm[k] = static_cast<int64_t>(r - 1 - k);
    }
    if (word == 0 || !valid(perm, r)) {
      if (!reference_) ctx.fail("no reference Transpose kernel");
      return reference_->compute(ctx);
    }
    rt::Shape out(r);
    for (size_t k = 0; k < r; ++k) out[k] = x.shape()[static_cast<size_t>(perm[k])];
    rt::Tensor& y = ctx.output_uninitialized(0, x.dtype(), out);
    if (x.numel() == 0) return;
    Plan p = simplify(x.shape(), perm);
    const char* src = static_cast<const char*>(x.raw());
    char* dst = static_cast<char*>(y.raw());
    const size_t k = p.in.size();
    bool identity = true;
    for (size_t i = 0; i < k; ++i) identity = identity && p.perm[i] == static_cast<int64_t>(i);
    if (identity) return copy_all(ctx.threads(), src, dst, static_cast<size_t>(x.numel()) * word);
    if (p.perm[k - 1] == static_cast<int64_t>(k - 1)) return transpose_rows(ctx.threads(), src, dst, p, word);
    switch (word) {
      case 1:
        return transpose_tiled(ctx.threads(), reinterpret_cast<const uint8_t*>(src),
                               reinterpret_cast<uint8_t*>(dst), p);
      case 2:
        return transpose_tiled(ctx.threads(), reinterpret_cast<const uint16_t*>(src),
                               reinterpret_cast<uint16_t*>(dst), p);
      case 4:
        return transpose_tiled(ctx.threads(), reinterpret_cast<const uint32_t*>(src),
                               reinterpret_cast<uint32_t*>(dst), p);
      default:
        return transpose_tiled(ctx.threads(), reinterpret_cast<const uint64_t*>(src),
                               reinterpret_cast<uint64_t*>(dst), p);
    }
  }

 private:
  static bool valid(const std::vector<int64_t>& perm, size_t r) {
    if (perm.size() != r) return false;
    std::vector<bool> seen(r, false);
    for (int64_t a : perm) {
      if (a < 0 || a >= static_cast<int64_t>(r) || seen[static_cast<size_t>(a)]) return false;
      seen[static_cast<size_t>(a)] = true;
    }
    return true;
  }

  rt::KernelPtr reference_;
  std::vector<int64_t> perm_;
  bool has_perm_ = false;
};

}  // namespace
}  // namespace tessera::cpu

TESSERA_REGISTER_KERNELS(cpu_dnnl_transpose) {
  reg.add(tessera::cpu::dnnl_kernel<tessera::cpu::FastTranspose>("Transpose"));
}
