// The layout level (to_blocked_layout) and the blocked-layout kernels: a small CNN that has every case
// the pass handles (a first convolution over 3 channels, padded channel counts, depthwise, a residual
// Add fused as Z, activations, both pools, a grouped convolution that stays NCHW, a graph output read
// in the middle of a blocked chain) runs at `layout` and at `none`, with the fast kernels and with the
// reference kernels only; and each blocked kernel is checked against its reference kernel on seeded
// random inputs, with blocks of 8 and 16.
#include <gtest/gtest.h>

#include <random>

#include "ir/builder.h"
#include "layout_test_util.h"
#include "ops/layout/blocked.h"
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

// [batch, 3, 12, 12] -> conv 3->24 (+Relu) -> depthwise 24 (+Clip) -> 1x1 24->40 -> Add(1x1 24->40 of
// the first conv) -> Relu -> MaxPool -> AveragePool -> grouped conv (2 groups of 20: stays NCHW) ->
// Sigmoid -> GlobalAveragePool. Outputs: the last, and the residual sum (read mid-chain).
ir::Model cnn() {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", F({Dim::symbol("batch"), Dim::of(3), Dim::of(12), Dim::of(12)}));
  auto pads1 = Attribute::of_ints("pads", {1, 1, 1, 1});
  auto c1 = b.node("Conv", {x, b.random_normal("w1", {24, 3, 3, 3}, 0.3f), b.random_normal("b1", {24}, 0.1f)},
                   {pads1});
  auto r1 = b.node("Relu", {c1});
  auto dw = b.node("Conv", {r1, b.random_normal("w2", {24, 1, 3, 3}, 0.3f)},
                   {pads1, Attribute::of_int("group", 24)});
  auto clip = b.node("Clip", {dw, b.constant_floats("lo", {}, 0.f), b.constant_floats("hi", {}, 6.f)});
  auto main = b.node("Conv", {clip, b.random_normal("w3", {40, 24, 1, 1}, 0.2f)});
  auto side =
      b.node("Conv", {r1, b.random_normal("w4", {40, 24, 1, 1}, 0.2f), b.random_normal("b4", {40}, 0.1f)});
  auto sum = b.node("Add", {main, side}, {}, "residual");
  auto r2 = b.node("Relu", {sum});
  auto mp = b.node("MaxPool", {r2},
                   {Attribute::of_ints("kernel_shape", {2, 2}), Attribute::of_ints("strides", {2, 2})});
  auto ap =
      b.node("AveragePool", {mp},
             {Attribute::of_ints("kernel_shape", {3, 3}), pads1, Attribute::of_int("count_include_pad", 1)});
  auto g = b.node("Conv", {ap, b.random_normal("w5", {20, 20, 3, 3}, 0.2f)}, {Attribute::of_int("group", 2)});
  auto s = b.node("Sigmoid", {g});
  auto gap = b.node("GlobalAveragePool", {s});
  b.output(gap, F({Dim::symbol("batch"), Dim::of(20), Dim::of(1), Dim::of(1)}));
  b.output(sum, F({Dim::symbol("batch"), Dim::of(40), Dim::of(12), Dim::of(12)}));
  return m;
}

TEST(BlockedLayout, RewritesTheChainAndKeepsTheOutputs) {
  ir::Model m = cnn();
  std::vector<std::pair<std::string, rt::Value>> feed{{"x", random_tensor({2, 3, 12, 12}, 7)}};
  rt::Session plain(m, {.optimization = OptLevel::kNone, .threads = 2});
  auto want = plain.run(feed);
  for (bool reference : {false, true}) {
    rt::Session blocked(m, {.optimization = OptLevel::kLayout, .threads = 2, .reference_kernels = reference});
    expect_same(want, blocked.run(feed));
    const ir::Graph& g = blocked.model().graph;
    // Four convolutions move (the grouped one does not: 20 channels per group is no whole block; it
    // becomes a FusedConv with its Sigmoid); the residual Add and the first Relu fold into them. The
    // second Relu stays a node, run on the blocked sum, since the sum is also a graph output.
    EXPECT_EQ(count(g, "BlockedConv"), 4u);
    EXPECT_EQ(count(g, "FusedConv"), 1u);
    EXPECT_EQ(count(g, "Add"), 0u);
    EXPECT_EQ(count(g, "Relu"), 1u);
    EXPECT_EQ(count(g, "BlockedMaxPool"), 1u);
    EXPECT_EQ(count(g, "BlockedAveragePool"), 1u);
    // Back to NCHW twice: the residual sum (a graph output) and before the grouped convolution.
    EXPECT_EQ(count(g, "ReorderFromBlocked"), 2u);
    EXPECT_EQ(count(g, "ReorderToBlocked"), 0u);  // the first convolution reads its 3 channels as they are
  }
}

