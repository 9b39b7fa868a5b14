#include "ops/sequence/container_types.h"

#include <fmt/format.h>

#include "ops/infer.h"

namespace tessera::ops {

using ir::Type;

namespace {
std::vector<std::string> wrap(const std::vector<std::string>& types, std::string_view head) {
  std::vector<std::string> out;
  out.reserve(types.size());
  for (const auto& t : types) out.push_back(fmt::format("{}({})", head, t));
  return out;
}
}  // namespace

std::vector<std::string> seq_of(const std::vector<std::string>& types) {
  return wrap(types, "seq");
}
std::vector<std::string> optional_of(const std::vector<std::string>& types) {
  return wrap(types, "optional");
}

std::vector<std::string> tensor_and_seq(const std::vector<std::string>& tensors) {
  return types::concat({tensors, seq_of(tensors)});
}

std::vector<std::string> tensor_seq_optional(const std::vector<std::string>& tensors) {
  auto seqs = seq_of(tensors);
  return types::concat({tensors, seqs, optional_of(tensors), optional_of(seqs)});
}

std::optional<ir::Shape> merge_shapes(const std::optional<ir::Shape>& a, const std::optional<ir::Shape>& b) {
  if (!a || !b || a->size() != b->size()) return std::nullopt;
  ir::Shape out(a->size());
  for (size_t k = 0; k < a->size(); ++k) out[k] = (*a)[k] == (*b)[k] ? (*a)[k] : ir::Dim::unknown();
  return out;
}

Type without_shapes(const Type& t) {
  Type out = t;
  out.shape.reset();
  if (t.inner) out.inner = std::make_shared<const Type>(without_shapes(*t.inner));
  return out;
}

Type merge_types(const InferenceContext& ctx, const Type& a, const Type& b, std::string_view what) {
  // A side of unknown type may have any shape; only the kind and element type are worth keeping.
  if (a.is_none()) return without_shapes(b);
  if (b.is_none()) return without_shapes(a);
  if (a.kind != b.kind) {
    ctx.fail(fmt::format("{}: {} vs {} cannot be the same value", what, a.type_string(), b.type_string()));
  }
  switch (a.kind) {
    case Type::Kind::kTensor:
    case Type::Kind::kSparseTensor: {
      if (a.elem != b.elem && a.elem != ir::DataType::kUndefined && b.elem != ir::DataType::kUndefined) {
        ctx.fail(fmt::format("{}: element types differ, {} vs {}", what, a.type_string(), b.type_string()));
      }
      Type out = a;
      if (out.elem == ir::DataType::kUndefined) out.elem = b.elem;
      out.shape = merge_shapes(a.shape, b.shape);
      return out;
    }
    case Type::Kind::kSequence:
    case Type::Kind::kOptional: {
      if (!a.inner || !b.inner) return a.inner ? a : b;
      Type inner = merge_types(ctx, *a.inner, *b.inner, what);
      return a.kind == Type::Kind::kSequence ? Type::sequence(std::move(inner))
                                             : Type::optional(std::move(inner));
    }
    default:
      if (a != b) ctx.fail(fmt::format("{}: {} vs {} differ", what, a.type_string(), b.type_string()));
      return a;
  }
}

}  // namespace tessera::ops
