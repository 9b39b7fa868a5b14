// Layer normalizations of ONNX Runtime's contrib domain (com.microsoft 1): LayerNormalization and
// SimplifiedLayerNormalization (RMSNorm), as exporters emit them, and the fused residual forms
// SkipLayerNormalization and SkipSimplifiedLayerNormalization.
#include <fmt/format.h>

#include "ops/attention/attention_util.h"
#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using ir::DataType;
using ir::Dim;
using ir::Shape;

namespace {

// Statistics keep the leading axes and collapse the normalised ones to 1.
Shape stats_shape(const Shape& x, int64_t axis) {
  Shape s = x;
  for (size_t k = static_cast<size_t>(axis); k < s.size(); ++k) s[k] = Dim::of(1);
  return s;
}

// A per-feature parameter (scale, bias) must cover the normalised axes, here checked by element count
// when everything is static.
void check_param(const InferenceContext& ctx, size_t i, const Shape& x, int64_t axis) {
  const Shape* p = ctx.has_input(i) ? input_shape(ctx, i) : nullptr;
  if (!p) return;
  Shape tail(x.begin() + axis, x.end());
  auto want = ir::shape_numel(tail), got = ir::shape_numel(*p);
  if (want && got && *want != *got) {
    ctx.fail_input(
        i, fmt::format("{} {} does not match the normalised dimensions {} of the input",
                       attn::input_label(ctx, i), ir::shape_to_string(*p), ir::shape_to_string(tail)));
  }
}

DataType stash_type(const InferenceContext& ctx) {
  int64_t s = ctx.attr_int("stash_type", 1);
  if (!ir::is_valid_dtype(static_cast<int32_t>(s)))
    ctx.fail(fmt::format("stash_type {} is not a data type", s));
  return static_cast<DataType>(s);
}

// LayerNormalization (Y, Mean, InvStdDev) and SimplifiedLayerNormalization (Y, inv_std_var): Y takes
// the scale's type, which ONNX Runtime allows to differ from X's for mixed precision.
void infer_layer_norm(InferenceContext& ctx, size_t first_stat_output) {
  DataType y_type = input_elem(ctx, 1) != DataType::kUndefined ? input_elem(ctx, 1) : input_elem(ctx, 0);
  DataType u = stash_type(ctx);
  const Shape* x = input_shape(ctx, 0);
  if (!x) {
    set_output(ctx, 0, y_type, std::nullopt);
    return;
  }
  int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), static_cast<int64_t>(x->size()));
  check_param(ctx, 1, *x, axis);
  check_param(ctx, 2, *x, axis);
  set_output(ctx, 0, y_type, *x);
  for (size_t o = first_stat_output; o < ctx.num_outputs(); ++o) set_output(ctx, o, u, stats_shape(*x, axis));
}

// Skip forms: input and skip are (batch, seq, hidden) (skip may drop or broadcast the batch axis);
// gamma, beta and bias are (hidden). `has_beta` says whether input 3 is beta (SkipLayerNormalization)
// or the bias (the simplified form has no beta).
void infer_skip_layer_norm(InferenceContext& ctx, bool has_beta) {
  const Shape* x = input_shape(ctx, 0);
  const Shape* skip = input_shape(ctx, 1);
  if (x && x->size() != 2 && x->size() != 3) {
    ctx.fail_input(
        0, fmt::format("input must be 3-D (batch, seq, hidden) or 2-D, got {}", ir::shape_to_string(*x)));
  }
  DataType t = input_elem(ctx, 0);
  set_output(ctx, 0, t, x ? std::optional<Shape>(*x) : std::nullopt);
  set_output(ctx, 3, t, x ? std::optional<Shape>(*x) : std::nullopt);
  if (!x) return;
  Dim hidden = x->back();
  if (skip && !skip->empty()) hidden = unify_dims(ctx, hidden, skip->back(), "hidden size of input and skip");
  if (skip && skip->size() > x->size()) {
    ctx.fail_input(1, fmt::format("skip {} has more axes than the input {}", ir::shape_to_string(*skip),
                                  ir::shape_to_string(*x)));
  }
  for (size_t i = 2; i < ctx.num_inputs(); ++i) {
    const Shape* p = ctx.has_input(i) ? input_shape(ctx, i) : nullptr;
    if (!p) continue;
    const char* what = i == 2 ? "gamma" : (i == 3 && has_beta) ? "beta" : "bias";
    if (p->size() != 1)
      ctx.fail_input(i, fmt::format("{} must be 1-D (hidden), got {}", what, ir::shape_to_string(*p)));
    unify_dims(ctx, hidden, (*p)[0], fmt::format("{} length must equal the hidden size", what));
  }
  Shape stats = *x;
  stats.back() = Dim::of(1);
  set_output(ctx, 1, DataType::kFloat, stats);
  set_output(ctx, 2, DataType::kFloat, stats);
}