// A classifier head: the global pools run blocked, so only [N, C, 1, 1] goes back to NCHW.
TEST(BlockedLayout, GlobalPoolsRunBlocked) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", F({Dim::symbol("batch"), Dim::of(8), Dim::of(7), Dim::of(5)}));
  auto c = b.node("Conv", {x, b.random_normal("w", {40, 8, 3, 3}, 0.3f)},
                  {Attribute::of_ints("pads", {1, 1, 1, 1})});
  auto r = b.node("Relu", {c});
  b.output(b.node("GlobalAveragePool", {r}), F({Dim::symbol("batch"), Dim::of(40), Dim::of(1), Dim::of(1)}));
  b.output(b.node("GlobalMaxPool", {c}), F({Dim::symbol("batch"), Dim::of(40), Dim::of(1), Dim::of(1)}));
  std::vector<std::pair<std::string, rt::Value>> feed{{"x", random_tensor({2, 8, 7, 5}, 11)}};
  rt::Session plain(m, {.optimization = OptLevel::kNone, .threads = 2});
  auto want = plain.run(feed);
  for (bool reference : {false, true}) {
    rt::Session blocked(m, {.optimization = OptLevel::kLayout, .threads = 2, .reference_kernels = reference});
    expect_same(want, blocked.run(feed));
    const ir::Graph& g = blocked.model().graph;
    EXPECT_EQ(count(g, "GlobalAveragePool") + count(g, "GlobalMaxPool"), 0u);
    EXPECT_EQ(count(g, "BlockedAveragePool"), 1u);
    EXPECT_EQ(count(g, "BlockedMaxPool"), 1u);
    EXPECT_EQ(count(g, "ReorderFromBlocked"), 2u);  // the two pooled outputs, nothing else
  }
}

// A strided 1x1 convolution (ResNet's downsample) runs as a 1x1 subsampling and a stride-1 convolution.
TEST(BlockedLayout, StridedPointwiseConvolutionSubsamples) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", F({Dim::of(1), Dim::of(16), Dim::of(9), Dim::of(9)}));
  auto c = b.node("Conv", {x, b.random_normal("w1", {24, 16, 3, 3}, 0.3f)},
                  {Attribute::of_ints("pads", {1, 1, 1, 1})});
  auto d = b.node("Conv", {c, b.random_normal("w2", {32, 24, 1, 1}, 0.3f), b.random_normal("b2", {32}, 0.1f)},
                  {Attribute::of_ints("strides", {2, 2})});
  b.output(d, F({Dim::of(1), Dim::of(32), Dim::of(5), Dim::of(5)}));
  std::vector<std::pair<std::string, rt::Value>> feed{{"x", random_tensor({1, 16, 9, 9}, 13)}};
  rt::Session plain(m, {.optimization = OptLevel::kNone, .threads = 2});
  auto want = plain.run(feed);
  for (bool reference : {false, true}) {
    rt::Session blocked(m, {.optimization = OptLevel::kLayout, .threads = 2, .reference_kernels = reference});
    expect_same(want, blocked.run(feed));
    EXPECT_EQ(count(blocked.model().graph, "BlockedMaxPool"), 1u);
    EXPECT_EQ(count(blocked.model().graph, "BlockedConv"), 2u);
  }
}

TEST(BlockedLayout, IsIdempotentAndOnlyAtTheLayoutLevel) {
  ir::Model m = cnn();
  ir::Model ext = m;
  optimize(ext, rt::cpu_target(OptLevel::kExtended));
  EXPECT_EQ(count(ext.graph, "BlockedConv"), 0u);
  ir::Model lay = m;
  auto log = optimize(lay, rt::cpu_target(OptLevel::kLayout));
  EXPECT_GT(count(lay.graph, "BlockedConv"), 0u);
  EXPECT_TRUE(optimize(lay, rt::cpu_target(OptLevel::kLayout)).empty());
  EXPECT_TRUE(lay.opset_version(ops::layout::kDomain).has_value());
}

