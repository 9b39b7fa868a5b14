// The channels-last pass (to_nhwc_layout, the layout level with Layout::kNhwc, a GPU session's default)
// and the reference kernels of its com.tessera ops, on the CPU: a ResNet-style block and a
// MobileNetV2-style block run before and after the pass (with the fast and the reference kernels) and
// must agree within 1e-4 relative + 1e-5 absolute (float32 sums in another order: the pass reorders
// weights, never rounds them); the rewritten graphs have the expected nodes; the pass is listed and
// switched off by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "ir/builder.h"
#include "layout_test_util.h"
#include "passes/layout_nhwc.h"
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
using rt::OptLevel;
using namespace layout_test;

Attribute ints(const char* name, std::vector<int64_t> v) {
  return Attribute::of_ints(name, std::move(v));
}

// [batch, 16, 10, 10] -> conv 3x3 (+bias, Relu) -> conv 3x3 -> Add(x) -> Relu -> MaxPool 3x3/2 ->
// BatchNormalization (not after a convolution: left unfused) -> Mul by a per-channel [16,1,1] constant ->
// conv 1x1/2 16->32 -> GlobalAveragePool -> Flatten -> Gemm.
ir::Model resnet_block() {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", F({Dim::symbol("batch"), Dim::of(16), Dim::of(10), Dim::of(10)}));
  auto pads1 = ints("pads", {1, 1, 1, 1});
  auto c1 = b.node(
      "Conv", {x, b.random_normal("w1", {16, 16, 3, 3}, 0.2f), b.random_normal("b1", {16}, 0.1f)}, {pads1});
  auto r1 = b.node("Relu", {c1});
  auto c2 = b.node(
      "Conv", {r1, b.random_normal("w2", {16, 16, 3, 3}, 0.2f), b.random_normal("b2", {16}, 0.1f)}, {pads1});
  auto sum = b.node("Add", {c2, x});
  auto r2 = b.node("Relu", {sum});
  auto mp = b.node("MaxPool", {r2}, {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), pads1});
  auto bn = b.node("BatchNormalization",
                   {mp, b.random_normal("bn_scale", {16}, 1.f), b.random_normal("bn_b", {16}, 1.f),
                    b.random_normal("bn_mean", {16}, 1.f), b.constant_floats("bn_var", {16}, 2.f)});
  auto scaled = b.node("Mul", {bn, b.random_normal("scale", {16, 1, 1}, 1.f)});
  auto c3 = b.node("Conv", {scaled, b.random_normal("w3", {32, 16, 1, 1}, 0.2f)}, {ints("strides", {2, 2})});
  auto gap = b.node("GlobalAveragePool", {c3});
  auto flat = b.node("Flatten", {gap});
  auto y = b.node("Gemm", {flat, b.random_normal("fc", {10, 32}, 0.2f), b.random_normal("fcb", {10}, 0.1f)},
                  {Attribute::of_int("transB", 1)});
  b.output(y, F({Dim::symbol("batch"), Dim::of(10)}));
  return m;
}

