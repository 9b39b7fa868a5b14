// CausalConvWithState: stateful causal depthwise 1-D convolution (Mamba, Gated DeltaNet short conv).
#include <fmt/format.h>

#include "ops/infer_util.h"
#include "ops/registry.h"

using namespace tessera::ops;
namespace ir = tessera::ir;
using tessera::ir::Dim;
using tessera::ir::Shape;

namespace {

// input [N, C, L], weight [C, 1, K], bias [C], past_state [N, C, K-1]
// -> output [N, C, L], present_state [N, C, K-1].
void infer_causal_conv(InferenceContext& ctx) {
  std::string act = ctx.attr_string("activation", "none");
  if (act != "none" && act != "silu" && act != "swish") {
    ctx.fail(fmt::format("activation is '{}'; it must be 'none', 'silu' or 'swish'", act));
  }
  require_rank(ctx, 0, 3, "input 0 ('input')");
  require_rank(ctx, 1, 3, "input 1 ('weight')");
  if (ctx.has_input(2)) require_rank(ctx, 2, 1, "input 2 ('bias')");
  if (ctx.has_input(3)) require_rank(ctx, 3, 3, "input 3 ('past_state')");
  const Shape* xs = input_shape(ctx, 0);
  const Shape* ws = input_shape(ctx, 1);
  Dim n = xs ? (*xs)[0] : Dim::unknown();
  Dim c = xs ? (*xs)[1] : Dim::unknown();
  Dim l = xs ? (*xs)[2] : Dim::unknown();
  Dim state = Dim::unknown();
  if (ws) {
    c = unify_dims(ctx, c, (*ws)[0], "input 1 ('weight') must have one filter per channel of input");
    if ((*ws)[1].is_static() && (*ws)[1].value != 1) {
      ctx.fail_input(1, fmt::format("input 1 ('weight') must be [C, 1, K] (depthwise), got {}",
                                    ir::shape_to_string(*ws)));
    }
    if ((*ws)[2].is_static()) {
      if ((*ws)[2].value < 1) ctx.fail_input(1, "input 1 ('weight') has an empty kernel");
      state = Dim::of((*ws)[2].value - 1);
    }
  }
  if (ctx.has_input(2)) {
    if (const Shape* bs = input_shape(ctx, 2))
      c = unify_dims(ctx, c, (*bs)[0], "input 2 ('bias') must have one value per channel");
  }
  if (ctx.has_input(3)) {
    if (const Shape* ps = input_shape(ctx, 3)) {
      n = unify_dims(ctx, n, (*ps)[0], "input 3 ('past_state') must have input's batch size");
      c = unify_dims(ctx, c, (*ps)[1], "input 3 ('past_state') must have input's channels");
      state = unify_dims(ctx, state, (*ps)[2], "input 3 ('past_state') must hold kernel size - 1 positions");
    }
  }
  ir::DataType elem = input_elem(ctx, 0);
  set_output(ctx, 0, elem, xs || ws ? std::optional<Shape>(Shape{n, c, l}) : std::nullopt);
  set_output(ctx, 1, elem, Shape{n, c, state});
}

}  // namespace

TESSERA_REGISTER_OPS(nn_causal_conv_with_state) {
  reg.add(
      OpSchema("CausalConvWithState", 27)
          .category(Category::kConvolution)
          .doc(
              "Causal depthwise 1-D convolution that carries its last kernel-1 input positions between calls "
              "(past_state in, present_state out), with an optional fused SiLU.")
          .input("input", "T")
          .input("weight", "T")
          .optional_input("bias", "T")
          .optional_input("past_state", "T")
          .output("output", "T")
          .optional_output("present_state", "T")
          .types("T", types::kFloatBf16)
          .attr("activation", "none")
          .infer(infer_causal_conv));
}
