// tessera_accuracy: every floating-point elementwise operator through every kernel path that can run
// it, over its whole domain, compared in ulps with a float64 oracle rounded to the element type.
//
//   tessera_accuracy [--table FILE] [--check] [--filter SUBSTRING] [--per-binade N] [--bench THREADS]
//
// Paths: "reference" (SessionOptions::reference_kernels), "default" (what a session picks: oneDNN,
// Tessera's own vectorised math, or the reference for types the fast kernels do not take), "oneDNN
// eltwise" for the ops the default moved off it (TESSERA_OWN_ELTWISE=off; shown, not enforced),
// "FusedConv post-op" (the activation fused into a 1x1 convolution of weight 1, so the convolution
// itself is exact), "FusedConv post-op, finite sums" (the same on the inputs below 1e30 in magnitude,
// where the kernel fuses oneDNN's post-op instead of applying the activation after: see
// src/backends/cpu/conv_activation.h), "BlockedConv post-op" (the activation of a depthwise 1x1
// convolution of weight 1 over 16 channels in the blocked layout), "BlockedConv own kernel" (the same on
// Tessera's own depthwise kernel, 8 threads, Relu and Clip, AVX-512 only), "BlockedConv own 1x1 kernel"
// (the activation of a 1x1 convolution from one channel to 16 of weight 1 on Tessera's own pointwise
// kernel: the same conditions) and "BiasGelu" (GELU as the post-op
// of an add of a zero bias), and "CUDA" (the GPU's kernel in the model's element type, --precision fp32,
// where a GPU and libtessera_cuda.so are present; skipped otherwise, and for ops the GPU has no kernel
// for). float32 inputs are a
// dense log-spaced sweep of both signs with subnormals, zeros, infinities, NaN and the points near each
// function's zeros and poles; float16 and bfloat16 inputs are every value of the type.
//
// --table writes the markdown table (docs/accuracy.md); --check exits 1 when an enforced row misses
// its bound (the ctest entry `accuracy`).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "accuracy/ulp.h"
#include "backends/cpu/pointwise_conv.h"
#include "ir/builder.h"
#include "runtime/dispatch.h"
#include "runtime/session.h"
#include "util/atomic_file.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;
using namespace tessera::accuracy;

