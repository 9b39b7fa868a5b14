// BatchNormalization: normalizes each channel with a mean and variance (running statistics at inference,
// batch statistics in training mode), then scales and shifts it.
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/nn/norm_util.h"
#include "ops/nn/window.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::AttrType;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

void infer_batch_norm(InferenceContext& ctx) {
  propagate_type(ctx, 0, 0);
  const Shape* xs = input_shape(ctx, 0);
  Dim c = Dim::unknown();
  if (xs) {
    nn::require_nc(ctx, 0, *xs, "X");
    c = (*xs)[1];
  }
  // Before opset 9, spatial=0 made the parameters [C, D1, ...]; only the per-channel form is checked.
  bool per_channel = ctx.schema().since_version() >= 9 || ctx.attr_int("spatial", 1) == 1;
  if (per_channel) {
    const char* names[] = {"scale", "B", "mean", "var"};
    if (ctx.schema().since_version() >= 14) names[2] = "input_mean", names[3] = "input_var";
    for (size_t i = 1; i <= 4; ++i) nn::require_per_channel(ctx, i, names[i - 1], c);
  }
  std::optional<Shape> stat;
  if (per_channel) stat = Shape{c};
  if (ctx.schema().since_version() >= 14) {
    bool training = ctx.attr_int("training_mode", 0) != 0;
    if (!training && (ctx.has_output(1) || ctx.has_output(2))) {
      ctx.warn("running_mean and running_var are only computed with training_mode=1");
    }
    // The running statistics keep the type of the statistics given (U / T2), which may differ from X's.
    propagate_elem(ctx, 3, 1, stat);
    propagate_elem(ctx, 4, 2, stat);
    return;
  }
  for (size_t o = 1; o <= 4; ++o) propagate_elem(ctx, 0, o, stat);
}

const char* kDoc =
    "Normalizes each channel of X by a mean and variance, then applies a per-channel scale and bias. In "
    "training "
    "mode the batch statistics are used and running averages are returned.";

}  // namespace

TESSERA_REGISTER_OPS(nn_batch_normalization) {
  for (int v : {1, 6, 7, 9}) {
    OpSchema s("BatchNormalization", v);
    s.category(Category::kNormalization)
        .doc(kDoc)
        .input("X", "T")
        .input("scale", "T")
        .input("B", "T")
        .input("mean", "T")
        .input("var", "T")
        .output("Y", "T")
        .optional_output("mean", "T")
        .optional_output("var", "T")
        .optional_output("saved_mean", "T")
        .optional_output("saved_var", "T")
        .types("T", types::kFloat)
        .infer(infer_batch_norm);
    if (v == 1) s.attr("consumed_inputs", AttrType::kInts);
    s.attr("epsilon", 1e-5f);
    if (v < 7) s.attr("is_test", int64_t{0});
    s.attr("momentum", 0.9f);
    if (v < 9) s.attr("spatial", int64_t{1});
    reg.add(std::move(s));
  }
  for (int v : {14, 15}) {
    OpSchema s("BatchNormalization", v);
    const char* p = v == 14 ? "T" : "T1";
    const char* u = v == 14 ? "U" : "T2";
    s.category(Category::kNormalization)
        .doc(kDoc)
        .input("X", "T")
        .input("scale", p)
        .input("B", p)
        .input("input_mean", u)
        .input("input_var", u)
        .output("Y", "T")
        .optional_output("running_mean", u)
        .optional_output("running_var", u)
        .types("T", types::kFloatBf16);
    if (v == 14) {
      s.types("U", types::kFloatBf16);
    } else {
      s.types("T1", types::kFloatBf16).types("T2", types::kFloatBf16);
    }
    s.attr("epsilon", 1e-5f).attr("momentum", 0.9f).attr("training_mode", int64_t{0}).infer(infer_batch_norm);
    reg.add(std::move(s));
  }
}