// [batch, 8, 12, 12] -> expand 1x1 8->24, Clip 0..6 -> depthwise 3x3/2, Clip 0..6 -> project 1x1 24->16
// (block 1) -> expand 1x1 16->48, Relu6 -> depthwise 3x3, Relu6 -> project 48->16 -> Add(block 1) (block
// 2) -> Concat with block 1 on channels -> Sigmoid -> AveragePool 2x2 -> ReduceMean over H, W (keepdims
// 0). Outputs: the mean [batch, 32] and block 2's sum (read inside the chain).
ir::Model mobilenet_block() {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", F({Dim::symbol("batch"), Dim::of(8), Dim::of(12), Dim::of(12)}));
  auto pads1 = ints("pads", {1, 1, 1, 1});
  auto lo = b.constant_floats("lo", {}, 0.f), hi = b.constant_floats("hi", {}, 6.f);
  auto e1 =
      b.node("Conv", {x, b.random_normal("we1", {24, 8, 1, 1}, 0.3f), b.random_normal("be1", {24}, 0.1f)});
  auto a1 = b.node("Clip", {e1, lo, hi});
  auto d1 =
      b.node("Conv", {a1, b.random_normal("wd1", {24, 1, 3, 3}, 0.3f), b.random_normal("bd1", {24}, 0.1f)},
             {pads1, ints("strides", {2, 2}), Attribute::of_int("group", 24)});
  auto a2 = b.node("Clip", {d1, lo, hi});
  auto p1 =
      b.node("Conv", {a2, b.random_normal("wp1", {16, 24, 1, 1}, 0.2f), b.random_normal("bp1", {16}, 0.1f)});
  auto e2 =
      b.node("Conv", {p1, b.random_normal("we2", {48, 16, 1, 1}, 0.3f), b.random_normal("be2", {48}, 0.1f)});
  auto a3 = b.node("Clip", {e2, lo, hi});
  auto d2 =
      b.node("Conv", {a3, b.random_normal("wd2", {48, 1, 3, 3}, 0.3f), b.random_normal("bd2", {48}, 0.1f)},
             {pads1, Attribute::of_int("group", 48)});
  auto a4 = b.node("Clip", {d2, lo, hi});
  auto p2 =
      b.node("Conv", {a4, b.random_normal("wp2", {16, 48, 1, 1}, 0.2f), b.random_normal("bp2", {16}, 0.1f)});
  auto sum = b.node("Add", {p2, p1}, {}, "residual");
  auto cat = b.node("Concat", {sum, p1}, {Attribute::of_int("axis", 1)});
  auto sig = b.node("Sigmoid", {cat});
  auto ap = b.node("AveragePool", {sig}, {ints("kernel_shape", {2, 2}), ints("strides", {2, 2})});
  auto mean = b.node("ReduceMean", {ap}, {ints("axes", {2, 3}), Attribute::of_int("keepdims", 0)});
  b.output(mean, F({Dim::symbol("batch"), Dim::of(32)}));
  b.output(sum, F({Dim::symbol("batch"), Dim::of(16), Dim::of(6), Dim::of(6)}));
  return m;
}

rt::SessionOptions nhwc_options(bool reference) {
  return {.optimization = OptLevel::kLayout,
          .threads = 2,
          .reference_kernels = reference,
          .layout = Layout::kNhwc};
}

using Feed = std::vector<std::pair<std::string, rt::Value>>;

TEST(NhwcLayout, ResNetBlockMovesToChannelsLast) {
  ir::Model m = resnet_block();
  Feed feed{{"x", random_tensor({2, 16, 10, 10}, 3)}};
  rt::Session plain(m, {.optimization = OptLevel::kNone, .threads = 2});
  auto want = plain.run(feed);
  for (bool reference : {false, true}) {
    rt::Session nhwc(m, nhwc_options(reference));
    expect_same(want, nhwc.run(feed));
    const ir::Graph& g = nhwc.model().graph;
    // The three convolutions; the first Relu, the residual Add and the second Relu fold into them.
    EXPECT_EQ(count(g, "NhwcConv"), 3u);
    EXPECT_EQ(count(g, "Conv") + count(g, "FusedConv") + count(g, "Relu") + count(g, "BatchNormalization"),
              0u);
    EXPECT_EQ(count(g, "NhwcMaxPool"), 1u);
    EXPECT_EQ(count(g, "NhwcAveragePool"), 1u);  // the global pool, with a 3x3 window
    EXPECT_EQ(count(g, "Mul"), 2u);              // the batch norm's scale and the per-channel Mul
    EXPECT_EQ(count(g, "Add"), 1u);              // the batch norm's shift
    // One Transpose in (x), one out: the pooled [N, 1, 1, 32] that Flatten reads.
    EXPECT_EQ(count(g, "Transpose"), 2u);
    for (const auto& n : g.nodes) {
      if (n.op_type != "NhwcConv") continue;
      const ir::Tensor* w = nullptr;
      for (const auto& t : g.initializers)
        if (t.name == n.inputs[1]) w = &t;
      ASSERT_NE(w, nullptr) << n.name;
      EXPECT_EQ(w->dims[3], 16) << n.name << ": weights are [M, kH, kW, C/group]";
    }
  }
}

