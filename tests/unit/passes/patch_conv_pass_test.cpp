// decompose_patch_conv: convolutions whose windows tile the input (kernel == stride, no pads, one group)
// become Reshape, Transpose, Reshape, Gemm, Reshape, Transpose on a CUDA-like target (the CPU's kernels
// stand in for the GPU's), computing what the Conv computes (3 and 5 channels, square and oblong windows,
// with and without a bias); ViT's patch embedding under the NHWC layout keeps one Transpose (the patches)
// and no input Transpose; what is not a tiling stays Conv; the CPU target and --disable-rule leave it.
#include <gtest/gtest.h>

#include <algorithm>
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

constexpr const char* kRule = "decompose_patch_conv";

ir::Type F(std::vector<int64_t> dims) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(Dim::of(d));
  return ir::Type::tensor(DataType::kFloat, s);
}

int count(const ir::Graph& g, std::string_view op) {
  return static_cast<int>(
      std::count_if(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) { return n.op_type == op; }));
}

Target cuda_like_target(OptLevel level, std::vector<std::string> disabled = {}) {
  Target t = rt::cpu_target(level);
  t.backend = "cuda";
  t.layout = Layout::kNhwc;
  t.disabled_rules = std::move(disabled);
  return t;
}

rt::Value random_value(const std::vector<int64_t>& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  int64_t n = 1;
  for (int64_t x : dims) n *= x;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = d(rng);
  return rt::Tensor::from_vector<float>(DataType::kFloat, dims, v);
}

// `m` optimised for `t`, run on the CPU against the model as written (x the only input).
ir::Model optimise_and_compare(const ir::Model& m, const Target& t, const std::vector<int64_t>& x) {
  ir::Model opt = m;
  optimize(opt, t);
  const std::vector<std::pair<std::string, rt::Value>> feed = {{"x", random_value(x, 5)}};
  rt::Session ref(m, {.optimization = OptLevel::kNone, .threads = 1});
  rt::Session got(opt, {.optimization = OptLevel::kNone, .threads = 1});
  auto want = ref.run(feed), have = got.run(feed);
  EXPECT_EQ(want.size(), have.size());
  for (size_t i = 0; i < std::min(want.size(), have.size()); ++i)
    EXPECT_EQ(rt::compare_values(want[i], have[i], {1e-4, 1e-5}), "") << "output " << i;
  return opt;
}

// x [N, C, H, W] -> Conv by w [M, C, kH, kW] (+ bias) with `attrs` -> Relu -> y.
ir::Model conv_model(const std::vector<int64_t>& x, const std::vector<int64_t>& w, bool bias,
                     std::vector<Attribute> attrs) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  std::vector<std::string> ins = {b.input("x", F(x)), b.random_normal("w", w, 0.2f)};
  if (bias) ins.push_back(b.random_normal("b", {w[0]}, 0.5f));
  b.output(b.node("Relu", {b.node("Conv", ins, std::move(attrs))}), ir::Type::tensor(DataType::kFloat));
  return m;
}

TEST(PassesPatchConv, TilingConvolutionsBecomeAProduct) {
  struct Case {
    std::vector<int64_t> x, w;
    bool bias;
  };
  for (const Case& c : {Case{{2, 3, 64, 48}, {24, 3, 16, 16}, true},
                        Case{{1, 5, 12, 15}, {7, 5, 2, 3}, false}, Case{{3, 4, 8, 8}, {6, 4, 4, 4}, true}}) {
    const std::vector<Attribute> attrs = {Attribute::of_ints("strides", {c.w[2], c.w[3]})};
    ir::Model opt =
        optimise_and_compare(conv_model(c.x, c.w, c.bias, attrs), cuda_like_target(OptLevel::kBasic), c.x);
    EXPECT_EQ(count(opt.graph, "Conv"), 0) << ::testing::PrintToString(c.w);
    EXPECT_EQ(count(opt.graph, "Gemm"), 1);
    EXPECT_EQ(count(opt.graph, "Transpose"), 2);  // the patches, and the result back to NCHW
  }
  // Explicit zero pads, kernel_shape and VALID are tilings too.
  const std::vector<Attribute> attrs = {
      Attribute::of_ints("strides", {4, 4}), Attribute::of_ints("pads", {0, 0, 0, 0}),
      Attribute::of_ints("kernel_shape", {4, 4}), Attribute::of_string("auto_pad", "VALID")};
  ir::Model opt = optimise_and_compare(conv_model({1, 3, 8, 12}, {5, 3, 4, 4}, true, attrs),
                                       cuda_like_target(OptLevel::kBasic), {1, 3, 8, 12});
  EXPECT_EQ(count(opt.graph, "Conv"), 0);
}

