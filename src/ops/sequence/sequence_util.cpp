#include "ops/sequence/sequence_util.h"

#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/sequence/container_types.h"

namespace tessera::ops {

const ir::Type* sequence_elem(const InferenceContext& ctx, size_t i, std::string_view name) {
  const ir::Type* t = ctx.input_type(i);
  if (!t || t->is_none()) return nullptr;
  if (t->kind != ir::Type::Kind::kSequence) {
    ctx.fail_input(i, fmt::format("input '{}' must be a sequence, got {}", name, t->type_string()));
  }
  return t->inner && !t->inner->is_none() ? t->inner.get() : nullptr;
}

void require_scalar_position(const InferenceContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return;
  const ir::Shape* s = input_shape(ctx, i);
  if (!s || s->empty()) return;
  // The spec asks for a scalar, but models (the conformance suite among them) also pass a [1] tensor,
  // which runtimes accept; anything holding more than one element is an error.
  auto n = ir::shape_numel(*s);
  if (s->size() > 1 || (n && *n != 1)) {
    ctx.fail_input(i,
                   fmt::format("input 'position' must be a scalar, got shape {}", ir::shape_to_string(*s)));
  }
}

std::vector<std::string> sequence_types() {
  return seq_of(types::kAllTensor);
}

}  // namespace tessera::ops
