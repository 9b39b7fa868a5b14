// Reference kernel of com.microsoft MatMulNBits: Y = A @ dequant(B)^T (+ bias), A (..., K), Y (..., N).
// B (uint8) holds for each of the N output columns ceil(K / block_size) blocks of block_size codes of
// `bits` bits, packed low bits first (4-bit: element 2i in the low nibble of byte i). Element k of
// column n dequantises to (code - zero_point) * scale of its block, the block being k / block_size or,
// with g_idx, g_idx[k]. scales are (N * blocks) values of A's type; zero_points are either uint8 codes
// packed like B with each column's row padded to whole bytes, or (N * blocks) float values; without
// them the zero point is 2^(bits - 1). bits 2, 4 and 8 are supported (the widths whose codes do not
// straddle bytes); B or zero points of type int32 are refused. accuracy_level only lets ONNX Runtime
// quantise A for speed, so it is ignored: everything is computed in float.
#include <fmt/format.h>

#include "ops/contrib/attention_common_kernel.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace {

namespace rt = tessera::rt;
namespace ca = tessera::ops::contrib_attn;
using rt::KernelContext;
using rt::Tensor;

enum In { kA, kB, kScales, kZeroPoints, kGIdx, kBias };

class MatMulNBits : public rt::OpKernel {
 public:
  explicit MatMulNBits(const rt::KernelInfo& info)
      : k_(info.get_int("K")),
        n_(info.get_int("N")),
        bits_(info.get_int("bits", 4)),
        block_(info.get_int("block_size")) {
    constexpr int64_t kMaxDim = int64_t{1} << 31;  // keeps every size product below int64 overflow
    if (k_ <= 0 || n_ <= 0 || k_ > kMaxDim || n_ > kMaxDim)
      throw rt::KernelError(fmt::format("K {} and N {} must be positive and below 2^31", k_, n_));
    if (bits_ != 2 && bits_ != 4 && bits_ != 8)
      throw rt::KernelError(fmt::format("bits {} is not supported (2, 4 or 8)", bits_));
    if (block_ < 16 || block_ > (int64_t{1} << 24) || (block_ & (block_ - 1)) != 0)
      throw rt::KernelError(fmt::format("block_size must be a power of 2 and at least 16, got {}", block_));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(kA);
    const Tensor& b = ctx.input(kB);
    const Tensor& scales = ctx.input(kScales);
    const rt::DataType dt = a.dtype();
    if (a.rank() < 1 || a.dim(-1) != k_)
      ctx.fail(fmt::format("A {} must end in K = {}", ca::shape_of(a), k_));
    if (b.dtype() != rt::DataType::kUint8) ctx.fail("B of type int32 is not supported (uint8 only)");
    const int64_t blocks = (k_ + block_ - 1) / block_;
    const int64_t blob = block_ * bits_ / 8;
    if (b.numel() != n_ * blocks * blob || (b.rank() >= 1 && b.dim(0) != n_))
      ctx.fail(fmt::format("B {} must be (N, blocks, block_size * bits / 8) = ({}, {}, {})", ca::shape_of(b),
                           n_, blocks, blob));
    ca::require_same_type(ctx, scales, dt, "scales");
    if (scales.numel() != n_ * blocks)
      ctx.fail(
          fmt::format("scales {} must hold N * blocks = {} * {} values", ca::shape_of(scales), n_, blocks));

    // Zero points as float per (column, block).
    const int64_t per_block = n_ * blocks;
    std::vector<float> zp(static_cast<size_t>(per_block), static_cast<float>(1 << (bits_ - 1)));
    if (const Tensor* z = ctx.optional_input(kZeroPoints)) {
      if (z->dtype() == rt::DataType::kUint8) {
        const int64_t row_bytes = (blocks * bits_ + 7) / 8;
        if (z->numel() != n_ * row_bytes)
          ctx.fail(fmt::format("packed uint8 zero_points {} must hold N * ceil(blocks * bits / 8) = {} bytes",
                               ca::shape_of(*z), n_ * row_bytes));
        const uint8_t* pz = z->data<uint8_t>();
        for (int64_t n = 0; n < n_; ++n)
          for (int64_t blk = 0; blk < blocks; ++blk)
            zp[static_cast<size_t>(n * blocks + blk)] = static_cast<float>(code(pz + n * row_bytes, blk));
      } else if (z->dtype() == rt::DataType::kInt32) {
        ctx.fail("zero_points of type int32 are not supported (uint8 packed or float)");
      } else {
        if (z->numel() != per_block)
          ctx.fail(fmt::format("float zero_points {} must hold N * blocks = {} values", ca::shape_of(*z),
                               per_block));
        zp = ca::to_floats(*z, "zero_points");
      }
    }
    std::vector<int64_t> group(static_cast<size_t>(k_));
    if (const Tensor* g = ctx.optional_input(kGIdx)) {
      if (g->dtype() != rt::DataType::kInt32 || g->numel() != k_)
        ctx.fail(fmt::format("g_idx {} must be int32 with K = {} values", ca::shape_of(*g), k_));
      for (int64_t kk = 0; kk < k_; ++kk) {
        const int32_t v = g->data<int32_t>()[kk];
        if (v < 0 || v >= blocks)
          ctx.fail(fmt::format("g_idx[{}] = {} is outside the {} blocks", kk, v, blocks));
        group[static_cast<size_t>(kk)] = v;
      }
    } else {
      for (int64_t kk = 0; kk < k_; ++kk) group[static_cast<size_t>(kk)] = kk / block_;
    }
    std::vector<float> bias;
    if (const Tensor* bt = ctx.optional_input(kBias)) {
      ca::require_same_type(ctx, *bt, dt, "bias");
      if (bt->numel() != n_ || bt->rank() != 1)
        ctx.fail(fmt::format("bias {} must be (N) = ({})", ca::shape_of(*bt), n_));
      bias = ca::to_floats(*bt, "bias");
    }

    // Dequantised weight, (N, K).
    const std::vector<float> sc = ca::to_floats(scales, "scales");
    const uint8_t* pb = b.data<uint8_t>();
    std::vector<float> w(static_cast<size_t>(n_ * k_));
    ctx.threads().parallel_for(n_, std::max<int64_t>(1, 16384 / k_), [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n)
        for (int64_t kk = 0; kk < k_; ++kk) {
          const int64_t blk = kk / block_;
          const float q = static_cast<float>(code(pb + (n * blocks + blk) * blob, kk % block_));
          const size_t g = static_cast<size_t>(n * blocks + group[static_cast<size_t>(kk)]);
          w[static_cast<size_t>(n * k_ + kk)] = (q - zp[g]) * sc[g];
        }
    });

