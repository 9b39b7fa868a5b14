// fuse_elementwise and com.tessera FusedElementwise's CPU reference kernel: the rule runs for a CUDA
// target (whose kernels the CPU's oracle stands in for here: the reference kernel of the fused op
// exists), and the fused model runs on the CPU against the unfused one on the same seeded inputs.
// Tolerances: float32 relative 1e-4 plus absolute 1e-6 (the unfused graph rounds every step to float32,
// the fused op computes in double and rounds once: they differ where a step cancels, e.g. 1 + tanh(u)
// for negative u); float16 within 1 float16 ulp of the float32 graph's output (the fused op's one
// rounding) plus 1e-7 absolute for the values below float16's normal range.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "ir/builder.h"
#include "ops/fused/elementwise_program.h"
#include "passes/pipeline.h"
#include "runtime/half.h"
#include "runtime/pass_target.h"
#include "runtime/session.h"
#include "runtime/value_io.h"

namespace tessera::passes {
namespace {

using ir::DataType;
using ir::Dim;
using ir::GraphBuilder;
namespace fused = ops::fused;

ir::Type T(DataType t, std::vector<int64_t> dims) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(Dim::of(d));
  return ir::Type::tensor(t, s);
}

// `round16`: the value as float16 holds it, in a float32 constant (the float16 graph's float32 oracle).
std::string scalar(GraphBuilder& b, const std::string& name, DataType t, float v, bool round16 = false) {
  if (round16) v = static_cast<float>(rt::Float16(v));
  if (t == DataType::kFloat16)
    return b.initializer(ir::make_tensor(name, t, {}, std::vector<uint16_t>{rt::Float16(v).bits}));
  return b.initializer(ir::make_tensor(name, t, {}, std::vector<float>{v}));
}

// GPT-2's tanh GELU as the dynamo export spells it: 8 nodes.
std::string tanh_gelu(GraphBuilder& b, DataType t, const std::string& x, bool round16 = false) {
  auto half = b.node("Mul", {x, scalar(b, "half", t, 0.5f)}, {}, "g_mul_half");
  auto cube = b.node("Pow", {x, scalar(b, "three", t, 3.0f)}, {}, "g_pow");
  auto k = b.node("Mul", {cube, scalar(b, "k", t, 0.044715f, round16)}, {}, "g_mul_k");
  auto inner = b.node("Add", {x, k}, {}, "g_add");
  auto scaled = b.node("Mul", {inner, scalar(b, "s", t, 0.7978845608f, round16)}, {}, "g_mul_s");
  auto th = b.node("Tanh", {scaled}, {}, "g_tanh");
  auto one = b.node("Add", {th, scalar(b, "one", t, 1.0f)}, {}, "g_add_one");
  return b.node("Mul", {half, one}, {}, "g_out");
}

// BERT's erf GELU: x * 0.5 * (1 + erf(x / sqrt 2)).
std::string erf_gelu(GraphBuilder& b, DataType t, const std::string& x, bool round16 = false) {
  auto d = b.node("Div", {x, scalar(b, "sqrt2", t, 1.4142135f, round16)}, {}, "e_div");
  auto e = b.node("Erf", {d}, {}, "e_erf");
  auto p = b.node("Add", {e, scalar(b, "one", t, 1.0f)}, {}, "e_add");
  auto m = b.node("Mul", {x, p}, {}, "e_mul");
  return b.node("Mul", {m, scalar(b, "half", t, 0.5f)}, {}, "e_half");
}

ir::Model model_of(
    DataType t, std::vector<std::pair<std::string, std::vector<int64_t>>> inputs,
    const std::function<std::vector<std::string>(GraphBuilder&, std::vector<std::string>)>& body,
    std::vector<DataType> input_types = {}) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  std::vector<std::string> ins;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(b.input(inputs[i].first, T(i < input_types.size() ? input_types[i] : t, inputs[i].second)));
  for (const auto& out : body(b, ins)) b.output(out, ir::Type::tensor(t));
  return m;
}