const std::vector<std::string> kFloats = types::tensors({"float", "double", "float16", "bfloat16"});
const std::vector<std::string> kSkipTypes = types::tensors({"float", "float16", "bfloat16"});

}  // namespace

TESSERA_REGISTER_OPS(contrib_layer_norm) {
  reg.add(OpSchema("LayerNormalization", 1, "com.microsoft")
              .category(Category::kNormalization)
              .doc("Normalises over the axes from `axis` on to zero mean and unit variance, then scales and "
                   "shifts; "
                   "ONNX Runtime's form used by exporters before opset 17.")
              .input("X", "T")
              .input("Scale", "V")
              .optional_input("B", "V")
              .output("Y", "V")
              .optional_output("Mean", "U")
              .optional_output("InvStdDev", "U")
              .types("T", kFloats)
              .types("U", types::tensors({"float", "double", "bfloat16"}))
              .types("V", kFloats)
              .attr("axis", int64_t{-1})
              .attr("epsilon", 1e-5f)
              .attr("stash_type", int64_t{1})
              .infer([](InferenceContext& ctx) { infer_layer_norm(ctx, 1); }));
  reg.add(OpSchema("SimplifiedLayerNormalization", 1, "com.microsoft")
              .category(Category::kNormalization)
              .doc("RMS normalisation: divides by the root mean square over the axes from `axis` on (no mean "
                   "subtraction) and multiplies by scale.")
              .input("X", "T")
              .input("scale", "V")
              .output("Y", "V")
              .optional_output("inv_std_var", "U")
              .types("T", kFloats)
              .types("U", types::tensors({"float", "double", "bfloat16"}))
              .types("V", kFloats)
              .attr("axis", int64_t{-1})
              .attr("epsilon", 1e-5f)
              .attr("stash_type", int64_t{1})
              .infer([](InferenceContext& ctx) { infer_layer_norm(ctx, 1); }));
  reg.add(
      OpSchema("SkipLayerNormalization", 1, "com.microsoft")
          .category(Category::kNormalization)
          .doc(
              "Adds input, skip and an optional bias, then applies layer normalisation over the hidden axis; "
              "can also return the sum before normalisation.")
          .input("input", "T")
          .input("skip", "T")
          .input("gamma", "T")
          .optional_input("beta", "T")
          .optional_input("bias", "T")
          .output("output", "T")
          .optional_output("mean", "U")
          .optional_output("inv_std_var", "U")
          .optional_output("input_skip_bias_sum", "T")
          .types("T", kSkipTypes)
          .types("U", {"tensor(float)"})
          .attr_optional("epsilon", ir::AttrType::kFloat)
          .infer([](InferenceContext& ctx) { infer_skip_layer_norm(ctx, true); }));
  reg.add(OpSchema("SkipSimplifiedLayerNormalization", 1, "com.microsoft")
              .category(Category::kNormalization)
              .doc("Adds input, skip and an optional bias, then applies RMS normalisation over the hidden "
                   "axis; can "
                   "also return the sum before normalisation.")
              .input("input", "T")
              .input("skip", "T")
              .input("gamma", "T")
              .optional_input("bias", "T")
              .output("output", "T")
              .optional_output("mean", "U")
              .optional_output("inv_std_var", "U")
              .optional_output("input_skip_bias_sum", "T")
              .types("T", kSkipTypes)
              .types("U", {"tensor(float)"})
              .attr_optional("epsilon", ir::AttrType::kFloat)
              .infer([](InferenceContext& ctx) { infer_skip_layer_norm(ctx, false); }));
}
