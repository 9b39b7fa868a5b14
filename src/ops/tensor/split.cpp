// Split: cuts a tensor into pieces along an axis.
#include <fmt/format.h>

#include <cstdint>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// The explicit piece sizes: the 'split' attribute (2-11) or input (1 and 13+).
std::optional<std::vector<int64_t>> split_sizes(const InferenceContext& ctx, bool& given) {
  int v = ctx.opset();
  if (v >= 2 && v < 13) {
    given = ctx.has_attr("split");
    return given ? std::optional(ctx.attr_ints("split")) : std::nullopt;
  }
  given = ctx.has_input(1);
  if (!given && v < 2 && ctx.has_attr("split")) {
    given = true;
    return ctx.attr_ints("split");
  }
  return given ? tensor::static_ints(ctx, 1) : std::nullopt;
}

void infer_split(InferenceContext& ctx) {
  size_t outs = ctx.num_outputs();
  bool given = false;
  auto sizes = split_sizes(ctx, given);
  bool has_num = ctx.has_attr("num_outputs");
  if (given && has_num) ctx.fail("give either the 'split' input or the 'num_outputs' attribute, not both");
  if (ctx.opset() >= 18 && !given && !has_num)
    ctx.fail("Split-18 needs the 'split' input or the 'num_outputs' attribute");
  int64_t num = has_num ? ctx.attr_int("num_outputs") : static_cast<int64_t>(outs);
  if (has_num && num < 1) ctx.fail(fmt::format("attribute 'num_outputs' is {}; it must be at least 1", num));
  if (has_num && static_cast<size_t>(num) != outs) {
    ctx.fail(fmt::format("attribute 'num_outputs' is {} but the node has {} outputs", num, outs));
  }
  if (sizes && sizes->size() != outs) {
    ctx.fail(fmt::format("split {} has {} sizes but the node has {} outputs", tensor::ints_string(*sizes),
                         sizes->size(), outs));
  }
  const Shape* s = input_shape(ctx, 0);
  if (!s) {
    for (size_t i = 0; i < outs; ++i) propagate_elem(ctx, 0, i, std::nullopt);
    return;
  }
  int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), static_cast<int64_t>(s->size()));
  const Dim& d = (*s)[axis];
  std::vector<Dim> pieces(outs, Dim::unknown());
  if (sizes) {
    int64_t sum = 0;
    for (size_t i = 0; i < outs; ++i) {
      if ((*sizes)[i] < 0) ctx.fail(fmt::format("split {} has a negative size", tensor::ints_string(*sizes)));
      auto next = checked_add(sum, (*sizes)[i]);
      if (!next) ctx.fail(fmt::format("split {} sums beyond int64", tensor::ints_string(*sizes)));
      sum = *next;
      pieces[i] = Dim::of((*sizes)[i]);
    }
    if (d.is_static() && sum != d.value) {
      ctx.fail(fmt::format("split {} sums to {} but axis {} of {} has size {}", tensor::ints_string(*sizes),
                           sum, axis, tessera::ir::shape_to_string(*s), d.value));
    }
  } else if (!given && d.is_static()) {
    int64_t n = static_cast<int64_t>(outs);
    if (has_num) {
      // Split-18: equal pieces of ceil(size / n), the last one smaller when it does not divide.
      int64_t chunk = d.value / n + (d.value % n != 0 ? 1 : 0);
      if (checked_mul(chunk, n - 1).value_or(INT64_MAX) > d.value) {
        // A warning, not an error: such Splits sit in the untaken branches of function bodies (AffineGrid).
        ctx.warn(
            fmt::format("axis {} of size {} cannot be split into {} pieces of {}", axis, d.value, n, chunk));
        Shape out = *s;
        out[axis] = Dim::unknown();
        for (size_t i = 0; i < outs; ++i) propagate_elem(ctx, 0, i, out);
        return;
      }
      for (int64_t i = 0; i < n; ++i) pieces[i] = Dim::of(i + 1 < n ? chunk : d.value - chunk * (n - 1));
    } else {
      if (d.value % n != 0) {
        ctx.fail(fmt::format("axis {} of size {} does not split into {} equal pieces", axis, d.value, n));
      }
      for (int64_t i = 0; i < n; ++i) pieces[i] = Dim::of(d.value / n);
    }
  } else if (!given && outs == 1) {
    pieces[0] = d;
  }
  for (size_t i = 0; i < outs; ++i) {
    Shape out = *s;
    out[axis] = pieces[i];
    propagate_elem(ctx, 0, i, out);
  }
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_split) {
  const char* doc = "Cuts the input along 'axis' into pieces of the given sizes, or into equal pieces.";
  for (int v : {1, 2, 11, 13, 18}) {
    OpSchema s("Split", v);
    s.category(Category::kTensorShape).doc(doc);
    if (v < 2) {
      s.attr_optional("axis", tessera::ir::AttrType::kInt, "Axis to cut (0 when not set).");
    } else {
      s.attr("axis", int64_t{0}, v < 11 ? "Axis to cut." : "Axis to cut; negative counts from the back.");
    }
    if (v < 13) s.attr_optional("split", tessera::ir::AttrType::kInts, "Size of each piece.");
    if (v >= 18)
      s.attr_optional("num_outputs", tessera::ir::AttrType::kInt,
                      "Number of pieces when 'split' is not given.");
    s.input("input", "T");
    if (v < 2) s.optional_input("split", "T", "Size of each piece.");
    if (v >= 13) s.optional_input("split", "tensor(int64)", "Size of each piece.");
    s.variadic_output(v < 2 ? "outputs..." : "outputs", "T")
        .types("T", v < 2 ? types::kFloat : tensor::all_types(v))
        .infer(infer_split);
    reg.add(std::move(s));
  }
}