rt::Tensor random_tensor(DataType t, const std::vector<int64_t>& dims, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  rt::Tensor out = rt::Tensor::zeros(t, dims);
  for (int64_t i = 0; i < out.numel(); ++i) {
    float v = dist(rng);
    if (t == DataType::kFloat) out.data<float>()[i] = v;
    if (t == DataType::kFloat16) out.data<rt::Float16>()[i] = rt::Float16(v);
    if (t == DataType::kBool) out.data<bool>()[i] = v > 0;
  }
  return out;
}

using Feeds = std::vector<std::pair<std::string, rt::Value>>;

Feeds feeds_for(const ir::Model& m, float scale = 2.0f) {
  Feeds f;
  uint32_t seed = 11;
  for (const auto& in : m.graph.inputs) {
    std::vector<int64_t> dims;
    for (const auto& d : *in.type.shape) dims.push_back(d.value);
    f.emplace_back(in.name, rt::Value(random_tensor(in.type.elem, dims, seed++, scale)));
  }
  return f;
}

// The same inputs in float32 (for the float16 cases' float32 oracle).
Feeds widened(const Feeds& f) {
  Feeds out;
  for (const auto& [name, v] : f) {
    const rt::Tensor& t = v.tensor();
    if (t.dtype() != DataType::kFloat16) {
      out.emplace_back(name, v);
      continue;
    }
    rt::Tensor w = rt::Tensor::zeros(DataType::kFloat, t.shape());
    for (int64_t i = 0; i < t.numel(); ++i) w.data<float>()[i] = static_cast<float>(t.to_double(i));
    out.emplace_back(name, rt::Value(w));
  }
  return out;
}

Target cuda_target(std::vector<std::string> disabled = {}) {
  Target t = rt::cpu_target(OptLevel::kLayout);
  t.backend = "cuda";
  t.layout = Layout::kNchw;
  t.disabled_rules = std::move(disabled);
  return t;
}

int count(const ir::Graph& g, std::string_view op) {
  return static_cast<int>(
      std::count_if(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) { return n.op_type == op; }));
}

std::vector<rt::Value> run(const ir::Model& m, const Feeds& f) {
  rt::Session s(m, {.optimization = OptLevel::kNone, .threads = 2});
  return s.run(f);
}

ir::Model fused_copy(const ir::Model& m, const Target& t = cuda_target()) {
  ir::Model copy = m;
  optimize(copy, t);
  return copy;
}

void expect_fp32_close(const std::vector<rt::Value>& want, const std::vector<rt::Value>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(rt::compare_values(want[i], got[i], {1e-4, 1e-6}), "") << "output " << i;
}

// float16 `got` within one float16 ulp of the float32 `want` (plus 1e-7 for float16's subnormals).
void expect_fp16_within_ulp(const rt::Tensor& want, const rt::Tensor& got) {
  ASSERT_EQ(want.shape(), got.shape());
  int bad = 0;
  for (int64_t i = 0; i < want.numel() && bad < 5; ++i) {
    double w = want.to_double(i), g = got.to_double(i);
    double ulp = std::ldexp(1.0, std::max(std::ilogb(std::max(std::fabs(w), 0x1p-14)), -14) - 10);
    if (std::fabs(w - g) <= ulp + 1e-7 || (std::isnan(w) && std::isnan(g))) continue;
    ++bad;
    ADD_FAILURE() << "element " << i << ": fused float16 " << g << ", float32 graph " << w;
  }
}

const ir::Node* only_fused(const ir::Model& m) {
  const ir::Node* f = nullptr;
  for (const auto& n : m.graph.nodes)
    if (n.op_type == fused::kFusedElementwiseOp) {
      EXPECT_EQ(f, nullptr) << "more than one fused node";
      f = &n;
    }
  return f;
}

std::string fused_from(const ir::Node& n) {
  for (const auto& [k, v] : n.metadata_props)
    if (k == kFusedFromKey) return v;
  return {};
}

