#include "ops/infer_util.h"

#include <fmt/format.h>

#include <limits>

namespace tessera::ops {

using ir::DataType;
using ir::Dim;
using ir::Shape;
using ir::Type;

const Shape* input_shape(const InferenceContext& ctx, size_t i) {
  const Type* t = ctx.input_type(i);
  if (!t || (t->kind != Type::Kind::kTensor && t->kind != Type::Kind::kSparseTensor) || !t->shape)
    return nullptr;
  return &*t->shape;
}

DataType input_elem(const InferenceContext& ctx, size_t i) {
  const Type* t = ctx.input_type(i);
  if (!t || (t->kind != Type::Kind::kTensor && t->kind != Type::Kind::kSparseTensor))
    return DataType::kUndefined;
  return t->elem;
}

void require_rank(const InferenceContext& ctx, size_t i, size_t rank, std::string_view what) {
  const Shape* s = input_shape(ctx, i);
  if (!s || s->size() == rank) return;
  std::string label = what.empty() ? fmt::format("input {}", i) : std::string(what);
  ctx.fail_input(
      i, fmt::format("{} must have rank {}, got {} {}", label, rank, s->size(), ir::shape_to_string(*s)));
}

void set_output(InferenceContext& ctx, size_t out, DataType elem, std::optional<Shape> shape) {
  if (!ctx.has_output(out)) return;
  ctx.set_output_type(out, Type::tensor(elem, std::move(shape)));
}

void propagate_type(InferenceContext& ctx, size_t in, size_t out) {
  const Type* t = ctx.input_type(in);
  if (!t || !ctx.has_output(out)) return;
  ctx.set_output_type(out, *t);
}

void propagate_elem(InferenceContext& ctx, size_t in, size_t out, std::optional<Shape> shape) {
  set_output(ctx, out, input_elem(ctx, in), std::move(shape));
}

std::optional<Shape> broadcast_shapes(const InferenceContext& ctx, const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t k = 0; k < rank; ++k) {
    const Dim* da = k + a.size() >= rank ? &a[k + a.size() - rank] : nullptr;
    const Dim* db = k + b.size() >= rank ? &b[k + b.size() - rank] : nullptr;
    if (!da || (da->is_static() && da->value == 1)) {
      out[k] = db ? *db : Dim::of(1);
      continue;
    }
    if (!db || (db->is_static() && db->value == 1)) {
      out[k] = *da;
      continue;
    }
    if (da->is_static() && db->is_static() && da->value != db->value) {
      ctx.fail(fmt::format("shapes {} and {} cannot be broadcast: dimension {} is {} vs {}",
                           ir::shape_to_string(a), ir::shape_to_string(b), k, da->value, db->value));
    }
    // Prefer the static size, then a symbol, since a broadcast result is at least as known as either.
    out[k] = da->is_static() ? *da : db->is_static() ? *db : da->is_symbolic() ? *da : *db;
  }
  return out;
}

std::optional<Shape> broadcast_inputs(const InferenceContext& ctx, const std::vector<size_t>& inputs) {
  std::optional<Shape> acc;
  for (size_t i : inputs) {
    if (!ctx.has_input(i)) continue;
    const Shape* s = input_shape(ctx, i);
    if (!s) return std::nullopt;
    acc = acc ? broadcast_shapes(ctx, *acc, *s) : *s;
  }
  return acc;
}

int64_t normalize_axis(const InferenceContext& ctx, int64_t axis, int64_t rank, std::string_view attr) {
  // Strict: a rank-0 input has no axis at all, and callers index the shape with the result.
  if (axis < -rank || axis >= rank) {
    if (rank == 0)
      ctx.fail(fmt::format("attribute '{}' is {}, but the input is a scalar and has no axes", attr, axis));
    ctx.fail(fmt::format("attribute '{}' is {}, outside [{}, {}) for a rank-{} input", attr, axis, -rank,
                         rank, rank));
  }
  return axis < 0 ? axis + rank : axis;
}