    const std::vector<float> af = ca::to_floats(a, "A");
    const int64_t m = a.numel() / k_;
    std::vector<float> y(static_cast<size_t>(m * n_));
    ctx.threads().parallel_for(m, std::max<int64_t>(1, 16384 / (k_ * n_)), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float* arow = af.data() + r * k_;
        for (int64_t n = 0; n < n_; ++n) {
          const float* wrow = w.data() + n * k_;
          float acc = bias.empty() ? 0.0f : bias[static_cast<size_t>(n)];
          for (int64_t kk = 0; kk < k_; ++kk) acc += arow[kk] * wrow[kk];
          y[static_cast<size_t>(r * n_ + n)] = acc;
        }
      }
    });
    rt::Shape out = a.shape();
    out.back() = n_;
    ca::store_floats(ctx.output(0, dt, out), y, "MatMulNBits Y");
  }

 private:
  // The i-th `bits_`-bit code of a packed byte row.
  int code(const uint8_t* row, int64_t i) const {
    const int64_t bit = i * bits_;
    return (row[bit / 8] >> (bit % 8)) & ((1 << bits_) - 1);
  }

  int64_t k_, n_, bits_, block_;
};

}  // namespace

TESSERA_REGISTER_KERNELS(contrib_matmul_nbits) {
  reg.add(tessera::rt::KernelDef::of<MatMulNBits>("MatMulNBits").in_domain("com.microsoft"));
}
