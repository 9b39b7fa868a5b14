// The CUDA backend's further elementwise kernels (activations with attributes, trigonometric and rounding
// functions, Clip, PRelu, Mod, variadic Sum/Mean/Max/Min) against the CPU's reference kernels, in
// float32, float16 and bfloat16, over inputs that include the hard regions and the special values.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cuda_test_util.h"
#include "ir/builder.h"
#include "runtime/backend.h"
#include "runtime/backend_loader.h"
#include "runtime/half.h"
#include "runtime/session.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::Attribute;
using ir::DataType;
using ir::Dim;
using ir::Type;

namespace {

using cuda_test::expect_close;
using cuda_test::floats;

class CudaMath : public cuda_test::CudaBackendTest {};

std::vector<float> hard_inputs() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          0.5f,
                          -0.5f,
                          1.5f,
                          2.5f,
                          -2.5f,
                          1e-30f,
                          -1e-30f,
                          1e-40f,
                          88.0f,
                          -88.0f,
                          89.0f,
                          -104.0f,
                          20.0f,
                          -20.0f,
                          1e30f,
                          -1e30f,
                          inf,
                          -inf,
                          std::numeric_limits<float>::quiet_NaN()};
  for (int i = -400; i <= 400; ++i) v.push_back(static_cast<float>(i) * 0.0317f);
  for (int e = -20; e <= 20; ++e) v.push_back(std::ldexp(1.37f, e));
  for (int e = -20; e <= 20; ++e) v.push_back(-std::ldexp(1.37f, e));
  return v;
}

struct Node {
  std::string op;
  std::vector<rt::Tensor> inputs;  // undefined: the optional input is left out
  std::vector<Attribute> attrs = {};
  int opset = 20;
};

// Runs `n` on the GPU and with the reference kernels; compares within `ulps` and checks placement.
void expect_matches(const Node& n, double ulps) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", n.opset}};
  ir::GraphBuilder b(m.graph);
  std::vector<std::string> ins;
  std::vector<std::pair<std::string, rt::Value>> feeds;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    if (!n.inputs[k].defined()) {
      ins.emplace_back();
      continue;
    }
    ir::Shape s;
    for (int64_t d : n.inputs[k].shape()) s.push_back(Dim::of(d));
    std::string name = fmt::format("x{}", k);
    ins.push_back(b.input(name, Type::tensor(n.inputs[k].dtype(), s)));
    feeds.emplace_back(name, rt::Value(n.inputs[k]));
  }
  b.output(b.node(n.op, ins, n.attrs, "op"));
  // float32 precision: the kernels are compared in the element types the inputs have (float16 and
  // bfloat16 ones are fed as such), not lowered to float16 by the session.
  rt::Session gpu(m, {.optimization = rt::OptLevel::kNone,
                      .backend = "cuda",
                      .profile = true,
                      .precision = tessera::passes::Precision::kFp32});
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
  auto g = gpu.run(feeds)[0].tensor();
  auto r = ref.run(feeds)[0].tensor();
  const std::string what = fmt::format("{} {}", n.op, ir::dtype_name(n.inputs[0].dtype()));
  bool on_gpu = false;
  for (const auto& ev : gpu.last_stats().events) on_gpu |= ev.node_name == "op" && ev.backend == "cuda";
  EXPECT_TRUE(on_gpu) << what << " did not run on the GPU";
  expect_close(g, r, ulps, what);
}

const DataType kFloatTypes[] = {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16};

// Both sides compute in double (the reference for activations) or the GPU in double and the reference
// in float with a function within an ulp (trigonometry): 2 ulp of float32; float16/bfloat16 round the
// same float32 value, 1 ulp.
double tolerance(DataType t) {
  return t == DataType::kFloat ? 2 : 1;
}

}  // namespace

