#include "ops/math/elementwise.h"

#include <fmt/format.h>

#include "ops/infer_util.h"

namespace tessera::ops::math {

using ir::DataType;
using ir::Dim;
using ir::Shape;
using ir::shape_to_string;

const std::vector<std::string> kHighPrecision =
    types::tensors({"uint32", "uint64", "int32", "int64", "float16", "float", "double"});
const std::vector<std::string> kHighPrecisionBf16 =
    types::concat({kHighPrecision, types::tensors({"bfloat16"})});
const std::vector<std::string> kAllInt = types::concat({types::kUnsignedInt, types::kSignedInt});
const std::vector<std::string> kBool = types::tensors({"bool"});

OpSchema unary_schema(std::string name, int since, Category category, std::string doc,
                      std::vector<std::string> types, std::string in, std::string out) {
  OpSchema s(std::move(name), since);
  s.category(category)
      .doc(std::move(doc))
      .input(std::move(in), "T")
      .output(std::move(out), "T")
      .types("T", std::move(types))
      .infer(infer_same_as_input0);
  return s;
}

OpSchema binary_schema(std::string name, int since, Category category, std::string doc,
                       std::vector<std::string> types, bool bool_output) {
  OpSchema s(std::move(name), since);
  s.category(category)
      .doc(std::move(doc))
      .input("A", "T")
      .input("B", "T")
      .output("C", bool_output ? "T1" : "T")
      .types("T", std::move(types));
  if (bool_output) s.types("T1", kBool);
  s.infer(bool_output ? infer_broadcast_to_bool : infer_broadcast);
  return s;
}

OpSchema with_legacy_broadcast(OpSchema s, bool bool_output) {
  s.attr_optional("axis", ir::AttrType::kInt, "First dimension of A that B's dimensions line up with.")
      .attr("broadcast", int64_t{0}, "1 lets B be broadcast onto A.")
      .infer(bool_output ? infer_legacy_broadcast_to_bool : infer_legacy_broadcast);
  return s;
}

OpSchema with_consumed_inputs(OpSchema s) {
  s.attr_optional("consumed_inputs", ir::AttrType::kInts, "Legacy in-place hint; ignored.");
  return s;
}

DataType first_known_elem(const InferenceContext& ctx, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs) {
    DataType t = input_elem(ctx, i);
    if (t != DataType::kUndefined) return t;
  }
  return DataType::kUndefined;
}

namespace {

bool is_single_element(const Shape& s) {
  for (const Dim& d : s) {
    if (!d.is_static() || d.value != 1) return false;
  }
  return true;
}

// broadcast=0: the two shapes must agree dimension by dimension.
Shape same_shape(const InferenceContext& ctx, const Shape& a, const Shape& b) {
  if (a.size() != b.size()) {
    ctx.fail_input(
        1, fmt::format("input B {} must have the shape of input A {} unless attribute 'broadcast' is 1",
                       shape_to_string(b), shape_to_string(a)));
  }
  Shape out(a.size());
  for (size_t k = 0; k < a.size(); ++k) {
    out[k] =
        unify_dims(ctx, a[k], b[k],
                   fmt::format("inputs A {} and B {} must have the same shape (broadcast=0); dimension {} is",
                               shape_to_string(a), shape_to_string(b), k));
  }
  return out;
}

}  // namespace