TEST(PassesFuseElementwise, TanhGeluBecomesOneNodeFloat32AndFloat16) {
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    ir::Model m = model_of(t, {{"x", {4, 33, 771}}}, [&](GraphBuilder& b, std::vector<std::string> in) {
      return std::vector<std::string>{tanh_gelu(b, t, in[0])};
    });
    ir::Model f = fused_copy(m);
    ASSERT_EQ(f.graph.nodes.size(), 1u) << "the 8 nodes did not become one";
    const ir::Node* n = only_fused(f);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->inputs, std::vector<std::string>{"x"});  // the constants are literals
    EXPECT_EQ(fused_from(*n), "g_mul_half,g_pow,g_mul_k,g_add,g_mul_s,g_tanh,g_add_one,g_out");
    Feeds feeds = feeds_for(m);
    if (t == DataType::kFloat) {
      expect_fp32_close(run(m, feeds), run(f, feeds));
      continue;
    }
    // The oracle in double: a float32 graph would cancel in 1 + tanh(u) for negative u, where the fused
    // op (double inside) is exact to its one rounding.
    const rt::Tensor& x = feeds[0].second.tensor();
    rt::Tensor want = rt::Tensor::zeros(DataType::kFloat, x.shape());
    auto h = [](float v) { return static_cast<double>(static_cast<float>(rt::Float16(v))); };
    for (int64_t i = 0; i < x.numel(); ++i) {
      double v = x.to_double(i);
      want.data<float>()[i] = static_cast<float>(
          0.5 * v * (1.0 + std::tanh(h(0.7978845608f) * (v + h(0.044715f) * std::pow(v, 3.0)))));
    }
    expect_fp16_within_ulp(want, run(f, feeds)[0].tensor());
  }
}

TEST(PassesFuseElementwise, ErfGeluWhenFuseGeluIsOff) {
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    auto body = [&](DataType dt) {
      return [dt, t](GraphBuilder& b, std::vector<std::string> in) {
        return std::vector<std::string>{erf_gelu(b, dt, in[0], t == DataType::kFloat16)};
      };
    };
    ir::Model m = model_of(t, {{"x", {2, 129, 385}}}, body(t));
    ir::Model f = fused_copy(m, cuda_target({"fuse_gelu"}));
    ASSERT_EQ(f.graph.nodes.size(), 1u);
    ASSERT_NE(only_fused(f), nullptr);
    Feeds feeds = feeds_for(m);
    if (t == DataType::kFloat) {
      expect_fp32_close(run(m, feeds), run(f, feeds));
    } else {
      ir::Model m32 = model_of(DataType::kFloat, {{"x", {2, 129, 385}}}, body(DataType::kFloat));
      expect_fp16_within_ulp(run(m32, widened(feeds))[0].tensor(), run(f, feeds)[0].tensor());
    }
  }
}

// A residual Add whose sum is also a graph output, scaled by a per-channel vector and shifted by a
// per-row column: two outputs, row and column broadcasting.
TEST(PassesFuseElementwise, ResidualAddMulKeepsTheSumAsASecondOutput) {
  ir::Model m =
      model_of(DataType::kFloat, {{"a", {3, 97, 257}}, {"b", {3, 97, 257}}, {"g", {257}}, {"c", {3, 97, 1}}},
               [](GraphBuilder& b, std::vector<std::string> in) {
                 auto sum = b.node("Add", {in[0], in[1]}, {}, "res_add");
                 auto scaled = b.node("Mul", {sum, in[2]}, {}, "res_mul");
                 auto shifted = b.node("Sub", {scaled, in[3]}, {}, "res_sub");
                 auto act = b.node("Relu", {shifted}, {}, "res_relu");
                 return std::vector<std::string>{act, sum};
               });
  ir::Model f = fused_copy(m);
  ASSERT_EQ(f.graph.nodes.size(), 1u);
  const ir::Node* n = only_fused(f);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->outputs.size(), 2u);
  Feeds feeds = feeds_for(m);
  expect_fp32_close(run(m, feeds), run(f, feeds));
}