TEST(NhwcLayout, MobileNetBlockMovesToChannelsLast) {
  ir::Model m = mobilenet_block();
  Feed feed{{"x", random_tensor({3, 8, 12, 12}, 5)}};
  rt::Session plain(m, {.optimization = OptLevel::kNone, .threads = 2});
  auto want = plain.run(feed);
  for (bool reference : {false, true}) {
    rt::Session nhwc(m, nhwc_options(reference));
    expect_same(want, nhwc.run(feed));
    const ir::Graph& g = nhwc.model().graph;
    // Six convolutions (Clip into four of them), the residual Add into the last one.
    EXPECT_EQ(count(g, "NhwcConv"), 6u);
    EXPECT_EQ(count(g, "Clip") + count(g, "Add") + count(g, "Conv") + count(g, "FusedConv"), 0u);
    EXPECT_EQ(count(g, "Concat"), 1u);
    EXPECT_EQ(count(g, "Sigmoid"), 1u);
    EXPECT_EQ(count(g, "NhwcAveragePool"), 1u);
    EXPECT_EQ(count(g, "ReduceMean"), 1u);
    // In: x. Out: the residual sum, a graph output; the mean is [N, C] in either layout.
    EXPECT_EQ(count(g, "Transpose"), 2u);
  }
}

// EfficientNet's SiLU and squeeze-excitation: conv -> x * Sigmoid(x) -> ReduceMean over H, W (keepdims)
// -> conv 1x1 + Relu -> conv 1x1 + Sigmoid -> Mul of [N,C,H,W] by [N,C,1,1] -> conv 1x1.
TEST(NhwcLayout, SqueezeExcitationStaysChannelsLast) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", F({Dim::of(2), Dim::of(8), Dim::of(9), Dim::of(9)}));
  auto c = b.node("Conv", {x, b.random_normal("w", {16, 8, 3, 3}, 0.3f)}, {ints("pads", {1, 1, 1, 1})});
  auto silu = b.node("Mul", {c, b.node("Sigmoid", {c})});
  auto pooled = b.node("ReduceMean", {silu}, {ints("axes", {2, 3}), Attribute::of_int("keepdims", 1)});
  auto squeezed = b.node("Relu", {b.node("Conv", {pooled, b.random_normal("ws", {4, 16, 1, 1}, 0.3f)})});
  auto gate = b.node("Sigmoid", {b.node("Conv", {squeezed, b.random_normal("we", {16, 4, 1, 1}, 0.3f)})});
  auto excited = b.node("Mul", {silu, gate});
  auto y = b.node("Conv", {excited, b.random_normal("wp", {8, 16, 1, 1}, 0.3f)});
  b.output(y, F({Dim::of(2), Dim::of(8), Dim::of(9), Dim::of(9)}));
  Feed feed{{"x", random_tensor({2, 8, 9, 9}, 13)}};
  rt::Session plain(m, {.optimization = OptLevel::kNone, .threads = 2});
  rt::Session nhwc(m, nhwc_options(false));
  expect_same(plain.run(feed), nhwc.run(feed));
  const ir::Graph& g = nhwc.model().graph;
  EXPECT_EQ(count(g, "NhwcConv"), 4u);
  EXPECT_EQ(count(g, "Mul"), 2u);
  EXPECT_EQ(count(g, "ReduceMean"), 1u);
  EXPECT_EQ(count(g, "Transpose"), 2u);  // x in, y out
}