std::optional<std::vector<int64_t>> constant_ints(const InferenceContext& ctx, size_t i) {
  const ir::Tensor* t = ctx.input_constant(i);
  if (!t) return std::nullopt;
  std::vector<int64_t> out;
  if (t->dtype == DataType::kInt64) {
    auto v = t->as<int64_t>();
    out.assign(v.begin(), v.end());
  } else if (t->dtype == DataType::kInt32) {
    auto v = t->as<int32_t>();
    out.assign(v.begin(), v.end());
  } else {
    return std::nullopt;
  }
  auto n = t->numel();
  if (!n || static_cast<size_t>(*n) != out.size()) return std::nullopt;
  return out;
}

std::optional<std::vector<Dim>> shape_value(const InferenceContext& ctx, size_t i) {
  if (auto c = constant_ints(ctx, i)) {
    std::vector<Dim> out;
    for (int64_t v : *c) out.push_back(Dim{v, {}, {}});  // may be negative (-1 in Reshape); kept as is
    return out;
  }
  if (const auto* v = ctx.input_shape_value(i)) return *v;
  return std::nullopt;
}

std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
}

std::optional<int64_t> checked_sub(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
}

std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
}

Dim dim_mul(const Dim& a, const Dim& b) {
  if (a.is_static() && a.value == 1) return b;
  if (b.is_static() && b.value == 1) return a;
  if (!a.is_static() || !b.is_static()) return Dim::unknown();
  auto r = checked_mul(a.value, b.value);
  return r ? Dim::of(*r) : Dim::unknown();
}

Dim dim_add(const Dim& a, const Dim& b) {
  if (b.is_static() && b.value == 0) return a;
  if (a.is_static() && a.value == 0) return b;
  if (!a.is_static() || !b.is_static()) return Dim::unknown();
  auto r = checked_add(a.value, b.value);
  return r ? Dim::of(*r) : Dim::unknown();
}

Dim dim_sub(const Dim& a, const Dim& b) {
  if (b.is_static() && b.value == 0) return a;
  if (!a.is_static() || !b.is_static()) return Dim::unknown();
  auto r = checked_sub(a.value, b.value);
  return r && *r >= 0 ? Dim::of(*r) : Dim::unknown();
}

Dim unify_dims(const InferenceContext& ctx, const Dim& a, const Dim& b, std::string_view what) {
  if (a.is_static() && b.is_static() && a.value != b.value) {
    ctx.fail(fmt::format("{}: {} vs {}", what, a.value, b.value));
  }
  if (a.is_static()) return a;
  if (b.is_static()) return b;
  return a.is_symbolic() ? a : b;
}

void infer_same_as_input0(InferenceContext& ctx) {
  propagate_type(ctx, 0, 0);
}

void infer_broadcast(InferenceContext& ctx) {
  std::vector<size_t> all;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) all.push_back(i);
  propagate_elem(ctx, 0, 0, broadcast_inputs(ctx, all));
}

void infer_broadcast_to_bool(InferenceContext& ctx) {
  set_output(ctx, 0, DataType::kBool, broadcast_inputs(ctx, {0, 1}));
}

Dim conv_output_dim(const Dim& in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                    int64_t pad_end, bool ceil_mode) {
  if (!in.is_static() || stride <= 0) return Dim::unknown();
  // Attributes come from the file: every step is checked, and an overflow leaves the size unknown.
  auto km1 = checked_sub(kernel, 1);
  auto dk = km1 ? checked_mul(dilation, *km1) : std::nullopt;
  auto effective = dk ? checked_add(*dk, 1) : std::nullopt;
  auto padded = checked_add(in.value, pad_begin);
  auto padded2 = padded ? checked_add(*padded, pad_end) : std::nullopt;
  auto span = padded2 && effective ? checked_sub(*padded2, *effective) : std::nullopt;
  if (!span) return Dim::unknown();
  if (*span < 0) return Dim::of(0);
  int64_t out = *span / stride + ((ceil_mode && *span % stride != 0) ? 1 : 0) + 1;
  // With ceil mode, the last window must start inside the input or the left padding.
  if (ceil_mode && (out - 1) > (*padded - 1) / stride) --out;
  return Dim::of(out);
}

}  // namespace tessera::ops