// Without static channel information the pass leaves the graph alone, and the session still runs it.
TEST(BlockedLayout, LeavesNonConstantWeightsAlone) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", F({Dim::of(1), Dim::of(16), Dim::of(5), Dim::of(5)}));
  auto w = b.input("w", F({Dim::of(16), Dim::of(16), Dim::of(3), Dim::of(3)}));
  b.output(b.node("Conv", {x, w}), F({Dim::of(1), Dim::of(16), Dim::of(3), Dim::of(3)}));
  ir::Model lay = m;
  EXPECT_TRUE(optimize(lay, rt::cpu_target(OptLevel::kLayout)).empty() ||
              count(lay.graph, "BlockedConv") == 0);
  EXPECT_EQ(count(lay.graph, "BlockedConv"), 0u);
}

// One blocked op between two reorders, so that only real channels are compared.
struct ConvCase {
  int64_t cin, cout, group, k, stride, dilation, pad, block;
  bool bias, z;
  std::string activation;
};

ir::Model blocked_conv_model(const ConvCase& c, int64_t h) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}, {ops::layout::kDomain, 1}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", F({Dim::of(2), Dim::of(c.cin), Dim::of(h), Dim::of(h)}));
  auto block = Attribute::of_int("block", c.block);
  bool plain_x = c.group == 1 && c.cin < c.block;
  std::string xb = plain_x ? x : b.nodes("ReorderToBlocked", {x}, {block}, "to", 1, ops::layout::kDomain)[0];
  std::vector<std::string> in{xb, b.random_normal("w", {c.cout, c.cin / c.group, c.k, c.k}, 0.3f)};
  in.push_back(c.bias ? b.random_normal("b", {c.cout}, 0.2f) : "");
  int64_t out = (h + 2 * c.pad - c.dilation * (c.k - 1) - 1) / c.stride + 1;
  if (c.z) {
    auto z = b.input("z", F({Dim::of(2), Dim::of(c.cout), Dim::of(out), Dim::of(out)}));
    in.push_back(b.nodes("ReorderToBlocked", {z}, {block}, "zb", 1, ops::layout::kDomain)[0]);
  }
  std::vector<Attribute> attrs{block, Attribute::of_int("group", c.group),
                               Attribute::of_ints("strides", {c.stride, c.stride}),
                               Attribute::of_ints("dilations", {c.dilation, c.dilation}),
                               Attribute::of_ints("pads", {c.pad, c.pad, c.pad, c.pad})};
  if (!c.activation.empty()) attrs.push_back(Attribute::of_string("activation", c.activation));
  if (c.activation == "Clip") attrs.push_back(Attribute::of_floats("activation_params", {-0.5f, 0.5f}));
  if (c.activation == "HardSigmoid") attrs.push_back(Attribute::of_floats("activation_params", {0.3f, 0.4f}));
  auto y = b.nodes("BlockedConv", in, attrs, "conv", 1, ops::layout::kDomain)[0];
  auto back = b.nodes("ReorderFromBlocked", {y}, {Attribute::of_int("channels", c.cout)}, "from", 1,
                      ops::layout::kDomain)[0];
  b.output(back, F({Dim::of(2), Dim::of(c.cout), Dim::of(out), Dim::of(out)}));
  return m;
}

std::vector<rt::Value> run(const ir::Model& m, bool reference,
                           const std::vector<std::pair<std::string, rt::Value>>& f,
                           std::string* kernel_used = nullptr, int threads = 2) {
  rt::Session s(
      m,
      {.optimization = OptLevel::kNone, .threads = threads, .profile = true, .reference_kernels = reference});
  auto out = s.run(f);
  if (kernel_used)
    for (const auto& e : s.last_stats().events)
      if (e.op_type == "BlockedConv" || e.op_type == "BlockedMaxPool" || e.op_type == "BlockedAveragePool")
        *kernel_used = e.kernel;
  return out;
}

