// FLOPs per element of the elementwise, normalisation and softmax operators. An arithmetic operation, a
// comparison or a function evaluation (exp, log, erf, tanh, sqrt, a division) counts 1: the cost on the
// device differs (a division or an exp is several instructions), but the count stays comparable across
// operators and with other tools' counts (PyTorch's flop counter counts none of these).
#include <map>

#include "ops/fused/elementwise_program.h"
#include "profiler/work.h"

namespace tessera::profiler {

namespace {

// Elementwise operators of a fixed cost per output element.
const std::map<std::string, double, std::less<>> kElementwise = {
    // one operation
    {"Add", 1},
    {"Sub", 1},
    {"Mul", 1},
    {"Div", 1},
    {"Neg", 1},
    {"Abs", 1},
    {"Relu", 1},
    {"Sqrt", 1},
    {"Reciprocal", 1},
    {"Exp", 1},
    {"Log", 1},
    {"Pow", 1},
    {"Erf", 1},
    {"Tanh", 1},
    {"Sin", 1},
    {"Cos", 1},
    {"Tan", 1},
    {"Asin", 1},
    {"Acos", 1},
    {"Atan", 1},
    {"Sinh", 1},
    {"Cosh", 1},
    {"Asinh", 1},
    {"Acosh", 1},
    {"Atanh", 1},
    {"Sign", 1},
    {"Floor", 1},
    {"Ceil", 1},
    {"Round", 1},
    {"Mod", 1},
    {"Equal", 1},
    {"Less", 1},
    {"Greater", 1},
    {"LessOrEqual", 1},
    {"GreaterOrEqual", 1},
    {"And", 1},
    {"Or", 1},
    {"Not", 1},
    {"Xor", 1},
    {"Where", 1},
    {"IsNaN", 1},
    {"IsInf", 1},
    {"ThresholdedRelu", 1},
    {"BitwiseAnd", 1},
    {"BitwiseOr", 1},
    {"BitwiseXor", 1},
    {"BitwiseNot", 1},
    // compare-and-select plus a multiply; max and min
    {"LeakyRelu", 2},
    {"PRelu", 2},
    {"Clip", 2},
    {"Shrink", 2},
    // exp, add, log; abs, add, divide; exp, subtract, multiply
    {"Softplus", 3},
    {"Softsign", 3},
    {"Elu", 3},
    {"Celu", 3},
    // negate, exp, add, divide; multiply, add, max, min
    {"Sigmoid", 4},
    {"HardSigmoid", 4},
    {"Selu", 4},
    // x (1 + erf(x / sqrt 2)) / 2; x relu6(x + 3) / 6; x tanh(softplus x)
    {"HardSwish", 5},
    {"Mish", 5},
    // com.microsoft: bias + erf GELU; x sigmoid(1.702 x); X + bias + skip
    {"BiasGelu", 6},
    {"QuickGelu", 6},
    {"BiasAdd", 2}};

// Normalisations, per element of the normalised input: LayerNormalization sums x and (x - mean)^2, then
// subtracts, scales by 1/stddev and gamma and adds beta; RMS forms square, sum, scale twice.
const std::map<std::string, double, std::less<>> kNormalisations = {
    {"LayerNormalization", 8},
    {"InstanceNormalization", 8},
    {"GroupNormalization", 8},
    {"MeanVarianceNormalization", 7},
    {"SimplifiedLayerNormalization", 4},
    {"RMSNormalization", 4},
    {"BatchNormalization", 2},  // inference: one scale and one shift per element
    {"LpNormalization", 3}};

double fused_statement_flops(ops::fused::EwOp op) {
  using ops::fused::EwOp;
  switch (op) {
    case EwOp::kCast:
      return 0;
    case EwOp::kClip:
    case EwOp::kLeakyRelu:
      return 2;
    case EwOp::kSigmoid:
      return 4;
    default:
      return 1;
  }
}

}  // namespace

double activation_flops(std::string_view activation) {
  if (activation.empty()) return 0;
  if (activation == "GeluTanh") return 9;  // x^3 (2), scale, add, scale, tanh, add 1, times x, halve
  if (activation == "Gelu") return 5;
  auto it = kElementwise.find(activation);
  return it == kElementwise.end() ? 1 : it->second;
}

std::optional<PerElement> pointwise_flops(const ir::Node& n) {
  const std::string& op = n.op_type;
  const size_t inputs = n.inputs.size();
  if (op == "Gelu") {  // ai.onnx 20 (erf, or tanh with approximate="tanh"), com.microsoft (erf)
    const ir::Attribute* a = n.attr("approximate");
    return PerElement{"elementwise", activation_flops(a && a->s == "tanh" ? "GeluTanh" : "Gelu")};
  }
  if (op == "FastGelu")  // com.microsoft: the tanh form, with an optional bias
    return PerElement{"elementwise", activation_flops("GeluTanh") + (inputs > 1 && !n.inputs[1].empty())};
  if (op == "Sum" || op == "Max" || op == "Min")
    return PerElement{"elementwise", static_cast<double>(inputs > 1 ? inputs - 1 : 1)};
  if (op == "Mean") return PerElement{"elementwise", static_cast<double>(inputs)};
  if (auto it = kElementwise.find(op); it != kElementwise.end()) return PerElement{"elementwise", it->second};
  if (auto it = kNormalisations.find(op); it != kNormalisations.end())
    return PerElement{"normalisation", it->second};
  // com.microsoft SkipLayerNormalization (input, skip, gamma, beta, bias): the skip and bias added first.
  if (op == "SkipLayerNormalization" || op == "SkipSimplifiedLayerNormalization") {
    const double base = op == "SkipLayerNormalization" ? 8 : 4;
    const size_t bias = op == "SkipLayerNormalization" ? 4 : 3;
    return PerElement{"normalisation", base + 1 + (inputs > bias && !n.inputs[bias].empty())};
  }
  if (op == "Softmax" || op == "LogSoftmax")
    return PerElement{"softmax", 5};  // max, subtract, exp, sum, divide
  if (op == "Hardmax") return PerElement{"softmax", 1};
  return std::nullopt;
}

std::optional<double> fused_elementwise_flops(const ir::Node& n) {
  const ir::Attribute* prog = n.attr("program");
  const ir::Attribute* res = n.attr("results");
  if (!prog || !res) return std::nullopt;
  try {
    const ops::fused::Program p = ops::fused::parse_program(prog->s, res->ints, n.inputs.size());
    double f = 0;
    for (const auto& in : p.code) f += fused_statement_flops(in.op);
    return f;
  } catch (const ops::fused::ProgramError&) {
    return std::nullopt;
  }
}

}  // namespace tessera::profiler
