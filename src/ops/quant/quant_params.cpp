#include "ops/quant/quant_params.h"

#include <fmt/format.h>

#include "ops/infer_util.h"

namespace tessera::ops {
namespace {

using ir::Dim;
using ir::Shape;

bool is_one_element(const Shape& s) {
  return s.empty() || (s.size() == 1 && s[0].is_static() && s[0].value == 1);
}

// Blocked: same rank as x, equal dimensions except along the axis, where each scale covers a block.
void check_blocked(const InferenceContext& ctx, const Shape& x, const Shape& scale, int64_t block) {
  if (scale.size() != x.size()) {
    ctx.fail_input(
        1, fmt::format("blocked quantization (block_size {}) needs a scale of the input's rank {}, got {}",
                       block, x.size(), ir::shape_to_string(scale)));
  }
  int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 1), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const Dim& d = x[i];
    const Dim& s = scale[i];
    if (!d.is_static() || !s.is_static()) continue;
    if (static_cast<int64_t>(i) != axis) {
      if (d.value != s.value) {
        ctx.fail_input(
            1, fmt::format("scale {} and input {} differ in dimension {} ({} vs {}); blocked "
                           "quantization only blocks axis {}",
                           ir::shape_to_string(scale), ir::shape_to_string(x), i, s.value, d.value, axis));
      }
      continue;
    }
    int64_t want = (d.value + block - 1) / block;
    if (s.value != want) {
      ctx.fail_input(
          1, fmt::format("scale dimension {} is {}, but input dimension {} in blocks of {} needs {}", i,
                         s.value, d.value, block, want));
    }
  }
}

}  // namespace

void check_quant_params(const InferenceContext& ctx, bool per_axis, bool blocked) {
  const Shape* scale = input_shape(ctx, 1);
  const Shape* zp = ctx.has_input(2) ? input_shape(ctx, 2) : nullptr;
  // A scalar and a one-element 1-D tensor both mean per-tensor, so they count as the same shape.
  if (scale && zp && !(is_one_element(*scale) && is_one_element(*zp))) {
    bool same = scale->size() == zp->size();
    for (size_t i = 0; same && i < scale->size(); ++i) {
      const Dim &a = (*scale)[i], &b = (*zp)[i];
      same = !(a.is_static() && b.is_static() && a.value != b.value);
    }
    if (!same) {
      ctx.fail_input(2, fmt::format("zero point shape {} differs from scale shape {}; they must match",
                                    ir::shape_to_string(*zp), ir::shape_to_string(*scale)));
    }
  }
  const Shape* p = scale ? scale : zp;
  int64_t block = blocked ? ctx.attr_int("block_size", 0) : 0;
  if (block < 0) ctx.fail(fmt::format("attribute 'block_size' must not be negative, got {}", block));
  if (!p) return;
  const Shape* x = input_shape(ctx, 0);
  if (block > 0) {
    if (x) check_blocked(ctx, *x, *p, block);
    return;
  }
  if (p->empty()) return;  // per-tensor
  if (p->size() > 1) {
    ctx.fail_input(
        1, blocked ? fmt::format("a scale of rank {} means blocked quantization, which needs attribute "
                                 "'block_size' > 0",
                                 p->size())
                   : fmt::format("scale must be a scalar or 1-D, got {}", ir::shape_to_string(*p)));
  }
  const Dim& n = (*p)[0];
  if (n.is_static() && n.value == 1) return;  // one element: per-tensor
  if (!per_axis) {
    ctx.fail_input(1,
                   fmt::format("scale must be a scalar in this opset (per-axis quantization needs opset 13), "
                               "got {}",
                               ir::shape_to_string(*p)));
  }
  if (!x) return;
  if (x->empty())
    ctx.fail_input(1, fmt::format("per-axis scale {} for a scalar input", ir::shape_to_string(*p)));
  int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 1), static_cast<int64_t>(x->size()));
  const Dim& d = (*x)[axis];
  if (n.is_static() && d.is_static() && n.value != d.value) {
    ctx.fail_input(1, fmt::format("per-axis scale has {} elements but input dimension {} (axis) is {}",
                                  n.value, axis, d.value));
  }
}

std::vector<std::string> quantized_types(int v, bool with_int32) {
  auto t = types::tensors({"int8", "uint8"});
  if (with_int32) t = types::concat({t, types::tensors({"int32"})});
  if (v < 19) return t;
  if (v >= 21) t = types::concat({t, types::tensors({"int16", "uint16"})});
  t = types::concat({t, types::tensors({"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"})});
  if (v >= 21) t = types::concat({t, types::tensors({"uint4", "int4"})});
  if (v >= 23) t = types::concat({t, types::tensors({"float4e2m1"})});
  if (v >= 24) t = types::concat({t, types::tensors({"float8e8m0"})});
  if (v >= 25) t = types::concat({t, types::tensors({"uint2", "int2"})});
  return t;
}

}  // namespace tessera::ops