// Where with a bool condition, Clip with constant bounds, a broadcast that is neither a row nor a
// column ([5,1,33] against [5,17,33]), Sigmoid, Neg, Exp, Sqrt of Abs, Reciprocal, Max and Min.
TEST(PassesFuseElementwise, WhereClipAndStridedBroadcast) {
  ir::Model m = model_of(
      DataType::kFloat, {{"x", {5, 17, 33}}, {"y", {5, 1, 33}}, {"c", {5, 17, 33}}},
      [](GraphBuilder& b, std::vector<std::string> in) {
        auto s = b.node("Sigmoid", {in[0]}, {}, "w_sig");
        auto n = b.node("Neg", {in[1]}, {}, "w_neg");  // [5,1,33]: not the root's shape, stays outside
        auto w = b.node("Where", {in[2], s, n}, {}, "w_where");
        auto c = b.node(
            "Clip", {w, scalar(b, "lo", DataType::kFloat, -0.25f), scalar(b, "hi", DataType::kFloat, 0.75f)},
            {}, "w_clip");
        auto e = b.node("Exp", {c}, {}, "w_exp");
        auto r = b.node("Reciprocal", {b.node("Sqrt", {b.node("Abs", {e}, {}, "w_abs")}, {}, "w_sqrt")}, {},
                        "w_rec");
        auto mx = b.node("Max", {r, in[0]}, {}, "w_max");
        return std::vector<std::string>{
            b.node("Min", {mx, scalar(b, "cap", DataType::kFloat, 1.5f)}, {}, "w_min")};
      },
      {DataType::kFloat, DataType::kFloat, DataType::kBool});
  ir::Model f = fused_copy(m);
  EXPECT_EQ(count(f.graph, fused::kFusedElementwiseOp), 1);
  EXPECT_EQ(count(f.graph, "Neg"), 1);
  EXPECT_EQ(f.graph.nodes.size(), 2u);
  Feeds feeds = feeds_for(m);
  expect_fp32_close(run(m, feeds), run(f, feeds));
}

// An attention mask as exporters write it: Where(mask, 0, -inf) of two constants, added to the scores.
// A statement takes its type from a non-literal operand, so one constant stays an input.
TEST(PassesFuseElementwise, WhereOfTwoConstantsKeepsOneAsAnInput) {
  ir::Model m = model_of(DataType::kFloat, {{"scores", {2, 3, 7, 7}}, {"mask", {2, 3, 7, 7}}},
                         [](GraphBuilder& b, std::vector<std::string> in) {
                           auto w = b.node(
                               "Where",
                               {in[1], scalar(b, "zero", DataType::kFloat, 0.0f),
                                scalar(b, "ninf", DataType::kFloat, -std::numeric_limits<float>::infinity())},
                               {}, "mask_where");
                           return std::vector<std::string>{b.node("Add", {in[0], w}, {}, "mask_add")};
                         },
                         {DataType::kFloat, DataType::kBool});
  ir::Model f = fused_copy(m);
  ASSERT_EQ(f.graph.nodes.size(), 1u);
  EXPECT_EQ(only_fused(f)->inputs.size(), 3u);
  Feeds feeds = feeds_for(m);
  expect_fp32_close(run(m, feeds), run(f, feeds));
}

TEST(PassesFuseElementwise, LeavesWhatItCannotTake) {
  // One node, a Pow with a non-constant integer exponent, and the rule switched off.
  ir::Model one =
      model_of(DataType::kFloat, {{"x", {8, 8}}}, [](GraphBuilder& b, std::vector<std::string> in) {
        return std::vector<std::string>{b.node("Tanh", {in[0]}, {}, "t")};
      });
  EXPECT_EQ(count(fused_copy(one).graph, fused::kFusedElementwiseOp), 0);
  ir::Model ipow = model_of(
      DataType::kFloat, {{"x", {8, 8}}, {"e", {8, 8}}},
      [](GraphBuilder& b, std::vector<std::string> in) {
        return std::vector<std::string>{b.node("Pow", {b.node("Exp", {in[0]}, {}, "e1"), in[1]}, {}, "p")};
      },
      {DataType::kFloat, DataType::kInt64});
  EXPECT_EQ(count(fused_copy(ipow).graph, "Pow"), 1);
  ir::Model gelu =
      model_of(DataType::kFloat, {{"x", {8, 8}}}, [](GraphBuilder& b, std::vector<std::string> in) {
        return std::vector<std::string>{tanh_gelu(b, DataType::kFloat, in[0])};
      });
  EXPECT_EQ(count(fused_copy(gelu, cuda_target({"fuse_elementwise"})).graph, fused::kFusedElementwiseOp), 0);
  // A CPU target never runs the rule (its backends are {"cuda"}).
  ir::Model cpu = gelu;
  optimize(cpu, rt::cpu_target(OptLevel::kLayout));
  EXPECT_EQ(count(cpu.graph, fused::kFusedElementwiseOp), 0);
}

