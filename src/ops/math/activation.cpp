// Elementwise activation functions. Y always has X's type and shape; versions differ in the element
// types allowed and, for the oldest ones, in the legacy `consumed_inputs` attribute.
#include <cfloat>

#include "ops/infer_util.h"
#include "ops/math/elementwise.h"
#include "ops/registry.h"

using namespace tessera::ops;
using namespace tessera::ops::math;

namespace {

constexpr Category kAct = Category::kActivation;

void add_relu_sigmoid_tanh(OpRegistry& reg) {
  const char* relu = "max(0, x) for each element.";
  reg.add(with_consumed_inputs(unary_schema("Relu", 1, kAct, relu, types::kFloat)));
  reg.add(unary_schema("Relu", 6, kAct, relu, types::kFloat));
  reg.add(unary_schema("Relu", 13, kAct, relu, types::kFloatBf16));
  reg.add(unary_schema("Relu", 14, kAct, relu, types::concat({types::kFloatBf16, types::kSignedInt})));

  const char* sigmoid = "The logistic function 1 / (1 + exp(-x)) of each element.";
  reg.add(with_consumed_inputs(unary_schema("Sigmoid", 1, kAct, sigmoid, types::kFloat)));
  reg.add(unary_schema("Sigmoid", 6, kAct, sigmoid, types::kFloat));
  reg.add(unary_schema("Sigmoid", 13, kAct, sigmoid, types::kFloatBf16));

  const char* tanh = "Hyperbolic tangent of each element.";
  reg.add(with_consumed_inputs(unary_schema("Tanh", 1, kAct, tanh, types::kFloat, "input", "output")));
  reg.add(unary_schema("Tanh", 6, kAct, tanh, types::kFloat, "input", "output"));
  reg.add(unary_schema("Tanh", 13, kAct, tanh, types::kFloatBf16, "input", "output"));
}

// Activations with scalar coefficients: versions 1 (with consumed_inputs), 6 and a later one adding bfloat16.
void add_parametric(OpRegistry& reg) {
  const char* elu = "x for x >= 0, alpha * (exp(x) - 1) below zero.";
  reg.add(with_consumed_inputs(unary_schema("Elu", 1, kAct, elu, types::kFloat)).attr("alpha", 1.0f));
  reg.add(unary_schema("Elu", 6, kAct, elu, types::kFloat).attr("alpha", 1.0f));
  reg.add(unary_schema("Elu", 22, kAct, elu, types::kFloatBf16).attr("alpha", 1.0f));

  // Version 1 rounded the constants of the SELU paper to five digits; version 6 uses them in full.
  const char* selu = "gamma * x for x > 0, gamma * alpha * (exp(x) - 1) otherwise (scaled ELU).";
  reg.add(with_consumed_inputs(unary_schema("Selu", 1, kAct, selu, types::kFloat))
              .attr("alpha", 1.6732f)
              .attr("gamma", 1.0507f));
  for (auto [since, allowed] : {std::pair{6, types::kFloat}, std::pair{22, types::kFloatBf16}}) {
    reg.add(unary_schema("Selu", since, kAct, selu, allowed)
                .attr("alpha", 1.67326319217681884765625f)
                .attr("gamma", 1.05070102214813232421875f));
  }

  const char* leaky = "x for x >= 0, alpha * x below zero.";
  reg.add(
      with_consumed_inputs(unary_schema("LeakyRelu", 1, kAct, leaky, types::kFloat)).attr("alpha", 0.01f));
  reg.add(unary_schema("LeakyRelu", 6, kAct, leaky, types::kFloat).attr("alpha", 0.01f));
  reg.add(unary_schema("LeakyRelu", 16, kAct, leaky, types::kFloatBf16).attr("alpha", 0.01f));

  const char* hsig = "max(0, min(1, alpha * x + beta)) for each element.";
  reg.add(with_consumed_inputs(unary_schema("HardSigmoid", 1, kAct, hsig, types::kFloat))
              .attr("alpha", 0.2f)
              .attr("beta", 0.5f));
  reg.add(unary_schema("HardSigmoid", 6, kAct, hsig, types::kFloat).attr("alpha", 0.2f).attr("beta", 0.5f));
  reg.add(
      unary_schema("HardSigmoid", 22, kAct, hsig, types::kFloatBf16).attr("alpha", 0.2f).attr("beta", 0.5f));

  const char* thr = "x where x > alpha, 0 elsewhere.";
  reg.add(unary_schema("ThresholdedRelu", 10, kAct, thr, types::kFloat).attr("alpha", 1.0f));
  reg.add(unary_schema("ThresholdedRelu", 22, kAct, thr, types::kFloatBf16).attr("alpha", 1.0f));

  // Celu-28 widened the single float type of version 12 to the other float types.
  const char* celu = "max(0, x) + min(0, alpha * (exp(x / alpha) - 1)): an ELU that is smooth at zero.";
  reg.add(unary_schema("Celu", 12, kAct, celu, types::tensors({"float"})).attr("alpha", 1.0f));
  reg.add(unary_schema("Celu", 28, kAct, celu, types::kFloatBf16).attr("alpha", 1.0f));

  const char* shrink = "x - bias where x > lambd, x + bias where x < -lambd, 0 in between.";
  reg.add(unary_schema("Shrink", 9, kAct, shrink, types::kNumeric, "input", "output")
              .attr("bias", 0.0f)
              .attr("lambd", 0.5f));
}

void infer_gelu(InferenceContext& ctx) {
  std::string mode = ctx.attr_string("approximate", "none");
  if (mode != "none" && mode != "tanh") {
    ctx.fail("attribute 'approximate' is '" + mode + "'; it must be 'none' or 'tanh'");
  }
  infer_same_as_input0(ctx);
}

// Smooth activations without coefficients, and the newer Gelu, Mish and Swish.
void add_smooth(OpRegistry& reg) {
  const char* hswish = "x * max(0, min(1, x / 6 + 0.5)) for each element.";
  reg.add(unary_schema("HardSwish", 14, kAct, hswish, types::kFloat));
  reg.add(unary_schema("HardSwish", 22, kAct, hswish, types::kFloatBf16));

  const char* softplus = "log(1 + exp(x)) for each element.";
  reg.add(unary_schema("Softplus", 1, kAct, softplus, types::kFloat));
  reg.add(unary_schema("Softplus", 22, kAct, softplus, types::kFloatBf16));

  const char* softsign = "x / (1 + |x|) for each element.";
  reg.add(unary_schema("Softsign", 1, kAct, softsign, types::kFloat, "input", "output"));
  reg.add(unary_schema("Softsign", 22, kAct, softsign, types::kFloatBf16, "input", "output"));

  const char* mish = "x * tanh(softplus(x)) for each element.";
  reg.add(unary_schema("Mish", 18, kAct, mish, types::kFloat));
  reg.add(unary_schema("Mish", 22, kAct, mish, types::kFloatBf16));

  reg.add(unary_schema("Gelu", 20, kAct,
                       "x * Phi(x), Phi the standard normal CDF; approximate='tanh' uses the tanh formula.",
                       types::kFloatBf16)
              .attr("approximate", "none")
              .infer(infer_gelu));

  reg.add(unary_schema("Swish", 24, kAct, "x * sigmoid(alpha * x) for each element.", types::kFloatBf16)
              .attr("alpha", 1.0f));
}

}  // namespace

TESSERA_REGISTER_OPS(math_activation) {
  add_relu_sigmoid_tanh(reg);
  add_parametric(reg);
  add_smooth(reg);
}