// Transpose(x, [0,3,1,2]) -> Conv: the convolution reads the channels-last x itself.
TEST(NhwcLayout, TransposesThatMeetCancel) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", F({Dim::of(1), Dim::of(9), Dim::of(7), Dim::of(4)}));
  auto t = b.node("Transpose", {x}, {ints("perm", {0, 3, 1, 2})});
  auto c = b.node("Conv", {t, b.random_normal("w", {6, 4, 3, 3}, 0.3f)}, {ints("pads", {1, 1, 1, 1})});
  b.output(b.node("Relu", {c}), F({Dim::of(1), Dim::of(6), Dim::of(9), Dim::of(7)}));
  Feed feed{{"x", random_tensor({1, 9, 7, 4}, 9)}};
  rt::Session plain(m, {.optimization = OptLevel::kNone, .threads = 2});
  rt::Session nhwc(m, nhwc_options(false));
  expect_same(plain.run(feed), nhwc.run(feed));
  const ir::Graph& g = nhwc.model().graph;
  EXPECT_EQ(count(g, "NhwcConv"), 1u);
  EXPECT_EQ(count(g, "Transpose"), 1u);  // only the output's
  EXPECT_EQ(g.nodes.front().op_type, "NhwcConv");
}

// On a GPU target the elementwise chains are fused after the layout pass: the residual Add and its Relu
// go into the channels-last convolution (Z and activation), not into a FusedElementwise with a Transpose
// on each side. The CPU kernels stand in for the GPU's as the oracle; the result still computes the same.
TEST(NhwcLayout, ElementwiseFusionComesAfterTheLayoutPass) {
  ir::Model m = resnet_block();
  Target t = rt::cpu_target(OptLevel::kLayout);
  t.backend = "cuda";
  t.layout = Layout::kNhwc;
  ir::Model fused = m;
  optimize(fused, t);
  const ir::Graph& g = fused.graph;
  EXPECT_EQ(count(g, "NhwcConv"), 3u);
  EXPECT_EQ(count(g, "Transpose"), 2u) << "one in, one out: no chain broken by a fused Add+Relu";
  for (const auto& n : g.nodes) {
    if (n.op_type != "FusedElementwise") continue;
    for (const auto& in : n.inputs)
      for (const auto& p : g.nodes)
        if (std::find(p.outputs.begin(), p.outputs.end(), in) != p.outputs.end()) {
          EXPECT_NE(p.op_type, "Transpose") << n.name << " reads a Transpose";
        }
  }
  Feed feed{{"x", random_tensor({2, 16, 10, 10}, 5)}};
  rt::Session plain(m, {.optimization = OptLevel::kNone, .threads = 2});
  rt::Session after(fused, {.optimization = OptLevel::kNone, .threads = 2});
  expect_same(plain.run(feed), after.run(feed));
}

TEST(NhwcLayout, IsListedAndSwitchedOffByName) {
  auto rules = list_rules();
  auto it =
      std::find_if(rules.begin(), rules.end(), [](const RuleInfo& r) { return r.name == kNhwcLayoutPass; });
  ASSERT_NE(it, rules.end());
  EXPECT_EQ(it->level, OptLevel::kLayout);
  EXPECT_TRUE(rule_exists("to_nhwc_layout"));
  ir::Model m = resnet_block();
  rt::SessionOptions o = nhwc_options(false);
  o.disabled_rules = {"to_nhwc_layout"};
  rt::Session off(m, o);
  EXPECT_EQ(count(off.model().graph, "NhwcConv"), 0u);
  EXPECT_EQ(count(off.model().graph, "Transpose"), 0u);
  // The CPU's own default (the blocked layout) never runs it.
  rt::Session cpu(m, {.optimization = OptLevel::kLayout, .threads = 2});
  EXPECT_EQ(count(cpu.model().graph, "NhwcConv"), 0u);
}

}  // namespace
}  // namespace tessera::passes
