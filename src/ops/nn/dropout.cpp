// Dropout: identity at inference; in training, zeroes random elements and scales the rest by 1/(1-ratio).
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::AttrType;
using tessera::ir::DataType;

namespace {

void require_scalar(const InferenceContext& ctx, size_t i, const char* name) {
  if (!ctx.has_input(i)) return;
  const ir::Shape* s = input_shape(ctx, i);
  if (s && !s->empty()) {
    ctx.fail_input(i,
                   fmt::format("input {} ('{}') must be a scalar, got {}", i, name, ir::shape_to_string(*s)));
  }
}

void infer_dropout(InferenceContext& ctx) {
  propagate_type(ctx, 0, 0);
  if (ctx.schema().since_version() >= 12) {
    require_scalar(ctx, 1, "ratio");
    require_scalar(ctx, 2, "training_mode");
  } else {
    float ratio = ctx.attr_float("ratio", 0.5f);
    if (ratio < 0 || ratio >= 1) ctx.fail(fmt::format("ratio is {}; it must be in [0, 1)", ratio));
  }
  if (!ctx.has_output(1)) return;
  // The mask had the data's type until opset 10 made it bool.
  DataType mask = ctx.schema().since_version() >= 10 ? DataType::kBool : input_elem(ctx, 0);
  const ir::Shape* xs = input_shape(ctx, 0);
  set_output(ctx, 1, mask, xs ? std::optional<ir::Shape>(*xs) : std::nullopt);
}

const char* kDoc =
    "Passes data through unchanged at inference. In training it zeroes each element with probability `ratio` "
    "and "
    "scales the others by 1/(1-ratio); the optional mask output shows which were kept.";

}  // namespace

TESSERA_REGISTER_OPS(nn_dropout) {
  for (int v : {1, 6, 7, 10}) {
    OpSchema s("Dropout", v);
    s.category(Category::kActivation)
        .doc(kDoc)
        .input("data", "T")
        .output("output", "T")
        .optional_output("mask", v >= 10 ? "T1" : "T")
        .types("T", types::kFloat)
        .infer(infer_dropout);
    if (v >= 10) s.types("T1", types::tensors({"bool"}));
    if (v == 1) s.attr_optional("consumed_inputs", AttrType::kInts);
    if (v < 7) s.attr("is_test", int64_t{0});
    s.attr("ratio", 0.5f);
    reg.add(std::move(s));
  }
  const auto float8 = types::tensors({"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"});
  for (int v : {12, 13, 22}) {
    OpSchema s("Dropout", v);
    s.category(Category::kActivation)
        .doc(kDoc)
        .input("data", "T")
        .optional_input("ratio", "T1")
        .optional_input("training_mode", "T2")
        .output("output", "T")
        .optional_output("mask", "T2")
        .types("T", v == 12   ? types::kFloat
                    : v == 13 ? types::kFloatBf16
                              : types::concat({types::kFloatBf16, float8}))
        .types("T1", v < 22 ? types::kFloat : types::concat({types::kFloatBf16, float8}))
        .types("T2", types::tensors({"bool"}))
        .attr_optional("seed", AttrType::kInt)
        .infer(infer_dropout);
    reg.add(std::move(s));
  }
}
