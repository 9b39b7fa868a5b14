// The fuse_matmul_bias_gelu rule (layout level, CUDA targets): a linear layer over [B, S, E] followed by
// the tanh GELU, written as GPT-2's export writes it (0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) with
// Pow), in another order (x * sigmoid-like halves: 0.5 * x first, x^3 as x*x*x), or as ONNX Gelu with
// approximate = "tanh", becomes one com.tessera MatMulBiasGelu; the erf GELU (decomposed, or Gelu without
// approximate) and a chain whose inner value is read elsewhere do not. Each optimised model (CPU kernels
// standing in for the GPU's) must compute what the original does on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "ir/builder.h"
#include "passes/pipeline.h"
#include "runtime/pass_target.h"
#include "runtime/session.h"
#include "runtime/value_io.h"

namespace tessera::passes {
namespace {

using ir::Attribute;
using ir::DataType;
using ir::Dim;
using ir::GraphBuilder;

constexpr int64_t kB = 2, kS = 9, kE = 24, kF = 40;

ir::Type F(std::vector<int64_t> dims) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(Dim::of(d));
  return ir::Type::tensor(DataType::kFloat, s);
}

enum class Form { kGpt2, kReordered, kGeluOpTanh, kErfDecomposed, kGeluOpErf, kInnerRead, kCubicOff };

ir::Model mlp(Form form) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", form == Form::kGeluOpTanh || form == Form::kGeluOpErf ? 20 : 17}};
  GraphBuilder b(m.graph);
  int counter = 0;
  auto c = [&](float v) { return b.constant_floats("c" + std::to_string(counter++), {}, v); };
  auto x0 = b.input("x", F({kB, kS, kE}));
  // Weights large enough that the pre-activations reach |x| of 3 to 5, where the two GELUs differ.
  auto x = b.node("Add", {b.node("MatMul", {x0, b.random_normal("w", {kE, kF}, 0.6f)}),
                          b.random_normal("bias", {kF}, 0.5f)});
  std::string y;
  switch (form) {
    case Form::kGpt2:
    case Form::kInnerRead:
    case Form::kCubicOff: {
      auto cube = b.node("Pow", {x, c(3.0f)});
      const float k3 = form == Form::kCubicOff ? 0.04f : 0.044715f;  // off: a GELU-like curve, not the GELU
      auto inner = b.node("Mul", {c(0.7978845608f), b.node("Add", {x, b.node("Mul", {c(k3), cube})})});
      auto t = b.node("Add", {c(1.0f), b.node("Tanh", {inner})});
      y = b.node("Mul", {b.node("Mul", {c(0.5f), x}), t});
      if (form == Form::kInnerRead) b.output(inner, F({kB, kS, kF}));
      break;
    }
    case Form::kReordered: {
      auto cube = b.node("Mul", {b.node("Mul", {x, x}), x});
      auto inner = b.node("Mul", {b.node("Add", {b.node("Mul", {cube, c(0.044715f)}), x}), c(0.7978845608f)});
      auto half_x = b.node("Div", {x, c(2.0f)});
      y = b.node("Mul", {b.node("Add", {b.node("Tanh", {inner}), c(1.0f)}), half_x});
      break;
    }
    case Form::kGeluOpTanh:
      y = b.node("Gelu", {x}, {Attribute::of_string("approximate", "tanh")});
      break;
    case Form::kGeluOpErf:
      y = b.node("Gelu", {x});
      break;
    case Form::kErfDecomposed: {
      auto e = b.node("Erf", {b.node("Div", {x, c(1.4142135f)})});
      y = b.node("Mul", {b.node("Mul", {x, b.node("Add", {e, c(1.0f)})}), c(0.5f)});
      break;
    }
  }
  b.output(y, F({kB, kS, kF}));
  return m;
}

Target cuda_like_target(std::vector<std::string> disabled = {}) {
  Target t = rt::cpu_target(OptLevel::kLayout);
  t.backend = "cuda";  // the CPU's kernels stand in for the GPU's
  t.layout = Layout::kNchw;
  t.precision = Precision::kFp16;
  t.disabled_rules = std::move(disabled);
  return t;
}

int count(const ir::Graph& g, std::string_view op) {
  return static_cast<int>(
      std::count_if(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) { return n.op_type == op; }));
}

ir::Model optimise_and_compare(const ir::Model& m, std::vector<std::string> disabled = {}) {
  ir::Model opt = m;
  optimize(opt, cuda_like_target(std::move(disabled)));
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(kB * kS * kE);
  for (float& f : v) f = dist(rng);
  const std::vector<std::pair<std::string, rt::Value>> feeds = {
      {"x", rt::Tensor::from_vector<float>(DataType::kFloat, {kB, kS, kE}, v)}};
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1});
  rt::Session got(opt, {.optimization = rt::OptLevel::kNone, .threads = 1});
  auto want = ref.run(feeds);
  auto have = got.run(feeds);
  EXPECT_EQ(want.size(), have.size());
  for (size_t i = 0; i < std::min(want.size(), have.size()); ++i)
    EXPECT_EQ(rt::compare_values(want[i], have[i], {2e-5, 2e-5}), "") << "output " << i;
  return opt;
}

TEST(PassesFuseMatMulBiasGelu, Gpt2TanhGeluGoesIntoTheProduct) {
  for (Form f : {Form::kGpt2, Form::kReordered, Form::kGeluOpTanh}) {
    ir::Model opt = optimise_and_compare(mlp(f));
    EXPECT_EQ(count(opt.graph, "MatMulBiasGelu"), 1) << static_cast<int>(f);
    EXPECT_EQ(opt.graph.nodes.size(), 1u) << static_cast<int>(f);
  }
}

// Also with fuse_gelu and fuse_bias_gelu off, so that the erf GELU's nodes follow a MatMulBias.
TEST(PassesFuseMatMulBiasGelu, ErfGeluStaysExact) {
  for (Form f : {Form::kErfDecomposed, Form::kGeluOpErf}) {
    for (bool others : {true, false}) {
      std::vector<std::string> off;
      if (!others) off = {"fuse_gelu", "fuse_bias_gelu"};
      ir::Model opt = optimise_and_compare(mlp(f), off);
      EXPECT_EQ(count(opt.graph, "MatMulBiasGelu"), 0) << static_cast<int>(f);
      if (!others) {
        EXPECT_EQ(count(opt.graph, "MatMulBias"), 1) << static_cast<int>(f);
      }
    }
  }
}

TEST(PassesFuseMatMulBiasGelu, OnlyTheTanhGeluItselfMatches) {
  ir::Model opt = optimise_and_compare(mlp(Form::kCubicOff));
  EXPECT_EQ(count(opt.graph, "MatMulBiasGelu"), 0);
  EXPECT_EQ(count(opt.graph, "MatMulBias"), 1);
}

TEST(PassesFuseMatMulBiasGelu, InnerValueReadElsewhereDoesNotFuse) {
  ir::Model opt = optimise_and_compare(mlp(Form::kInnerRead));
  EXPECT_EQ(count(opt.graph, "MatMulBiasGelu"), 0);
}

TEST(PassesFuseMatMulBiasGelu, RuleCanBeDisabled) {
  ir::Model opt = optimise_and_compare(mlp(Form::kGpt2), {"fuse_matmul_bias_gelu"});
  EXPECT_EQ(count(opt.graph, "MatMulBiasGelu"), 0);
  EXPECT_EQ(count(opt.graph, "MatMulBias"), 1);
}

}  // namespace
}  // namespace tessera::passes