// The fast kernels (oneDNN's) give the reference kernels' outputs on feed `f`.
void expect_fast_matches_reference(const ir::Model& m,
                                   const std::vector<std::pair<std::string, rt::Value>>& f) {
  std::string fast_kernel;
  auto got = run(m, false, f, &fast_kernel);
  expect_same(run(m, true, f), got);
  EXPECT_EQ(fast_kernel, "dnnl");
}

// One blocked pool `op` between two reorders, over x [dims] of 20 channels.
ir::Model blocked_pool_model(const std::string& op, std::vector<Dim> dims, int64_t block,
                             std::vector<Attribute> attrs) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}, {ops::layout::kDomain, 1}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", F(std::move(dims)));
  auto xb =
      b.nodes("ReorderToBlocked", {x}, {Attribute::of_int("block", block)}, "to", 1, ops::layout::kDomain)[0];
  auto y = b.nodes(op, {xb}, std::move(attrs), "pool", 1, ops::layout::kDomain)[0];
  b.output(b.nodes("ReorderFromBlocked", {y}, {Attribute::of_int("channels", 20)}, "from", 1,
                   ops::layout::kDomain)[0]);
  return m;
}

TEST(BlockedKernels, ConvMatchesReference) {
  const ConvCase cases[] = {
      {3, 24, 1, 3, 1, 1, 1, 16, true, false, "Relu"},          // plain NCHW input, padded output
      {24, 24, 24, 3, 2, 1, 1, 16, true, false, "Clip"},        // depthwise, padded, stride 2
      {32, 40, 1, 1, 1, 1, 0, 16, false, true, "Relu"},         // 1x1 with Z then Relu
      {40, 40, 1, 3, 1, 2, 2, 8, true, true, ""},               // dilation, Z, block 8
      {32, 32, 2, 3, 1, 1, 1, 16, true, false, "HardSigmoid"},  // grouped, whole blocks per group
      {16, 8, 1, 5, 2, 1, 2, 8, false, false, "Sigmoid"},
      // 1x1, stride 1, blocks of 16: Tessera's own kernel (pointwise_conv.h) with AVX-512
      {20, 33, 1, 1, 1, 1, 0, 16, true, true, "Clip"},   // padded in and out, bias, Z, Clip
      {48, 64, 1, 1, 1, 1, 0, 16, true, false, ""},      // even output blocks, no activation
      {32, 32, 1, 1, 1, 1, 0, 16, true, false, "Tanh"},  // an activation it leaves to oneDNN
      // depthwise, blocks of 16: Tessera's own kernel (depthwise_conv.h) with 8 threads and AVX-512
      {32, 32, 32, 3, 1, 1, 1, 16, true, true, "Relu"},   // stride 1, Z
      {20, 20, 20, 5, 1, 1, 2, 16, false, false, ""},     // 5x5, padded channels
      {16, 16, 16, 3, 1, 2, 2, 16, true, false, "Clip"},  // dilated: left to oneDNN
  };
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << "cin " << c.cin << " cout " << c.cout << " group " << c.group
                                      << " block " << c.block << " act " << c.activation);
    ir::Model m = blocked_conv_model(c, 9);
    std::vector<std::pair<std::string, rt::Value>> f{{"x", random_tensor({2, c.cin, 9, 9}, 11)}};
    int64_t out = (9 + 2 * c.pad - c.dilation * (c.k - 1) - 1) / c.stride + 1;
    if (c.z) f.emplace_back("z", random_tensor({2, c.cout, out, out}, 12));
    expect_fast_matches_reference(m, f);
    // With 8 threads, 1x1 and depthwise convolutions take Tessera's own kernels where AVX-512 is.
    expect_same(run(m, true, f), run(m, false, f, nullptr, 8));
  }
}

