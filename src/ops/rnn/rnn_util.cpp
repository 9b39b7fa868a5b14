#include "ops/rnn/rnn_util.h"

#include <fmt/format.h>

#include "ops/infer_util.h"

namespace tessera::ops {

using ir::Dim;
using ir::Shape;

void add_recurrent_common(OpSchema& s, int version) {
  s.category(Category::kRecurrent)
      .input("X", "T")
      .input("W", "T")
      .input("R", "T")
      .optional_input("B", "T")
      .optional_input("sequence_lens", "T1")
      .optional_input("initial_h", "T")
      .types("T", version >= 22 ? types::kFloatBf16 : types::kFloat)
      .types("T1", {"tensor(int32)"})
      .attr_optional("activation_alpha", ir::AttrType::kFloats)
      .attr_optional("activation_beta", ir::AttrType::kFloats)
      .attr_optional("clip", ir::AttrType::kFloat)
      .attr_optional("hidden_size", ir::AttrType::kInt);
  if (version >= 14) s.attr("layout", int64_t{0});
}

namespace {

// Dimension k of input i when its shape is known and of rank 3 (checked first).
const Dim* dim_of(const InferenceContext& ctx, size_t i, size_t k) {
  const Shape* s = ctx.has_input(i) ? input_shape(ctx, i) : nullptr;
  return s ? &(*s)[k] : nullptr;
}

int64_t direction_count(const InferenceContext& ctx) {
  std::string dir = ctx.attr_string("direction", "forward");
  // "foward" is the default opset-1 GRU declared (a typo in the spec that stayed); it means forward.
  if (dir == "forward" || dir == "reverse" || dir == "foward") return 1;
  if (dir == "bidirectional") return 2;
  ctx.fail(
      fmt::format("attribute 'direction' must be 'forward', 'reverse' or 'bidirectional', got '{}'", dir));
}

}  // namespace

void infer_recurrent(InferenceContext& ctx, int gates) {
  static const char* names[] = {"X", "W", "R"};
  for (size_t i = 0; i < 3; ++i) require_rank(ctx, i, 3, fmt::format("input '{}'", names[i]));
  int64_t dirs = direction_count(ctx);
  bool batch_first = ctx.attr_int("layout", 0) != 0;

  Dim seq = Dim::unknown(), batch = Dim::unknown(), input_size = Dim::unknown();
  if (const Shape* x = input_shape(ctx, 0)) {
    seq = (*x)[batch_first ? 1 : 0];
    batch = (*x)[batch_first ? 0 : 1];
    input_size = (*x)[2];
  }
  Dim hidden = ctx.has_attr("hidden_size") ? Dim::of(ctx.attr_int("hidden_size")) : Dim::unknown();
  if (hidden.is_static() && hidden.value <= 0) {
    ctx.fail(fmt::format("hidden_size must be positive, got {}", hidden.value));
  }
  if (const Dim* r = dim_of(ctx, 2, 2)) {
    hidden = unify_dims(ctx, hidden, *r, "hidden size (attribute or R's last dimension)");
  }
  for (size_t i : {1, 2}) {
    const Dim* d0 = dim_of(ctx, i, 0);
    if (d0) {
      unify_dims(ctx, Dim::of(dirs), *d0,
                 fmt::format("num_directions of the direction attribute and '{}'", names[i]));
    }
    const Dim* d1 = dim_of(ctx, i, 1);
    if (!d1) continue;
    if (d1->is_static() && d1->value % gates != 0) {
      ctx.fail_input(i, fmt::format("dimension 1 of '{}' is {}, not a multiple of the {} gates", names[i],
                                    d1->value, gates));
    }
    Dim h = d1->is_static() ? Dim::of(d1->value / gates) : Dim::unknown();
    hidden =
        unify_dims(ctx, hidden, h, fmt::format("hidden size implied by '{}' ({} gates)", names[i], gates));
  }
  if (const Dim* w2 = dim_of(ctx, 1, 2)) unify_dims(ctx, input_size, *w2, "input size of X and W");

  auto elem = input_elem(ctx, 0);
  Shape y = batch_first ? Shape{batch, seq, Dim::of(dirs), hidden} : Shape{seq, Dim::of(dirs), batch, hidden};
  Shape state = batch_first ? Shape{batch, Dim::of(dirs), hidden} : Shape{Dim::of(dirs), batch, hidden};
  set_output(ctx, 0, elem, y);
  set_output(ctx, 1, elem, state);
  set_output(ctx, 2, elem, state);  // Y_c; only LSTM has a third output
}

}  // namespace tessera::ops
