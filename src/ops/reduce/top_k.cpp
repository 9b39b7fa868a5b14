// TopK: the k largest (or smallest) elements along one axis, with their indices.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
using tessera::ir::DataType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// k from the attribute (opset 1) or the 1-element input K (opset 10+); nullopt when not known.
std::optional<int64_t> top_k_value(const InferenceContext& ctx) {
  if (ctx.schema().since_version() < 10) return ctx.attr_int("k", -1);
  if (const Shape* s = input_shape(ctx, 1)) {
    bool one = s->size() == 1 && (!(*s)[0].is_static() || (*s)[0].value == 1);
    if (!one) {
      ctx.fail_input(1, fmt::format("input 'K' must be a 1-D tensor holding one value, got shape {}",
                                    tessera::ir::shape_to_string(*s)));
    }
  }
  auto c = constant_ints(ctx, 1);
  if (!c || c->size() != 1) return std::nullopt;
  return (*c)[0];
}

void infer_top_k(InferenceContext& ctx) {
  auto elem = input_elem(ctx, 0);
  auto k = top_k_value(ctx);
  if (k && *k < 0) ctx.fail(fmt::format("k must not be negative, got {}", *k));
  const Shape* in = input_shape(ctx, 0);
  if (!in) {
    set_output(ctx, 0, elem, std::nullopt);
    return set_output(ctx, 1, DataType::kInt64, std::nullopt);
  }
  auto rank = static_cast<int64_t>(in->size());
  int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), rank);
  const Dim& along = (*in)[axis];
  if (k && along.is_static() && *k > along.value) {
    ctx.fail_input(0, fmt::format("k = {} exceeds the size {} of axis {} of input 'X' {}", *k, along.value,
                                  axis, tessera::ir::shape_to_string(*in)));
  }
  Shape out = *in;
  out[axis] = k ? Dim::of(*k) : Dim::unknown();
  set_output(ctx, 0, elem, out);
  set_output(ctx, 1, DataType::kInt64, out);
}

}  // namespace

TESSERA_REGISTER_OPS(reduce_top_k) {
  const char* doc =
      "The k largest (or, with largest=0, smallest) elements along 'axis' and their int64 indices; the other "
      "dimensions are kept.";
  auto base = [&](int version, std::vector<std::string> allowed) {
    OpSchema s("TopK", version);
    s.category(Category::kReduction).doc(doc).input("X", "T");
    if (version >= 10) s.input("K", "tensor(int64)");
    s.output("Values", "T")
        .output("Indices", "I")
        .types("T", std::move(allowed))
        .types("I", {"tensor(int64)"});
    s.attr("axis", int64_t{-1});
    return s;
  };
  reg.add(base(1, types::kFloat).attr("k", tessera::ir::AttrType::kInt).infer(infer_top_k));
  reg.add(base(10, types::kFloat).infer(infer_top_k));
  reg.add(
      base(11, types::kNumeric).attr("largest", int64_t{1}).attr("sorted", int64_t{1}).infer(infer_top_k));
  reg.add(base(24, types::kNumericBf16)
              .attr("largest", int64_t{1})
              .attr("sorted", int64_t{1})
              .infer(infer_top_k));
}
