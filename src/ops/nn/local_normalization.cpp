// LpNormalization, MeanVarianceNormalization and LRN: normalizations whose output has the input's shape.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ops/infer_util.h"
#include "ops/nn/window.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::AttrType;
using tessera::ir::Shape;

namespace {

void infer_lp_norm(InferenceContext& ctx) {
  propagate_type(ctx, 0, 0);
  int64_t p = ctx.attr_int("p", 2);
  if (p != 1 && p != 2) ctx.fail(fmt::format("p is {}; only 1 and 2 are supported", p));
  if (const Shape* xs = input_shape(ctx, 0))
    normalize_axis(ctx, ctx.attr_int("axis", -1), static_cast<int64_t>(xs->size()));
}

void infer_mvn(InferenceContext& ctx) {
  propagate_type(ctx, 0, 0);
  const Shape* xs = input_shape(ctx, 0);
  if (!xs) return;
  for (int64_t a : ctx.attr_ints("axes", {0, 2, 3}))
    normalize_axis(ctx, a, static_cast<int64_t>(xs->size()), "axes");
}

void infer_lrn(InferenceContext& ctx) {
  propagate_type(ctx, 0, 0);
  int64_t size = ctx.attr_int("size", 0);
  if (size < 1) ctx.fail(fmt::format("size is {}; it must be at least 1", size));
  if (const Shape* xs = input_shape(ctx, 0)) nn::require_nc(ctx, 0, *xs, "X");
}

}  // namespace

TESSERA_REGISTER_OPS(nn_local_normalization) {
  for (int v : {1, 22}) {
    reg.add(OpSchema("LpNormalization", v)
                .category(Category::kNormalization)
                .doc("Divides X by its L1 or L2 norm along one axis.")
                .input("input", "T")
                .output("output", "T")
                .types("T", nn::float_types(v))
                .attr("axis", int64_t{-1})
                .attr("p", int64_t{2})
                .infer(infer_lp_norm));
  }
  for (int v : {9, 13}) {
    reg.add(OpSchema("MeanVarianceNormalization", v)
                .category(Category::kNormalization)
                .doc("Shifts and scales X to zero mean and unit variance over the given axes.")
                .input("X", "T")
                .output("Y", "T")
                .types("T", v >= 13 ? types::kFloatBf16 : types::kFloat)
                .attr("axes", std::vector<int64_t>{0, 2, 3})
                .infer(infer_mvn));
  }
  for (int v : {1, 13}) {
    reg.add(OpSchema("LRN", v)
                .category(Category::kNormalization)
                .doc("Local response normalization: divides each value by a power of the sum of squares over "
                     "`size` "
                     "neighbouring channels.")
                .input("X", "T")
                .output("Y", "T")
                .types("T", v >= 13 ? types::kFloatBf16 : types::kFloat)
                .attr("alpha", 1e-4f)
                .attr("beta", 0.75f)
                .attr("bias", 1.0f)
                .attr("size", AttrType::kInt)
                .infer(infer_lrn));
  }
}
