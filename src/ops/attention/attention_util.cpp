#include "ops/attention/attention_util.h"

#include <fmt/format.h>

#include "ops/infer_util.h"

namespace tessera::ops::attn {

using ir::Dim;

std::string input_label(const InferenceContext& ctx, size_t i) {
  if (i < ctx.num_inputs()) return fmt::format("input {} ('{}')", i, ctx.node().inputs[i]);
  return fmt::format("input {}", i);
}

Dim split_dim(const InferenceContext& ctx, size_t i, const Dim& dim, int64_t parts, std::string_view dim_what,
              std::string_view parts_what) {
  if (parts <= 0 || !dim.is_static()) return Dim::unknown();
  if (dim.value % parts != 0) {
    ctx.fail_input(i, fmt::format("{} {} of {} is not divisible by {} {}", dim_what, dim.value,
                                  input_label(ctx, i), parts_what, parts));
  }
  return Dim::of(dim.value / parts);
}

std::optional<int64_t> positive_attr(const InferenceContext& ctx, std::string_view name) {
  const ir::Attribute* a = ctx.attr(name);
  if (!a || a->type != ir::AttrType::kInt) return std::nullopt;
  if (a->i <= 0) ctx.fail(fmt::format("attribute '{}' must be positive, got {}", name, a->i));
  return a->i;
}

int64_t required_positive_attr(const InferenceContext& ctx, std::string_view name) {
  auto v = positive_attr(ctx, name);
  if (!v) ctx.fail(fmt::format("attribute '{}' is required", name));
  return *v;
}

void check_head_groups(const InferenceContext& ctx, int64_t q_heads, int64_t kv_heads,
                       std::string_view q_name, std::string_view kv_name) {
  if (q_heads <= 0 || kv_heads <= 0 || q_heads % kv_heads == 0) return;
  ctx.fail(fmt::format("{} {} is not a multiple of {} {}", q_name, q_heads, kv_name, kv_heads));
}

Dim dim_max(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) return a.value >= b.value ? a : b;
  if (a == b) return a;
  return Dim::unknown();
}

Dim same_dim(const InferenceContext& ctx, size_t a, const ir::Shape& sa, size_t ka, size_t b,
             const ir::Shape& sb, size_t kb, std::string_view what) {
  const Dim& da = sa[ka];
  const Dim& db = sb[kb];
  if (da.is_static() && db.is_static() && da.value != db.value) {
    ctx.fail_input(b, fmt::format("{} differs: {} {} has {} but {} {} has {}", what, input_label(ctx, a),
                                  ir::shape_to_string(sa), da.value, input_label(ctx, b),
                                  ir::shape_to_string(sb), db.value));
  }
  if (da.is_static()) return da;
  if (db.is_static()) return db;
  return da.is_symbolic() ? da : db;
}

ir::DataType first_elem(const InferenceContext& ctx, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs) {
    if (!ctx.has_input(i)) continue;
    ir::DataType t = input_elem(ctx, i);
    if (t != ir::DataType::kUndefined) return t;
  }
  return ir::DataType::kUndefined;
}

}  // namespace tessera::ops::attn
