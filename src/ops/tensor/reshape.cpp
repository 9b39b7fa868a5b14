// Reshape: the same elements under a new shape; 0 copies an input dimension, -1 is inferred.
#include <fmt/format.h>

#include <algorithm>

#include "ops/infer_util.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"

using namespace tessera::ops;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// The product of some dimensions as a static factor times a multiset of symbols; nullopt when one
// is unknown. Lets [batch,3,224,224] -> [batch,-1] infer 150528 by cancelling 'batch'.
struct Factors {
  int64_t number = 1;
  std::vector<std::string> symbols;
};

std::optional<Factors> factors_of(const std::vector<Dim>& dims) {
  Factors f;
  for (const Dim& d : dims) {
    if (d.is_static()) {
      auto n = tessera::ops::checked_mul(f.number, d.value);
      if (!n) return std::nullopt;  // sizes beyond int64: nothing can be inferred
      f.number = *n;
    } else if (d.is_symbolic()) {
      f.symbols.push_back(d.param);
    } else {
      return std::nullopt;
    }
  }
  std::sort(f.symbols.begin(), f.symbols.end());
  return f;
}

// Removes the symbols the two sides share.
void cancel(Factors& a, Factors& b) {
  std::vector<std::string> ra, rb;
  std::set_difference(a.symbols.begin(), a.symbols.end(), b.symbols.begin(), b.symbols.end(),
                      std::back_inserter(ra));
  std::set_difference(b.symbols.begin(), b.symbols.end(), a.symbols.begin(), a.symbols.end(),
                      std::back_inserter(rb));
  a.symbols = std::move(ra);
  b.symbols = std::move(rb);
}

void infer_reshape(InferenceContext& ctx) {
  std::optional<std::vector<Dim>> target;
  if (ctx.opset() < 5) {
    if (ctx.has_attr("shape")) target = std::vector<Dim>();
    for (int64_t v : ctx.attr_ints("shape")) target->push_back(Dim{v, {}, {}});
  } else {
    require_rank(ctx, 1, 1, "input 'shape'");
    target = shape_value(ctx, 1);
  }
  const Shape* in = input_shape(ctx, 0);
  if (!target) {
    // Only the target's length is known: the rank.
    const Shape* ts = ctx.opset() >= 5 ? input_shape(ctx, 1) : nullptr;
    if (ts && (*ts)[0].is_static())
      return propagate_elem(ctx, 0, 0, Shape(static_cast<size_t>((*ts)[0].value)));
    return propagate_elem(ctx, 0, 0, std::nullopt);
  }
  bool exact = ctx.opset() < 5 || ctx.input_constant(1) != nullptr;  // every -1 is a literal -1
  bool allowzero = ctx.attr_int("allowzero", 0) != 0;
  auto fail = [&](std::string why) {
    std::string msg = in ? fmt::format("cannot reshape {} to {}", tessera::ir::shape_to_string(*in),
                                       tensor::dims_string(*target))
                         : fmt::format("cannot reshape to {}", tensor::dims_string(*target));
    ctx.fail(why.empty() ? msg : msg + ": " + why);
  };
  Shape out;
  int infer_at = -1;
  bool has_zero = false;
  for (size_t k = 0; k < target->size(); ++k) {
    const Dim& d = (*target)[k];
    if (!d.param.empty() || d.value > 0 || (d.value == 0 && allowzero)) {
      has_zero |= d.value == 0 && d.param.empty();
      out.push_back(d);
    } else if (d.value == 0) {
      if (in && k >= in->size()) fail(fmt::format("0 at position {} copies a dimension the input lacks", k));
      out.push_back(in ? (*in)[k] : Dim::unknown());
    } else if (d.value == -1) {
      // A non-constant target may hold unknown entries that look like -1; only constants can be wrong.
      if (infer_at >= 0 && exact) fail("more than one -1");
      infer_at = infer_at >= 0 ? -2 : static_cast<int>(k);
      out.push_back(Dim::unknown());
    } else {
      fail(fmt::format("{} is not a dimension", d.value));
    }
  }
  if (allowzero && has_zero && infer_at != -1 && exact) fail("allowzero with both 0 and -1");
  if (infer_at == -2) {
    // Two entries unknown: nothing more to infer.
    for (Dim& d : out) d = d.param.empty() && d.value < 0 ? Dim::unknown() : d;
    return propagate_elem(ctx, 0, 0, out);
  }
  auto fin = in ? factors_of(*in) : std::nullopt;
  std::vector<Dim> rest;
  for (size_t k = 0; k < out.size(); ++k) {
    if (static_cast<int>(k) != infer_at) rest.push_back(out[k]);
  }
  auto fout = factors_of(rest);
  if (fin && fout) {
    cancel(*fin, *fout);
    bool symbols_gone = fin->symbols.empty() && fout->symbols.empty();
    if (infer_at < 0) {
      if (symbols_gone && fin->number != fout->number) fail("");
    } else if (fout->number == 0) {
      // 0 * -1: the -1 cannot be inferred; a non-empty static input cannot fit.
      if (fin->symbols.empty() && fin->number != 0) fail("");
    } else if (fin->symbols.empty() && fin->number % fout->number != 0) {
      fail("");
    } else if (symbols_gone) {
      out[infer_at] = Dim::of(fin->number / fout->number);
    } else if (fout->symbols.empty() && fin->symbols.size() == 1 && fin->number == fout->number) {
      out[infer_at] = Dim::symbol(fin->symbols[0]);
    }
  }
  propagate_elem(ctx, 0, 0, out);
  // Reshaping a shape value (e.g. to a scalar or [1]) keeps it.
  if (const auto* v = ctx.input_shape_value(0)) tensor::set_value(ctx, 0, *v);
}

}  // namespace

TESSERA_REGISTER_OPS(tensor_reshape) {
  for (int v : {1, 5, 13, 14, 19, 21, 23, 24, 25}) {
    OpSchema s("Reshape", v);
    s.category(Category::kTensorShape)
        .doc(
            "Gives the data a new shape with the same element count; a 0 copies the input's dimension "
            "(unless "
            "allowzero) and one -1 is inferred.");
    if (v < 5) {
      s.attr_optional("consumed_inputs", tessera::ir::AttrType::kInts, "Legacy in-place hint; ignored.");
      s.attr_optional("shape", tessera::ir::AttrType::kInts, "The new shape.");
    }
    if (v >= 14) s.attr("allowzero", int64_t{0}, "1: a 0 in the shape is a real zero-size dimension.");
    s.input("data", "T");
    if (v >= 5) s.input("shape", "tensor(int64)", "The new shape.");
    s.output("reshaped", "T").types("T", v < 5 ? types::kFloat : tensor::all_types(v)).infer(infer_reshape);
    reg.add(std::move(s));
  }
}