TEST(FusedElementwiseProgram, RoundTripsAndNamesWhatIsWrong) {
  fused::Program p =
      fused::parse_program("t0=Pow(x0,3);t1=Mul(t0,0.044714998453855515);t2=Cast<float16>(t1)", {2, 0}, 1);
  EXPECT_EQ(fused::format_program(p), "t0=Pow(x0,3);t1=Mul(t0,0.044714998453855515);t2=Cast<float16>(t1)");
  EXPECT_EQ(static_cast<float>(p.code[1].args[1].literal), 0.044715f);
  EXPECT_EQ(fused::statement_types(p, {DataType::kFloat})[2], DataType::kFloat16);
  auto error = [](std::string_view text, std::vector<int64_t> results, size_t inputs) {
    try {
      fused::parse_program(text, results, inputs);
    } catch (const fused::ProgramError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("t0=Add(x0,t1);t1=Neg(x0)", {1}, 1),
            "statement t0 reads t1, which is not defined before it");
  EXPECT_EQ(error("t0=Add(x0,x2)", {0}, 2), "statement t0 reads x2, but the node has 2 inputs");
  EXPECT_EQ(error("t0=Frobnicate(x0)", {0}, 1), "statement 0 ('t0=Frobnicate(x0)'): unknown op 'Frobnicate'");
  EXPECT_EQ(error("t0=Add(x0)", {0}, 1), "statement 0 ('t0=Add(x0)'): Add takes 2 arguments, got 1");
  EXPECT_EQ(error("t0=Neg(x0)", {3}, 1), "'results' names t3, but the program has 1 statements");
  EXPECT_EQ(error("t0=Neg(x0);t1=Tanh(bogus)", {1}, 1),
            "statement t1: argument 'bogus' is neither x<i>, t<j> nor a number");
  fused::Program mixed = fused::parse_program("t0=Add(x0,x1)", {0}, 2);
  EXPECT_THROW(fused::statement_types(mixed, {DataType::kFloat, DataType::kFloat16}), fused::ProgramError);
}

// A hand-written FusedElementwise node: the checker rejects a bad program with the parser's message,
// and the reference kernel computes a good one (Cast inside, literals, two outputs).
TEST(FusedElementwiseKernel, ComputesAHandWrittenProgram) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}, {"com.tessera", 1}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", T(DataType::kFloat, {3, 1000}));
  auto outs = b.nodes(fused::kFusedElementwiseOp, {x},
                      {ir::Attribute::of_string("program", "t0=Mul(x0,-2.5);t1=Exp(t0);t2=Cast<float16>(t1)"),
                       ir::Attribute::of_ints("results", {1, 2})},
                      "f", 2);
  m.graph.nodes.back().domain = "com.tessera";
  b.output(outs[0], ir::Type::tensor(DataType::kFloat));
  b.output(outs[1], ir::Type::tensor(DataType::kFloat16));
  Feeds feeds = feeds_for(m, 1.0f);
  auto got = run(m, feeds);
  const rt::Tensor& xin = feeds[0].second.tensor();
  for (int64_t i = 0; i < xin.numel(); i += 37) {
    double want = std::exp(-2.5 * xin.to_double(i));
    EXPECT_EQ(got[0].tensor().data<float>()[i], static_cast<float>(want)) << i;
    EXPECT_EQ(got[1].tensor().data<rt::Float16>()[i].bits, rt::Float16(static_cast<float>(want)).bits) << i;
  }
  m.graph.nodes.back().attributes[0].s = "t0=Mul(x0,t5)";
  try {
    run(m, feeds);
    ADD_FAILURE() << "a bad program ran";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("statement t0 reads t5"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::passes