std::optional<Shape> legacy_broadcast_shape(const InferenceContext& ctx) {
  const Shape* a = input_shape(ctx, 0);
  const Shape* b = input_shape(ctx, 1);
  bool broadcast = ctx.attr_int("broadcast", 0) != 0;
  if (!a) {
    // Without broadcasting C has B's shape too; with it, B says nothing about A's rank.
    if (b && !broadcast) return *b;
    return std::nullopt;
  }
  if (!b) return *a;
  if (!broadcast) return same_shape(ctx, *a, *b);
  if (is_single_element(*b)) return *a;
  int64_t rank_a = static_cast<int64_t>(a->size());
  int64_t rank_b = static_cast<int64_t>(b->size());
  if (rank_b > rank_a) {
    ctx.fail_input(
        1, fmt::format("input B {} has more dimensions than input A {}; with broadcast=1 B must match "
                       "a run of A's dimensions",
                       shape_to_string(*b), shape_to_string(*a)));
  }
  int64_t axis = ctx.has_attr("axis") ? normalize_axis(ctx, ctx.attr_int("axis"), rank_a) : rank_a - rank_b;
  if (axis + rank_b > rank_a) {
    ctx.fail_input(1, fmt::format("input B {} does not fit in input A {} from axis {}", shape_to_string(*b),
                                  shape_to_string(*a), axis));
  }
  for (int64_t k = 0; k < rank_b; ++k) {
    const Dim& da = (*a)[axis + k];
    const Dim& db = (*b)[k];
    // A size-1 dimension of B is accepted although the old spec did not promise it, since runtimes did.
    if (!da.is_static() || !db.is_static() || da.value == db.value || db.value == 1) continue;
    ctx.fail_input(
        1, fmt::format("input B {} does not match input A {} from axis {}: dimension {} of A is {} vs {}",
                       shape_to_string(*b), shape_to_string(*a), axis, axis + k, da.value, db.value));
  }
  return *a;
}

void infer_legacy_broadcast(InferenceContext& ctx) {
  set_output(ctx, 0, first_known_elem(ctx, {0, 1}), legacy_broadcast_shape(ctx));
}

void infer_legacy_broadcast_to_bool(InferenceContext& ctx) {
  set_output(ctx, 0, DataType::kBool, legacy_broadcast_shape(ctx));
}

void infer_same_shape_inputs(InferenceContext& ctx) {
  std::optional<Shape> acc;
  size_t first = 0;
  DataType elem = DataType::kUndefined;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    if (elem == DataType::kUndefined) elem = input_elem(ctx, i);
    const Shape* s = input_shape(ctx, i);
    if (!s) continue;
    if (!acc) {
      acc = *s;
      first = i;
      continue;
    }
    if (s->size() != acc->size()) {
      ctx.fail_input(
          i, fmt::format("before opset 8 every input must have the same shape (no broadcasting): input "
                         "{} {} vs input {} {}",
                         i, shape_to_string(*s), first, shape_to_string(*acc)));
    }
    for (size_t k = 0; k < s->size(); ++k) {
      (*acc)[k] =
          unify_dims(ctx, (*acc)[k], (*s)[k],
                     fmt::format("before opset 8 every input must have the same shape (no broadcasting): "
                                 "input {} {} vs input {}, dimension {} is",
                                 i, shape_to_string(*s), first, k));
    }
  }
  set_output(ctx, 0, elem, acc);
}

void require_unidirectional(const InferenceContext& ctx, size_t from, size_t to) {
  const Shape* s = input_shape(ctx, from);
  const Shape* t = input_shape(ctx, to);
  if (!s || !t) return;
  if (s->size() > t->size()) {
    ctx.fail_input(from, fmt::format("input {} {} has more dimensions than input {} {} it must broadcast to",
                                     from, shape_to_string(*s), to, shape_to_string(*t)));
  }
  size_t offset = t->size() - s->size();
  for (size_t k = 0; k < s->size(); ++k) {
    const Dim& ds = (*s)[k];
    const Dim& dt = (*t)[offset + k];
    if (!ds.is_static() || !dt.is_static() || ds.value == 1 || ds.value == dt.value) continue;
    ctx.fail_input(from,
                   fmt::format("input {} {} cannot broadcast to input {} {}: dimension {} is {} vs {}", from,
                               shape_to_string(*s), to, shape_to_string(*t), offset + k, ds.value, dt.value));
  }
}

}  // namespace tessera::ops::math