namespace {

using F1 = std::function<double(double)>;
using F2 = std::function<double(double, double)>;

struct OpSpec {
  std::string label;  // the row's name (op and attributes)
  std::string op;
  std::string domain;
  int opset = 17;
  std::vector<ir::Attribute> attrs;
  F1 f1;                        // unary oracle
  F2 f2;                        // binary oracle (second operand from `second`)
  std::vector<double> second;   // values of the second operand of a binary op
  std::vector<double> centres;  // zeros and poles: dense inputs around them
  double bound = 4;             // float32 ulps (enforced on results that are normal or subnormal)
  std::vector<DataType> types = {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16};
  std::string conv_activation;  // also as a FusedConv activation
  std::vector<float> conv_params;
  bool own_eltwise = false;  // the default moved off oneDNN's eltwise: measure that too
  bool bias_gelu = false;    // also as BiasGelu with a zero bias
};

double sigmoid(double x) {
  return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
}
double softplus(double x) {
  return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
}
double gelu(double x) {
  return 0.5 * x * std::erfc(-x / std::numbers::sqrt2);
}
double gelu_tanh(double x) {
  double k = std::sqrt(2 / std::numbers::pi);
  return x / (1 + std::exp(-2 * k * (x + 0.044715 * x * x * x)));  // 1 + tanh z = 2 sigmoid(2 z)
}
double f32(float v) {
  return static_cast<double>(v);
}
ir::Attribute fa(const char* n, float v) {
  return ir::Attribute::of_float(n, v);
}

std::vector<OpSpec> op_specs() {
  const double pi = std::numbers::pi;
  std::vector<OpSpec> s;
  auto unary = [&](std::string op, F1 f, double bound, std::vector<double> centres = {}) -> OpSpec& {
    OpSpec o;
    o.label = op;
    o.op = std::move(op);
    o.f1 = std::move(f);
    o.bound = bound;
    o.centres = std::move(centres);
    s.push_back(std::move(o));
    return s.back();
  };
  // Exact operations: correctly rounded (0 ulp).
  unary(
      "Abs", [](double x) { return std::fabs(x); }, 0);
  unary(
      "Neg", [](double x) { return -x; }, 0);
  unary(
      "Relu", [](double x) { return x < 0 ? 0.0 : x; }, 0)
      .conv_activation = "Relu";
  unary("Floor", [](double x) { return std::floor(x); }, 0, {0.5, 1, 2.5});
  unary("Ceil", [](double x) { return std::ceil(x); }, 0, {0.5, 1, 2.5});
  unary("Round", [](double x) { return std::nearbyint(x); }, 0, {0.5, 1.5, 2.5});
  unary(
      "Sign", [](double x) { return x > 0   ? 1.0
                                    : x < 0 ? -1.0
                                            : x; }, 0);
  unary(
      "Reciprocal", [](double x) { return 1 / x; }, 1);
  unary(
      "Sqrt", [](double x) { return std::sqrt(x); }, 1);
  // Transcendental functions: 4 ulp.
  unary("Exp", [](double x) { return std::exp(x); }, 4, {0, 88.72, -87.33, -103.97}).own_eltwise = true;
  unary("Log", [](double x) { return std::log(x); }, 4, {1}).own_eltwise = true;
  unary("Erf", [](double x) { return std::erf(x); }, 4, {0});
  unary("Sin", [](double x) { return std::sin(x); }, 4, {0, pi, 2 * pi, 100 * pi});
  unary("Cos", [](double x) { return std::cos(x); }, 4, {pi / 2, 3 * pi / 2});
  unary("Tan", [](double x) { return std::tan(x); }, 4, {0, pi, pi / 2});
  unary("Asin", [](double x) { return std::asin(x); }, 4, {0, 1, -1});
  unary("Acos", [](double x) { return std::acos(x); }, 4, {1, -1, 0});
  unary("Atan", [](double x) { return std::atan(x); }, 4, {0});
  unary("Sinh", [](double x) { return std::sinh(x); }, 4, {0});
  unary("Cosh", [](double x) { return std::cosh(x); }, 4, {0});
  unary("Asinh", [](double x) { return std::asinh(x); }, 4, {0});
  unary("Acosh", [](double x) { return std::acosh(x); }, 4, {1});
  unary("Atanh", [](double x) { return std::atanh(x); }, 4, {0, 1, -1});
  {
    auto& o = unary("Tanh", [](double x) { return std::tanh(x); }, 4, {0});
    o.own_eltwise = true;
    o.conv_activation = "Tanh";
  }
  {
    auto& o = unary("Sigmoid", sigmoid, 4, {0, -88, -87.33, -103.28});
    o.own_eltwise = true;
    o.conv_activation = "Sigmoid";
  }
  unary("Softplus", softplus, 4, {0, -20, -30, -88, -103}).own_eltwise = true;
  unary("Softsign", [](double x) { return x / (1 + std::fabs(x)); }, 4, {0});
  unary("Mish", [](double x) { return x * std::tanh(softplus(x)); }, 4, {0}).opset = 18;
  unary("HardSwish", [](double x) { return x * std::max(0.0, std::min(1.0, x / 6 + 0.5)); }, 4, {-3, 3})
      .opset = 14;
  {
    auto& o = unary("Elu", [](double x) { return x >= 0 ? x : f32(0.7f) * std::expm1(x); }, 4, {0});
    o.attrs = {fa("alpha", 0.7f)};
    o.label = "Elu alpha 0.7";
    o.own_eltwise = true;
  }
  {
    auto& o = unary(
        "Selu",
        [](double x) { return x > 0 ? f32(1.0507f) * x : f32(1.0507f) * f32(1.67326f) * std::expm1(x); }, 4,
        {0});
    o.attrs = {fa("alpha", 1.67326f), fa("gamma", 1.0507f)};
  }
  {
    auto& o = unary("Celu", [](double x) { return std::max(0.0, x) + std::min(0.0, std::expm1(x)); }, 4, {0});
    o.attrs = {fa("alpha", 1.0f)};
    o.opset = 12;
  }
  {
    auto& o = unary(
        "LeakyRelu", [](double x) { return x >= 0 ? x : f32(0.2f) * x; }, 1);
    o.attrs = {fa("alpha", 0.2f)};
    o.label = "LeakyRelu alpha 0.2";
    o.own_eltwise = true;
    o.conv_activation = "LeakyRelu";
    o.conv_params = {0.2f};
  }
  {
    auto& o = unary(
        "HardSigmoid",
        [](double x) { return std::isnan(x) ? x : std::max(0.0, std::min(1.0, f32(0.25f) * x + f32(0.4f))); },
        2, {-1.6, 2.4});
    o.attrs = {fa("alpha", 0.25f), fa("beta", 0.4f)};
    o.label = "HardSigmoid 0.25 0.4";
    o.own_eltwise = true;
    o.conv_activation = "HardSigmoid";
    o.conv_params = {0.25f, 0.4f};
  }
  {
    // Clip as an activation (ReLU6-like): the standalone op keeps NaN, and so must the convolutions.
    auto& o = unary("Clip", [](double x) { return std::isnan(x) ? x : std::max(-1.5, std::min(6.0, x)); }, 0,
                    {-1.5, 6});
    o.opset = 6;
    o.attrs = {fa("min", -1.5f), fa("max", 6.f)};
    o.label = "Clip -1.5 6";
    o.conv_activation = "Clip";
    o.conv_params = {-1.5f, 6.f};
  }
  {
    auto& o = unary("ThresholdedRelu", [](double x) { return x > 1 ? x : 0.0; }, 0, {1});
    o.opset = 10;
  }
  {
    // NaN compares false both ways: 0, as the spec's reference computes it.
    auto& o = unary("Shrink", [](double x) { return x < -1.5 ? x + 0.5 : (x > 1.5 ? x - 0.5 : 0.0); }, 0,
                    {-1.5, 1.5});
    o.attrs = {fa("bias", 0.5f), fa("lambd", 1.5f)};
    o.label = "Shrink 0.5 1.5";
  }
  {
    auto& o = unary("Swish", [](double x) { return x * sigmoid(x); }, 4, {0, -50, -88, -103});
    o.opset = 24;
  }
  {
    auto& o = unary("Gelu", gelu, 4, {0, -5, -10});
    o.opset = 20;
    o.own_eltwise = true;
  }
  {
    auto& o = unary("Gelu", gelu_tanh, 4, {0, -5});
    o.opset = 20;
    o.attrs = {ir::Attribute::of_string("approximate", "tanh")};
    o.label = "Gelu tanh";
    o.own_eltwise = true;
  }
  {
    auto& o = unary("Gelu", gelu, 4, {0, -5, -10});
    o.domain = "com.microsoft";
    o.label = "com.microsoft Gelu";
    o.bias_gelu = true;
    o.own_eltwise = true;
  }
  {
    auto& o = unary("FastGelu", gelu_tanh, 4, {0, -5});
    o.domain = "com.microsoft";
    o.label = "com.microsoft FastGelu";
    o.own_eltwise = true;
  }
  {
    auto& o = unary("QuickGelu", [](double x) { return x * sigmoid(f32(1.702f) * x); }, 4, {0, -50});
    o.domain = "com.microsoft";
    o.label = "com.microsoft QuickGelu";
    o.own_eltwise = true;
  }
  // Binary operations, the second operand from a small set over the line.
  const std::vector<double> ys = {-3.5, -1, -0.5, 0, 0.1, 0.5, 1, 2, 3, 7.25, 1e-30, -1e30, 1e38};
  auto binary = [&](std::string op, F2 f, double bound, std::vector<double> second = {}) -> OpSpec& {
    OpSpec o;
    o.label = op;
    o.op = std::move(op);
    o.f2 = std::move(f);
    o.bound = bound;
    o.second = second.empty() ? ys : std::move(second);
    s.push_back(std::move(o));
    return s.back();
  };
  binary(
      "Add", [](double a, double b) { return a + b; }, 0);
  binary(
      "Sub", [](double a, double b) { return a - b; }, 0);
  binary(
      "Mul", [](double a, double b) { return a * b; }, 0);
  binary(
      "Div", [](double a, double b) { return a / b; }, 0);
  binary(
      "Max", [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }, 0);
  binary(
      "Min", [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }, 0);
  binary("Pow", [](double a, double b) { return std::pow(a, b); }, 4,
         {-3, -2, -1, -0.5, 0, 0.5, 1, 2, 3, 2.5, 1.0 / 3, 10});
  {
    auto& o = binary("Mod", [](double a, double b) { return std::fmod(a, b); }, 0, {-3.5, -1, 0.5, 3, 7.25});
    o.attrs = {ir::Attribute::of_int("fmod", 1)};
    o.label = "Mod fmod";
    o.opset = 13;
  }
  binary("PRelu", [](double a, double b) { return a < 0 ? a * b : a; }, 0, {0.25, -0.5, 2});
  // The variadic ones with two inputs: Sum rounds once; Mean sums in double, so it does not overflow
  // where the mean is finite, and rounds once.
  binary(
      "Sum", [](double a, double b) { return a + b; }, 0)
      .opset = 13;
  binary(
      "Mean", [](double a, double b) { return (a + b) / 2; }, 0)
      .opset = 13;
  return s;
}

// One row of the table.
struct Row {
  std::string label, path, kernel, type;
  int64_t count = 0, max_ulps = 0, special_wrong = 0, flushed = 0, zero_sign = 0;
  bool unsupported = false;  // the element type is not in the op's schema
  double p99 = 0, mean = 0;
  double bound = 0;
  bool enforced = true;
  std::string worst_input, note;
  bool ok() const { return max_ulps <= bound && special_wrong == 0 && flushed == 0; }
};

std::string fmt_value(double v) {
  return fmt::format("{:.9g}", v);
}

// How a path runs the node.
enum class Path {
  kReference,
  kDefault,
  kOneDnn,
  kFusedConv,
  kFusedConvFinite,
  kBlockedConv,
  kOwnConv,
  kOwnPointwise,
  kBiasGelu,
  kCuda
};

const char* path_name(Path p) {
  switch (p) {
    case Path::kReference:
      return "reference";
    case Path::kDefault:
      return "default";
    case Path::kOneDnn:
      return "oneDNN eltwise";
    case Path::kFusedConv:
      return "FusedConv post-op";
    case Path::kFusedConvFinite:
      return "FusedConv post-op, finite sums";
    case Path::kBlockedConv:
      return "BlockedConv post-op";
    case Path::kOwnConv:
      return "BlockedConv own kernel";
    case Path::kOwnPointwise:
      return "BlockedConv own 1x1 kernel";
    case Path::kBiasGelu:
      return "BiasGelu";
    case Path::kCuda:
      return "CUDA";
  }
  return "?";
}

// Why the CUDA path cannot run here (no GPU, no libtessera_cuda.so); empty when it can. Found once, by
// building a one-node session on the GPU.
const std::string& cuda_unavailable() {
  static const std::string why = [] {
    ir::Model m;
    m.ir_version = 9;
    m.opset_imports = {{"", 17}};
    ir::GraphBuilder b(m.graph);
    auto x = b.input("x", ir::Type::tensor(DataType::kFloat, ir::Shape{ir::Dim::of(4)}));
    b.output(b.node("Relu", {x}), ir::Type::tensor(DataType::kFloat));
    try {
      rt::Session s(m, {.optimization = rt::OptLevel::kNone, .backend = "cuda"});
      return std::string();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  }();
  return why;
}

// The one-node model of the op on n elements of dtype (binary ops: two inputs of n elements).
ir::Model one_node(const OpSpec& o, Path path, DataType dt, int64_t n) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", o.opset}, {"com.microsoft", 1}};
  ir::GraphBuilder b(m.graph);
  auto dims = [](std::vector<int64_t> d) {
    ir::Shape s;
    for (int64_t v : d) s.push_back(ir::Dim::of(v));
    return s;
  };
  if (path == Path::kBlockedConv || path == Path::kOwnConv) {
    auto x = b.input("x", ir::Type::tensor(dt, dims({1, 1, 1, n / 16, 16})));
    auto w = b.constant_floats("w", {16, 1, 1, 1}, 1.0f);
    std::vector<ir::Attribute> attrs = {ir::Attribute::of_string("activation", o.conv_activation),
                                        ir::Attribute::of_int("group", 16),
                                        ir::Attribute::of_int("block", 16)};
    if (!o.conv_params.empty()) attrs.push_back(ir::Attribute::of_floats("activation_params", o.conv_params));
    if (o.conv_activation == "Relu" || o.conv_activation == "Tanh" || o.conv_activation == "Sigmoid")
      attrs.erase(attrs.begin() + 3, attrs.end());
    m.opset_imports.push_back({"com.tessera", 1});
    b.output(b.nodes("BlockedConv", {x, w}, attrs, "node", 1, "com.tessera")[0], ir::Type::tensor(dt));
    return m;
  }
  if (path == Path::kOwnPointwise) {
    // A 1x1 convolution from one input channel to 16 of weight 1: each output lane is x * 1 + 0 * 0 over
    // the zero padding lanes of the input block (fed as zeros), so exactly x before the activation.
    auto x = b.input("x", ir::Type::tensor(dt, dims({1, 1, 1, n, 16})));
    auto w = b.constant_floats("w", {16, 1, 1, 1}, 1.0f);
    std::vector<ir::Attribute> attrs = {ir::Attribute::of_string("activation", o.conv_activation),
                                        ir::Attribute::of_int("block", 16)};
    if (!o.conv_params.empty()) attrs.push_back(ir::Attribute::of_floats("activation_params", o.conv_params));
    if (o.conv_activation == "Relu") attrs.resize(2);
    m.opset_imports.push_back({"com.tessera", 1});
    b.output(b.nodes("BlockedConv", {x, w}, attrs, "node", 1, "com.tessera")[0], ir::Type::tensor(dt));
    return m;
  }
  if (path == Path::kFusedConv || path == Path::kFusedConvFinite) {
    auto x = b.input("x", ir::Type::tensor(dt, dims({1, 1, 1, n})));
    auto w = b.constant_floats("w", {1, 1, 1, 1}, 1.0f);
    std::vector<ir::Attribute> attrs = {ir::Attribute::of_string("activation", o.conv_activation)};
    if (!o.conv_params.empty()) attrs.push_back(ir::Attribute::of_floats("activation_params", o.conv_params));
    if (o.conv_activation == "Relu" || o.conv_activation == "Tanh" || o.conv_activation == "Sigmoid")
      attrs.resize(1);
    b.output(b.nodes("FusedConv", {x, w}, attrs, "node", 1, "com.microsoft")[0], ir::Type::tensor(dt));
    return m;
  }
  if (path == Path::kBiasGelu) {
    auto x = b.input("x", ir::Type::tensor(dt, dims({n / 16, 16})));
    auto bias = b.constant_floats("bias", {16}, 0.0f);
    b.output(b.nodes("BiasGelu", {x, bias}, {}, "node", 1, "com.microsoft")[0], ir::Type::tensor(dt));
    return m;
  }
  std::vector<std::string> ins = {b.input("x", ir::Type::tensor(dt, dims({n})))};
  if (o.f2) ins.push_back(b.input("y", ir::Type::tensor(dt, dims({n}))));
  b.output(b.nodes(o.op, ins, o.attrs, "node", 1, o.domain)[0], ir::Type::tensor(dt));
  return m;
}

template <class T>
DataType dtype_of() {
  if constexpr (std::is_same_v<T, float>)
    return DataType::kFloat;
  else if constexpr (std::is_same_v<T, rt::Float16>)
    return DataType::kFloat16;
  else
    return DataType::kBFloat16;
}

template <class T>
std::vector<T> inputs_of(const OpSpec& o, int per_binade) {
  std::vector<T> xs;
  if constexpr (std::is_same_v<T, float>) {
    xs = float_sweep(o.f2 ? std::max(per_binade / 8, 4) : per_binade, o.centres);
  } else {
    xs = all_values<T>();
  }
  return xs;
}

template <class T>
Row measure(const OpSpec& o, Path path, int per_binade) {
  Row row;
  row.label = o.label;
  row.path = path_name(path);
  row.type = std::string(ir::dtype_name(dtype_of<T>()));
  row.bound = std::is_same_v<T, float> ? o.bound : std::min(o.bound, 1.0);
  std::vector<T> xs = inputs_of<T>(o, per_binade);
  std::vector<T> ys;
  if (o.f2) {
    std::vector<T> a;
    for (T x : xs)
      for (double y : o.second) {
        a.push_back(x);
        ys.push_back(round_to<T>(y));
      }
    xs = std::move(a);
  }
  if (path == Path::kFusedConvFinite)
    std::erase_if(xs, [](T x) { return !(std::fabs(as_double(x)) < 1e30); });
  if (path == Path::kBiasGelu || path == Path::kBlockedConv || path == Path::kOwnConv)
    while (xs.size() % 16) xs.push_back(round_to<T>(0.0));
  const int64_t n = static_cast<int64_t>(xs.size());
  // The own depthwise and 1x1 kernels run from 8 threads on (dnnl_blocked_kernel.cpp, own_kernel_wanted).
  const bool own = path == Path::kOwnConv || path == Path::kOwnPointwise;
  rt::SessionOptions opts{.optimization = rt::OptLevel::kNone, .threads = own ? 8 : 2, .profile = true};
  opts.reference_kernels = path == Path::kReference;
  if (path == Path::kCuda) {
    // The GPU kernel in the model's own element type (no lowering to float16), run node by node.
    opts.backend = "cuda";
    opts.precision = tessera::passes::Precision::kFp32;
    opts.device_graphs = false;
  }
  if (path == Path::kOneDnn) setenv("TESSERA_OWN_ELTWISE", "off", 1);
  std::vector<rt::Value> out;
  try {
    rt::Session session(one_node(o, path, dtype_of<T>(), n), opts);
    rt::Shape shape = path == Path::kFusedConv || path == Path::kFusedConvFinite ? rt::Shape{1, 1, 1, n}
                      : path == Path::kBlockedConv || path == Path::kOwnConv ? rt::Shape{1, 1, 1, n / 16, 16}
                      : path == Path::kBiasGelu                              ? rt::Shape{n / 16, 16}
                                                                             : rt::Shape{n};
    std::vector<std::pair<std::string, rt::Value>> feeds = {
        {"x", rt::Value(rt::Tensor::from_vector<T>(dtype_of<T>(), shape, xs))}};
    if (path == Path::kOwnPointwise) {  // the value in lane 0 of each pixel's block, zero padding after
      std::vector<T> lanes(static_cast<size_t>(n) * 16, round_to<T>(0.0));
      for (int64_t i = 0; i < n; ++i) lanes[static_cast<size_t>(i) * 16] = xs[static_cast<size_t>(i)];
      feeds[0].second = rt::Value(rt::Tensor::from_vector<T>(dtype_of<T>(), {1, 1, 1, n, 16}, lanes));
    }
    if (o.f2) feeds.emplace_back("y", rt::Value(rt::Tensor::from_vector<T>(dtype_of<T>(), shape, ys)));
    out = session.run(feeds);
    // The node's own event (a GPU session also lists the copies to and from the device).
    for (const rt::NodeEvent& ev : session.last_stats().events) {
      if (ev.node_name != "node") continue;
      row.kernel = ev.kernel + (ev.path.empty() ? "" : " (" + ev.path + ")");
      if (path == Path::kCuda && ev.backend != "cuda") {  // no GPU kernel: the CPU ran it, measured above
        row.unsupported = true;
        row.note = "no CUDA kernel (placed on " + ev.device + ")";
        return row;
      }
    }
  } catch (const std::exception& e) {
    unsetenv("TESSERA_OWN_ELTWISE");
    row.unsupported = std::string(e.what()).find("does not type-check") != std::string::npos;
    row.note = std::string("cannot run: ") + e.what();
    row.special_wrong = 1;
    return row;
  }
  unsetenv("TESSERA_OWN_ELTWISE");
  const T* all = out[0].tensor().data<T>();
  // The 1x1 path's 16 output lanes of a pixel are all x's; the others give one output per input.
  const int64_t stride = path == Path::kOwnPointwise ? 16 : 1;
  std::vector<T> got(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    got[static_cast<size_t>(i)] = all[i * stride];
    for (int64_t lane = 1; lane < stride; ++lane)
      if (std::memcmp(&all[i * stride + lane], &all[i * stride], sizeof(T)) != 0) {
        row.note = fmt::format("pixel {}: output lane {} differs from lane 0", i, lane);
        row.special_wrong = 1;
        return row;
      }
  }
  std::vector<int64_t> ulps;
  ulps.reserve(static_cast<size_t>(n));
  double worst_x = 0, worst_y = 0;
  for (int64_t i = 0; i < n; ++i) {
    double x = as_double(xs[static_cast<size_t>(i)]);
    double oracle = o.f2 ? o.f2(x, as_double(ys[static_cast<size_t>(i)])) : o.f1(x);
    Comparison c = compare(got[i], oracle);
    if (c.special_wrong || c.flushed) {
      if (row.special_wrong + row.flushed == 0)
        row.note = fmt::format("x={}{}: got {}, want {}", fmt_value(x),
                               o.f2 ? ", y=" + fmt_value(as_double(ys[static_cast<size_t>(i)])) : "",
                               fmt_value(as_double(got[i])), fmt_value(as_double(round_to<T>(oracle))));
      row.special_wrong += c.special_wrong;
      row.flushed += c.flushed;
    }
    row.zero_sign += c.zero_sign_wrong;
    if (c.expected == Kind::kNaN || c.expected == Kind::kInf) continue;
    ulps.push_back(c.ulps);
    if (c.ulps > row.max_ulps) {
      row.max_ulps = c.ulps;
      worst_x = x;
      worst_y = o.f2 ? as_double(ys[static_cast<size_t>(i)]) : 0;
    }
  }
  row.count = n;
  if (!ulps.empty()) {
    std::sort(ulps.begin(), ulps.end());
    row.p99 = static_cast<double>(ulps[ulps.size() * 99 / 100]);
    double sum = 0;
    for (int64_t u : ulps) sum += static_cast<double>(u);
    row.mean = sum / static_cast<double>(ulps.size());
  }
  if (row.max_ulps > 0) row.worst_input = fmt_value(worst_x) + (o.f2 ? ", " + fmt_value(worst_y) : "");
  return row;
}

std::vector<Path> paths_of(const OpSpec& o, DataType dt) {
  std::vector<Path> p = {Path::kReference, Path::kDefault};
  if (cuda_unavailable().empty()) p.push_back(Path::kCuda);
  if (dt != DataType::kFloat) return p;
  if (o.own_eltwise) p.push_back(Path::kOneDnn);
  if (!o.conv_activation.empty()) {
    p.push_back(Path::kFusedConv);
    p.push_back(Path::kFusedConvFinite);
    p.push_back(Path::kBlockedConv);
    // Tessera's own depthwise and 1x1 kernels take the clips (Relu, Clip) on AVX-512 CPUs.
    if ((o.conv_activation == "Relu" || o.conv_activation == "Clip") && tessera::cpu::pointwise_supported()) {
      p.push_back(Path::kOwnConv);
      p.push_back(Path::kOwnPointwise);
    }
  }
  if (o.bias_gelu) p.push_back(Path::kBiasGelu);
  return p;
}

// Rows that miss their bound for a stated reason: shown, not enforced (docs/accuracy.md explains).
std::string known_reason(const Row& r) {
  if (r.path == "oneDNN eltwise") return "not used by default (TESSERA_OWN_ELTWISE=off: oneDNN alone)";
  return {};
}

std::string table(const std::vector<Row>& rows, int per_binade) {
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::string t = fmt::format(
      "| op | path | kernel | type | inputs | max ulp | p99 ulp | mean ulp | bound | special wrong | flushed "
      "| zero sign | worst input / note |\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Row& r : rows) {
    std::string status = r.ok() ? "" : (r.enforced ? " **over**" : " (not enforced)");
    t += fmt::format("| {} | {} | {} | {} | {} | {}{} | {:.0f} | {:.3f} | {} | {} | {} | {} | {} |\n",
                     r.label, r.path, r.kernel, r.type, r.count, r.max_ulps, status, r.p99, r.mean, r.bound,
                     r.special_wrong, r.flushed, r.zero_sign, r.note.empty() ? r.worst_input : r.note);
  }
  return fmt::format(
      "# Numerical accuracy of the elementwise kernels\n\n"
      "Written by `build/tests/tessera_accuracy --table docs/accuracy.md` ({}, {}; `--per-binade {}`). "
      "Every floating-point elementwise operator runs as a one-node model through every kernel path that can "
      "run it, and each result is compared with a float64 oracle rounded to the element type, in ulps (units "
      "in the last place: adjacent values of the type are 1 apart).\n\n"
      "- **Inputs.** float32: every binade of both signs ({} values each, evenly spaced with a seeded "
      "jitter), the subnormals, +-0, +-inf, NaN, +-FLT_MAX, and the 64 floats on either side of each "
      "function's zeros and poles (1 for Log, 0 for Softplus, -88 for Sigmoid, pi/2 for Tan...). "
      "float16 and bfloat16: every one of the 65,536 values. Binary ops: those inputs against a set of "
      "second operands over the line.\n"
      "- **Paths.** `reference`: the reference kernels (`SessionOptions::reference_kernels`); `default`: "
      "what "
      "a session runs (oneDNN, Tessera's own vectorised math (`own avx512`/`own avx2`), or the reference "
      "kernel for what the fast kernels do not take); `oneDNN eltwise`: oneDNN 2.6's version of the ops "
      "the default moved to the own math or corrects (`TESSERA_OWN_ELTWISE=off`, shown for comparison, not "
      "used); "
      "`FusedConv post-op`: the activation fused into a 1x1 convolution of weight 1 (exact, so the "
      "activation is what is measured); `FusedConv post-op, finite sums`: the same on the inputs below "
      "1e30 in magnitude, where oneDNN's post-op is fused (elsewhere Relu, Clip and HardSigmoid run after "
      "the convolution, whose sums could be NaN, and Sigmoid always does: "
      "src/backends/cpu/conv_activation.h); `BlockedConv post-op`: the activation of a depthwise 1x1 "
      "convolution of weight 1 over 16 channels in the blocked layout (what the layout pass makes of "
      "Conv + activation); `BlockedConv own kernel`: the same convolution on Tessera's own depthwise kernel "
      "(its clip epilogue: Relu and Clip; sessions of 8 threads or more on AVX-512 CPUs take it); "
      "`BiasGelu`: the GELU as oneDNN's post-op of a zero-bias add; `CUDA`: the "
      "GPU's kernel in the model's element type (`--backend cuda --precision fp32`), rows present only "
      "where a GPU was (on the GPU test machine: `bash scripts/gpu-check.sh OUT accuracy`; its table is "
      "kept in docs/accuracy-h100.md), for the ops the GPU has a kernel for.\n"
      "- **Columns.** max ulp over results that are finite in the oracle (normal or subnormal); p99 and "
      "mean ulp; *special wrong*: NaN, an infinity or a zero's sign where the oracle has another; "
      "*flushed*: a subnormal result returned as zero; *zero sign*: +0 for -0 or the reverse (counted, "
      "not enforced: ONNX rarely says which).\n"
      "- **Bounds** (enforced by ctest `accuracy`, `tessera_accuracy --check --per-binade 64`): 0 ulp for "
      "exact operations (Abs, Neg, Relu, Floor, Ceil, Round, Add, Sub, Mul, Div, Min, Max, Mod, Shrink, and "
      "Sum and Mean of two), 1 ulp for "
      "Sqrt and Reciprocal, 4 ulp for float32 transcendental functions, 1 ulp for every float16 and "
      "bfloat16 result (they compute in float32 or double and round once), with no special value wrong "
      "and nothing flushed. A row marked *(not enforced)* states its reason.\n\n{}",
      date, cuda_unavailable().empty() ? "this CPU and GPU" : "this CPU", per_binade, per_binade, t);
}

// --bench: each op the default runs on the own math (and the GELUs with their fix-up) against oneDNN's
// eltwise (TESSERA_OWN_ELTWISE=off), on a BERT-base FFN activation [1, 128, 3072] and a MobileNetV2
// one [1, 32, 112, 112]: the median of 50 runs of the one-node model.
void bench(int threads) {
  const std::vector<std::pair<std::string, rt::Shape>> shapes = {{"[1,128,3072]", {1, 128, 3072}},
                                                                 {"[1,32,112,112]", {1, 32, 112, 112}}};
  fmt::print("{:<26} {:<16} {:>12} {:>12} {:>8}  ({} threads, median of 50 runs)\n", "op", "shape", "own ms",
             "oneDNN ms", "ratio", threads);
  for (const OpSpec& o : op_specs()) {
    if (!o.own_eltwise && o.label.find("Gelu") == std::string::npos) continue;
    for (const auto& [name, shape] : shapes) {
      int64_t n = rt::shape_numel(shape);
      std::mt19937 rng(1);
      std::uniform_real_distribution<float> d(-4.0f, 4.0f);
      std::vector<float> xs(static_cast<size_t>(n));
      for (auto& v : xs) v = o.op == "Log" ? std::fabs(d(rng)) + 1e-3f : d(rng);
      double ms[2] = {0, 0};
      for (int side = 0; side < 2; ++side) {
        if (side == 1) setenv("TESSERA_OWN_ELTWISE", "off", 1);
        rt::SessionOptions opts{.optimization = rt::OptLevel::kNone, .threads = threads};
        rt::Session s(one_node(o, Path::kDefault, DataType::kFloat, n), opts);
        unsetenv("TESSERA_OWN_ELTWISE");
        std::vector<std::pair<std::string, rt::Value>> feeds = {
            {"x", rt::Value(rt::Tensor::from_vector<float>(DataType::kFloat, {n}, xs))}};
        if (o.f2) continue;
        for (int w = 0; w < 5; ++w) s.run(feeds);
        std::vector<double> t;
        for (int r = 0; r < 50; ++r) {
          auto t0 = std::chrono::steady_clock::now();
          s.run(feeds);
          t.push_back(
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(t.begin(), t.end());
        ms[side] = t[t.size() / 2];
      }
      fmt::print("{:<26} {:<16} {:>12.3f} {:>12.3f} {:>8.2f}\n", o.label, name, ms[0], ms[1], ms[0] / ms[1]);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string table_file, filter;
  bool check = false;
  int per_binade = 256;
  int bench_threads = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        fmt::print(stderr, "tessera_accuracy: {} needs a value\n", a);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--table") {
      table_file = value();
    } else if (a == "--check") {
      check = true;
    } else if (a == "--bench") {
      bench_threads = std::atoi(value().c_str());
      if (bench_threads < 1) {
        fmt::print(stderr, "tessera_accuracy: --bench needs a thread count\n");
        return 2;
      }
    } else if (a == "--filter") {
      filter = value();
    } else if (a == "--per-binade") {
      per_binade = std::atoi(value().c_str());
      if (per_binade < 1 || per_binade > 100000) {
        fmt::print(stderr, "tessera_accuracy: --per-binade must be 1..100000\n");
        return 2;
      }
    } else {
      fmt::print(stderr,
                 "usage: tessera_accuracy [--table FILE] [--check] [--filter SUBSTRING] [--per-binade N] "
                 "[--bench THREADS]\n");
      return 2;
    }
  }
  if (bench_threads) {
    bench(bench_threads);
    return 0;
  }
  if (!cuda_unavailable().empty()) fmt::print("CUDA path skipped: {}\n", cuda_unavailable());
  std::vector<Row> rows;
  for (const OpSpec& o : op_specs()) {
    if (!filter.empty() && o.label.find(filter) == std::string::npos) continue;
    for (DataType dt : o.types) {
      for (Path p : paths_of(o, dt)) {
        Row r = dt == DataType::kFloat     ? measure<float>(o, p, per_binade)
                : dt == DataType::kFloat16 ? measure<rt::Float16>(o, p, per_binade)
                                           : measure<rt::BFloat16>(o, p, per_binade);
        if (r.unsupported) {  // e.g. bfloat16 where the op's schema has no bfloat16
          if (r.path == path_name(Path::kCuda)) fmt::print("{:<26} CUDA {:<8} {}\n", r.label, r.type, r.note);
          continue;
        }
        std::string reason = known_reason(r);
        if (!reason.empty()) {
          r.enforced = false;
          if (!r.ok()) r.note = reason + (r.note.empty() ? "" : "; " + r.note);
        }
        fmt::print(
            "{:<26} {:<18} {:<8} {:<30} max {:>8} ulp  p99 {:>4.0f}  special {:>5}  flushed {:>5}  zero sign "
            "{:>3}  "
            "worst {}{}\n",
            r.label, r.path, r.type, r.kernel, r.max_ulps, r.p99, r.special_wrong, r.flushed, r.zero_sign,
            r.worst_input, r.ok() ? "" : (r.enforced ? "  OVER " + r.note : "  (not enforced) " + r.note));
        rows.push_back(std::move(r));
      }
    }
  }
  if (!table_file.empty()) {
    std::string text = table(rows, per_binade);
    tessera::util::write_file_atomically(table_file, std::as_bytes(std::span(text)));
  }
  int over = 0;
  for (const Row& r : rows) over += r.enforced && !r.ok();
  fmt::print("{} rows, {} over their bound\n", rows.size(), over);
  return check && over ? 1 : 0;
}
