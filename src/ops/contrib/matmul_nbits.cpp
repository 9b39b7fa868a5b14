// MatMulNBits (com.microsoft 1): A @ B^T with B quantised blockwise to `bits` bits, as weight-only
// quantisers (GPTQ, AWQ, RTN) emit it.
#include <fmt/format.h>

#include "ops/attention/attention_util.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::Dim;
using ir::Shape;

namespace {

enum In { kA, kB, kScales, kZeroPoints, kGIdx, kBias };

void infer_matmul_nbits(InferenceContext& ctx) {
  int64_t k = attn::required_positive_attr(ctx, "K");
  int64_t n = attn::required_positive_attr(ctx, "N");
  int64_t block = attn::required_positive_attr(ctx, "block_size");
  int64_t bits = ctx.attr_int("bits", 4);
  if (bits < 2 || bits > 8) ctx.fail(fmt::format("bits must be between 2 and 8, got {}", bits));
  if (block < 16 || (block & (block - 1)) != 0) {
    ctx.fail(fmt::format("block_size must be a power of 2 and at least 16, got {}", block));
  }
  int64_t blocks = (k + block - 1) / block;
  // B packs each block of one output column into block_size * bits / 8 bytes: (N, blocks, blob).
  if (const Shape* b = input_shape(ctx, kB);
      b && input_elem(ctx, kB) == ir::DataType::kUint8 && b->size() == 3) {
    unify_dims(ctx, (*b)[0], Dim::of(n), "B dimension 0 must be N");
    unify_dims(ctx, (*b)[1], Dim::of(blocks), "B dimension 1 must be the block count ceil(K / block_size)");
    unify_dims(ctx, (*b)[2], Dim::of(block * bits / 8), "B dimension 2 must be block_size * bits / 8 bytes");
  }
  if (const Shape* bias = ctx.has_input(kBias) ? input_shape(ctx, kBias) : nullptr) {
    require_rank(ctx, kBias, 1, "bias (N)");
    unify_dims(ctx, (*bias)[0], Dim::of(n), "bias length must be N");
  }
  const Shape* a = input_shape(ctx, kA);
  if (!a) {
    propagate_elem(ctx, kA, 0, std::nullopt);
    return;
  }
  if (a->empty()) ctx.fail_input(kA, "A must have at least one dimension");
  unify_dims(ctx, a->back(), Dim::of(k), "the last dimension of A must equal attribute K");
  Shape y = *a;
  y.back() = Dim::of(n);
  propagate_elem(ctx, kA, 0, std::move(y));
}

}  // namespace

TESSERA_REGISTER_OPS(contrib_matmul_nbits) {
  reg.add(
      OpSchema("MatMulNBits", 1, "com.microsoft")
          .category(Category::kLinearAlgebra)
          .doc(
              "Matrix product of A (..., K) with a weight of N x K stored as blockwise-quantised integers of "
              "`bits` bits with per-block scales and optional zero points; gives (..., N).")
          .input("A", "T1")
          .input("B", "T2")
          .input("scales", "T1")
          .optional_input("zero_points", "T3")
          .optional_input("g_idx", "T4")
          .optional_input("bias", "T1")
          .output("Y", "T1")
          .types("T1", types::tensors({"float", "float16", "bfloat16"}))
          .types("T2", types::tensors({"uint8", "int32"}))
          .types("T3", types::tensors({"uint8", "int32", "float16", "float", "bfloat16"}))
          .types("T4", {"tensor(int32)"})
          .attr("K", ir::AttrType::kInt)
          .attr("N", ir::AttrType::kInt)
          .attr("accuracy_level", int64_t{0})
          .attr("bits", int64_t{4})
          .attr("block_size", ir::AttrType::kInt)
          .infer(infer_matmul_nbits));
}