TEST_F(CudaMath, ActivationsWithAttributes) {
  auto x = hard_inputs();
  const rt::Shape shape{static_cast<int64_t>(x.size())};
  const std::vector<Node> nodes = {
      {"LeakyRelu", {}, {Attribute::of_float("alpha", 0.1f)}},
      {"Elu", {}, {Attribute::of_float("alpha", 0.7f)}},
      {"Selu", {}},
      {"Celu", {}, {Attribute::of_float("alpha", 1.3f)}},
      {"HardSigmoid", {}, {Attribute::of_float("alpha", 0.25f), Attribute::of_float("beta", 0.4f)}},
      {"HardSwish", {}},
      {"Softplus", {}},
      {"Softsign", {}},
      {"Gelu", {}},
      {"Gelu", {}, {Attribute::of_string("approximate", "tanh")}},
      {"Mish", {}},
      {"ThresholdedRelu", {}, {Attribute::of_float("alpha", 0.3f)}},
      {"Shrink", {}, {Attribute::of_float("bias", 0.2f), Attribute::of_float("lambd", 0.6f)}},
  };
  for (DataType t : kFloatTypes) {
    for (Node n : nodes) {
      if (n.op == "Shrink" && t == DataType::kBFloat16) continue;  // Shrink has no bfloat16
      n.inputs = {floats(t, shape, x)};
      n.opset = 28;  // bfloat16 from 22, Celu's float16/bfloat16 from 28
      expect_matches(n, tolerance(t));
    }
    expect_matches({"Swish", {floats(t, shape, x)}, {Attribute::of_float("alpha", 0.8f)}, 24}, tolerance(t));
  }
}

TEST_F(CudaMath, TrigonometryAndRounding) {
  auto x = hard_inputs();
  const rt::Shape shape{static_cast<int64_t>(x.size())};
  for (DataType t : kFloatTypes)
    for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh",
                           "Atanh", "Floor", "Ceil", "Round", "Sign"})
      expect_matches({op, {floats(t, shape, x)}, {}, 22}, tolerance(t));  // bfloat16 from 22
}

TEST_F(CudaMath, ClipByAttributesAndInputs) {
  auto x = hard_inputs();
  const rt::Shape shape{static_cast<int64_t>(x.size())};
  for (DataType t : kFloatTypes) {
    rt::Tensor in = floats(t, shape, x);
    rt::Tensor lo = floats(t, {}, {-0.75f}), hi = floats(t, {}, {2.5f});
    expect_matches({"Clip", {in, lo, hi}}, 0);
    expect_matches({"Clip", {in, rt::Tensor(), hi}}, 0);
    expect_matches({"Clip", {in, lo}}, 0);
    expect_matches({"Clip", {in}}, 0);
    if (t != DataType::kBFloat16)  // Clip-6 has no bfloat16
      expect_matches({"Clip", {in}, {Attribute::of_float("min", -1.0f), Attribute::of_float("max", 3.0f)}, 6},
                     0);
  }
}

TEST_F(CudaMath, PReluModAndVariadic) {
  std::vector<float> a(3 * 40 * 50), s(40), d(40 * 50);
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(static_cast<float>(i) * 0.37f) * 9.0f;
  for (size_t i = 0; i < s.size(); ++i) s[i] = 0.05f * static_cast<float>(i) - 0.5f;
  for (size_t i = 0; i < d.size(); ++i) d[i] = (i % 2 ? 1.0f : -1.0f) * (0.5f + static_cast<float>(i % 7));
  for (DataType t : kFloatTypes) {
    rt::Tensor x = floats(t, {3, 40, 50}, a);
    expect_matches({"PRelu", {x, floats(t, {40, 1}, s)}}, 0);
    rt::Tensor div = floats(t, {40, 50}, d);
    expect_matches({"Mod", {x, div}, {Attribute::of_int("fmod", 1)}}, 0);
    expect_matches({"Mod", {x, div}, {}, 28}, 0);  // fmod=0 on floats from 28
    rt::Tensor y = floats(t, {40, 1}, s), z = floats(t, {1, 40, 50}, d);
    for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
      expect_matches({op, {x, y, z}}, 0);
      expect_matches({op, {x}}, 0);
      expect_matches({op, {y, x, z, x, y}}, 0);
    }
  }
}