// A batch that varies: the Reshapes take -1 there.
TEST(PassesPatchConv, BatchThatVaries) {
  ir::Model m = conv_model({2, 3, 16, 12}, {6, 3, 4, 4}, true, {Attribute::of_ints("strides", {4, 4})});
  m.graph.inputs[0].type = ir::Type::tensor(
      DataType::kFloat, ir::Shape{Dim::symbol("batch"), Dim::of(3), Dim::of(16), Dim::of(12)});
  for (int64_t batch : {1, 3}) {
    ir::Model opt = optimise_and_compare(m, cuda_like_target(OptLevel::kBasic), {batch, 3, 16, 12});
    EXPECT_EQ(count(opt.graph, "Conv"), 0);
  }
}

TEST(PassesPatchConv, OtherConvolutionsStay) {
  struct Case {
    std::vector<int64_t> x, w;
    std::vector<Attribute> attrs;
  };
  const std::vector<Case> cases = {
      {{1, 3, 16, 16},
       {4, 3, 4, 4},
       {Attribute::of_ints("strides", {4, 4}), Attribute::of_ints("pads", {1, 1, 1, 1})}},
      {{1, 3, 18, 16}, {4, 3, 4, 4}, {Attribute::of_ints("strides", {4, 4})}},  // 18 rows: not a tiling
      {{1, 3, 16, 16}, {4, 3, 4, 4}, {Attribute::of_ints("strides", {2, 2})}},
      {{1, 4, 16, 16}, {4, 2, 4, 4}, {Attribute::of_ints("strides", {4, 4}), Attribute::of_int("group", 2)}},
      {{1, 4, 16, 16}, {4, 4, 1, 1}, {}},
      {{1, 3, 16, 16},
       {4, 3, 4, 4},
       {Attribute::of_ints("strides", {4, 4}), Attribute::of_ints("dilations", {2, 2})}},
  };
  for (const Case& c : cases) {
    ir::Model opt =
        optimise_and_compare(conv_model(c.x, c.w, true, c.attrs), cuda_like_target(OptLevel::kBasic), c.x);
    EXPECT_EQ(count(opt.graph, "Conv"), 1) << ::testing::PrintToString(c.x) << ::testing::PrintToString(c.w);
  }
  // The CPU keeps its convolution, and the rule switches off by name.
  ir::Model m = conv_model({1, 3, 16, 16}, {4, 3, 4, 4}, true, {Attribute::of_ints("strides", {4, 4})});
  EXPECT_EQ(count(optimise_and_compare(m, rt::cpu_target(OptLevel::kBasic), {1, 3, 16, 16}).graph, "Conv"),
            1);
  EXPECT_EQ(count(optimise_and_compare(m, cuda_like_target(OptLevel::kBasic, {kRule}), {1, 3, 16, 16}).graph,
                  "Conv"),
            1);
  EXPECT_TRUE(rule_exists(kRule));
}

// ViT's patch embedding (Conv 4x4/4 -> Reshape [N, D, P] -> Transpose (0, 2, 1) -> the class token
// Concat -> + positions) at the layout level with the NHWC layout: the only Transpose left is the patch
// copy (no NhwcConv, no input Transpose, no layout Transpose back); with the rule off, NhwcConv and its
// input Transpose.
TEST(PassesPatchConv, VitPatchEmbeddingUnderTheNhwcLayout) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", F({2, 3, 16, 16}));
  auto c = b.node("Conv", {x, b.random_normal("w", {8, 3, 4, 4}, 0.3f), b.random_normal("bias", {8}, 0.1f)},
                  {Attribute::of_ints("strides", {4, 4})});
  auto r = b.node("Reshape", {c, b.constant_ints("s", {2, 8, 16})});
  auto t = b.node("Transpose", {r}, {Attribute::of_ints("perm", {0, 2, 1})});
  auto cls = b.random_normal("cls", {2, 1, 8}, 1.f);
  auto cat = b.node("Concat", {cls, t}, {Attribute::of_int("axis", 1)});
  b.output(b.node("Add", {cat, b.random_normal("pos", {1, 17, 8}, 1.f)}), F({2, 17, 8}));
  ir::Model on = optimise_and_compare(m, cuda_like_target(OptLevel::kLayout), {2, 3, 16, 16});
  EXPECT_EQ(count(on.graph, "Transpose"), 1);
  EXPECT_EQ(count(on.graph, "NhwcConv"), 0);
  EXPECT_EQ(count(on.graph, "Gemm"), 1);
  ir::Model off = optimise_and_compare(m, cuda_like_target(OptLevel::kLayout, {kRule}), {2, 3, 16, 16});
  EXPECT_EQ(count(off.graph, "NhwcConv"), 1);
  EXPECT_EQ(count(off.graph, "Transpose"), 1);  // the input's
}

}  // namespace
}  // namespace tessera::passes
