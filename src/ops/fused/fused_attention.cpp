// The schema of com.tessera FusedAttention (see fused_attention.h for the semantics).
#include "ops/fused/fused_attention.h"

#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/layout/blocked.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::Dim;
using ir::Shape;

namespace {

std::vector<int64_t> ints_attr(const InferenceContext& ctx, const char* name) {
  const ir::Attribute* a = ctx.attr(name);
  return a ? a->ints : fused::kBshd;
}

int64_t int_attr(const InferenceContext& ctx, const char* name) {
  const ir::Attribute* a = ctx.attr(name);
  return a ? a->i : 0;
}

// (batch, heads, seq, size) of input i, or nullopt when its rank is unknown.
std::optional<std::array<Dim, 4>> operand_dims(const InferenceContext& ctx, size_t i, const char* what) {
  const std::string axes_name = fmt::format("{}_axes", what);
  const std::vector<int64_t> axes = ints_attr(ctx, axes_name.c_str());
  const Shape* s = input_shape(ctx, i);
  if (!s) return std::nullopt;
  const int64_t part = i == fused::kFaQ   ? int_attr(ctx, "q_part")
                       : i == fused::kFaK ? int_attr(ctx, "k_part")
                                          : int_attr(ctx, "v_part");
  if (auto e = fused::check_axes(axes, s->size(), part, what)) ctx.fail_input(i, *e);
  std::array<Dim, 4> d;
  if (axes.size() == 3) {  // (batch * heads, seq, size): batch 1
    d[0] = Dim::of(1);
    for (size_t w = 0; w < 3; ++w) d[w + 1] = (*s)[static_cast<size_t>(axes[w])];
    return d;
  }
  for (size_t w = 0; w < 4; ++w) d[w] = (*s)[static_cast<size_t>(axes[w])];
  return d;
}

void require_equal(const InferenceContext& ctx, const Dim& a, const Dim& b, const char* what) {
  if (a.is_static() && b.is_static() && a.value != b.value)
    ctx.fail(fmt::format("{} differ: {} and {}", what, a.value, b.value));
}

void infer_fused_attention(InferenceContext& ctx) {
  const auto q = operand_dims(ctx, fused::kFaQ, "q");
  const auto k = operand_dims(ctx, fused::kFaK, "k");
  const auto v = operand_dims(ctx, fused::kFaV, "v");
  const std::vector<int64_t> y_axes = ints_attr(ctx, "y_axes");
  if (auto e = fused::check_axes(y_axes, y_axes.size(), 0, "y")) ctx.fail(*e);
  if (q && k) {
    require_equal(ctx, (*q)[0], (*k)[0], "batch sizes of Q and K");
    require_equal(ctx, (*q)[3], (*k)[3], "head sizes of Q and K");
    const Dim &qh = (*q)[1], &kh = (*k)[1];
    if (qh.is_static() && kh.is_static() && (kh.value <= 0 || qh.value % kh.value != 0))
      ctx.fail(fmt::format("query heads {} are not a multiple of key/value heads {}", qh.value, kh.value));
  }
  if (k && v) {
    require_equal(ctx, (*k)[1], (*v)[1], "key/value heads of K and V");
    require_equal(ctx, (*k)[2], (*v)[2], "sequence lengths of K and V");
  }
  if (!q || !v) return propagate_elem(ctx, fused::kFaQ, 0, std::nullopt);
  const Dim logical[4] = {(*q)[0], (*q)[1], (*q)[2], (*v)[3]};
  Shape y(y_axes.size());
  if (y_axes.size() == 3) {  // (batch * heads, seq, size)
    const bool one = logical[0].is_static() && logical[0].value == 1;
    const Dim merged[3] = {one ? logical[1] : Dim::unknown(), logical[2], logical[3]};
    for (size_t w = 0; w < 3; ++w) y[static_cast<size_t>(y_axes[w])] = merged[w];
  } else {
    for (size_t w = 0; w < 4; ++w) y[static_cast<size_t>(y_axes[w])] = logical[w];
  }
  propagate_elem(ctx, fused::kFaQ, 0, y);
}

}  // namespace

TESSERA_REGISTER_OPS(fused_attention) {
  reg.add(
      OpSchema(fused::kFusedAttention, 1, tessera::ops::layout::kDomain)
          .category(Category::kAttention)
          .doc("Scaled dot-product attention in one node: softmax(where(keep, Q K^T * scale, mask_fill) + "
               "attn_bias) V per head, grouped key/value heads, an optional causal limit. Q, K, V and Y are "
               "read and written in place: <x>_axes name the axes of (batch, heads, seq, head size), a "
               "rank-5 Q/K/V packs the three along its remaining axis (<x>_part picks one).")
          .input("Q", "T")
          .input("K", "T")
          .input("V", "T")
          .optional_input("attn_bias", "M", "added to the scaled scores, broadcast to [B, Hq, Sq, Skv]")
          .optional_input("keep", "B", "false: the score becomes mask_fill; broadcast like attn_bias")
          .output("Y", "T")
          .types("T", types::tensors({"float", "float16", "bfloat16", "double"}))
          .types("M", types::tensors({"float", "float16", "bfloat16", "double"}))
          .types("B", {"tensor(bool)"})
          .attr("scale", ir::AttrType::kFloat)
          .attr("q_axes", fused::kBshd)
          .attr("k_axes", fused::kBshd)
          .attr("v_axes", fused::kBshd)
          .attr("y_axes", fused::kBshd)
          .attr("q_part", int64_t{0})
          .attr("k_part", int64_t{0})
          .attr("v_part", int64_t{0})
          .attr("causal", int64_t{0})
          .attr("mask_fill", 0.0f)
          .infer(infer_fused_attention));
}