// 3x3 stride-1 convolutions over 16-channel multiples with outputs of 14x14 or more run Winograd's
// algorithm on oneDNN (winograd_wanted in dnnl_blocked_kernel.cpp): its rounding stays within the
// suite's tolerance (relative 1e-4, absolute 1e-5) of the reference's direct sums, with bias, Z and
// activations, and at sizes that leave partial Winograd tiles (15, 17).
TEST(BlockedKernels, WinogradConvMatchesReference) {
  const ConvCase cases[] = {
      {32, 48, 1, 3, 1, 1, 1, 16, true, false, "Relu"},
      {64, 64, 1, 3, 1, 1, 1, 16, true, true, "Relu"},
      {16, 32, 1, 3, 1, 1, 1, 16, false, false, ""},
  };
  for (const ConvCase& c : cases)
    for (int64_t h : {14, 15, 17}) {
      SCOPED_TRACE(::testing::Message() << "cin " << c.cin << " cout " << c.cout << " size " << h);
      ir::Model m = blocked_conv_model(c, h);
      std::vector<std::pair<std::string, rt::Value>> f{{"x", random_tensor({2, c.cin, h, h}, 21)}};
      if (c.z) f.emplace_back("z", random_tensor({2, c.cout, h, h}, 22));
      expect_fast_matches_reference(m, f);
    }
}

TEST(BlockedKernels, PoolsMatchReference) {
  for (int64_t block : {8, 16}) {
    for (const char* op : {"BlockedMaxPool", "BlockedAveragePool"}) {
      for (int64_t ceil : {0, 1}) {
        SCOPED_TRACE(::testing::Message() << op << " block " << block << " ceil " << ceil);
        ir::Model m = blocked_pool_model(
            op, {Dim::of(1), Dim::of(20), Dim::of(10), Dim::of(10)}, block,
            {Attribute::of_ints("kernel_shape", {3, 3}), Attribute::of_ints("strides", {2, 2}),
             Attribute::of_ints("pads", {1, 0, 1, 0}), Attribute::of_int("ceil_mode", ceil)});
        std::vector<std::pair<std::string, rt::Value>> f{{"x", random_tensor({1, 20, 10, 10}, 3)}};
        expect_fast_matches_reference(m, f);
      }
    }
  }
}

// A 1x1 window with strides (the subsampling before a strided 1x1 convolution) is a copy in the fast
// kernel: checked against the reference on odd sizes, with unequal strides, batch 2.
TEST(BlockedKernels, SubsamplingMatchesReference) {
  for (int64_t block : {8, 16}) {
    for (auto strides : {std::vector<int64_t>{2, 2}, std::vector<int64_t>{3, 2}}) {
      SCOPED_TRACE(::testing::Message()
                   << "block " << block << " strides " << strides[0] << "x" << strides[1]);
      ir::Model m = blocked_pool_model(
          "BlockedMaxPool", {Dim::of(2), Dim::of(20), Dim::of(11), Dim::of(9)}, block,
          {Attribute::of_ints("kernel_shape", {1, 1}), Attribute::of_ints("strides", strides)});
      std::vector<std::pair<std::string, rt::Value>> f{{"x", random_tensor({2, 20, 11, 9}, 5)}};
      expect_fast_matches_reference(m, f);
    }
  }
}

TEST(BlockedKernels, BadShapesAreClearErrors) {
  // Z must have the output's blocked shape: here X's blocked twin, 6x6, for a stride-2 output of 3x3.
  ir::Model m = blocked_conv_model({16, 16, 1, 3, 2, 1, 1, 16, true, false, ""}, 6);
  m.graph.nodes[1].inputs.push_back(m.graph.nodes[0].outputs[0]);
  std::vector<std::pair<std::string, rt::Value>> f{{"x", random_tensor({2, 16, 6, 6}, 1)}};
  for (bool reference : {false, true}) {
    rt::Session s(m, {.optimization = OptLevel::kNone, .threads = 1, .reference_kernels = reference});
    try {
      s.run(f);
      ADD_FAILURE() << "a Z of the wrong shape ran";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("Z"), std::string::npos) << e.what();
    }
  }
  // ReorderFromBlocked asked for more channels than the blocks hold: the checker refuses the model.
  ir::Model bad = blocked_conv_model({16, 16, 1, 3, 1, 1, 1, 16, true, false, ""}, 6);
  for (auto& a : bad.graph.nodes.back().attributes)
    if (a.name == "channels") a.i = 40;
  EXPECT_THROW(rt::Session(bad, {.optimization = OptLevel::kNone}), rt::RunError);
}

}  // namespace
}  // namespace tessera::passes
