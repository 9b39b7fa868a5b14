// fold_transpose_reshape_chain: random Transpose -> Reshape -> Transpose chains over random shapes, each
// evaluated by the reference kernels with no optimisation and again at the basic level. An iota input
// decides what the rule must do: the chain keeps the memory order exactly when its output, read flat, is
// the iota again; then no Transpose may be left (the rule fired), otherwise one must be (it did not fold
// a chain that moves elements). Outputs agree exactly either way (the chain only moves values). Then the
// case it was made for: ViT's patch embedding under the NHWC layout, whose layout Transpose back to NCHW,
// Reshape and Transpose(0, 2, 1) become one Reshape of the channels-last output; and the switch by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "ir/builder.h"
#include "layout_test_util.h"
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

constexpr const char* kRule = "fold_transpose_reshape_chain";

ir::Type static_type(const std::vector<int64_t>& dims) {
  std::vector<Dim> d;
  for (int64_t v : dims) d.push_back(Dim::of(v));
  return F(d);
}

std::vector<int64_t> permuted(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out;
  for (int64_t p : perm) out.push_back(dims[static_cast<size_t>(p)]);
  return out;
}

int64_t numel(const std::vector<int64_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

// A random regrouping of `dims`: adjacent axes merged, or an axis split into two factors.
std::vector<int64_t> regroup(const std::vector<int64_t>& dims, std::mt19937& rng) {
  std::vector<int64_t> out;
  for (size_t k = 0; k < dims.size(); ++k) {
    const int choice = static_cast<int>(rng() % 3);
    if (choice == 0 && k + 1 < dims.size()) {
      out.push_back(dims[k] * dims[k + 1]);
      ++k;
    } else if (choice == 1 && dims[k] % 2 == 0 && dims[k] > 2) {
      out.push_back(2);
      out.push_back(dims[k] / 2);
    } else {
      out.push_back(dims[k]);
    }
  }
  return out;
}

std::vector<int64_t> random_perm(size_t rank, std::mt19937& rng) {
  std::vector<int64_t> p(rank);
  std::iota(p.begin(), p.end(), 0);
  std::shuffle(p.begin(), p.end(), rng);
  return p;
}

struct Chain {
  std::vector<int64_t> x, p1, r, p2;
};

ir::Model chain_model(const Chain& c) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", static_type(c.x));
  auto t1 = b.node("Transpose", {x}, {Attribute::of_ints("perm", c.p1)});
  auto r = b.node("Reshape", {t1, b.constant_ints("shape", c.r)});
  auto t2 = b.node("Transpose", {r}, {Attribute::of_ints("perm", c.p2)});
  b.output(b.node("Neg", {t2}), static_type(permuted(c.r, c.p2)));  // a reader after the chain
  return m;
}

rt::Value iota(const std::vector<int64_t>& dims) {
  std::vector<float> v(static_cast<size_t>(numel(dims)));
  std::iota(v.begin(), v.end(), 1.f);
  return rt::Tensor::from_vector<float>(DataType::kFloat, dims, v);
}

// The chain's second Transpose chosen, half the time, as the permutation that sorts the reshaped axes by
// their stride in x (found on the iota), which makes the chain a reshape whenever one can be.
std::vector<int64_t> sorting_perm(const Chain& c) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", static_type(c.x));
  auto t1 = b.node("Transpose", {x}, {Attribute::of_ints("perm", c.p1)});
  b.output(b.node("Reshape", {t1, b.constant_ints("shape", c.r)}), static_type(c.r));
  rt::Session s(m, {.optimization = OptLevel::kNone, .threads = 1});
  const rt::Tensor y = s.run({{"x", iota(c.x)}})[0].tensor();
  std::vector<int64_t> stride(c.r.size(), 0);
  int64_t step = 1;
  for (size_t k = c.r.size(); k-- > 0;) {
    if (c.r[k] > 1) stride[k] = static_cast<int64_t>(y.to_double(step) - y.to_double(0));
    step *= c.r[k];
  }
  std::vector<int64_t> p(c.r.size());
  std::iota(p.begin(), p.end(), 0);
  std::stable_sort(p.begin(), p.end(), [&](int64_t a, int64_t b) {
    return stride[static_cast<size_t>(a)] > stride[static_cast<size_t>(b)];
  });
  return p;
}

TEST(PassesViewChain, RandomChainsFoldExactlyWhenTheyKeepTheOrder) {
  std::mt19937 rng(2026);
  int folded = 0, kept = 0;
  for (int trial = 0; trial < 60; ++trial) {
    Chain c;
    const size_t rank = 2 + rng() % 3;
    for (size_t k = 0; k < rank; ++k) c.x.push_back(1 + static_cast<int64_t>(rng() % 4));
    c.p1 = random_perm(rank, rng);
    c.r = regroup(permuted(c.x, c.p1), rng);
    c.p2 = trial % 2 == 0 ? sorting_perm(c) : random_perm(c.r.size(), rng);
    ir::Model m = chain_model(c);
    const std::string what = ::testing::PrintToString(c.x) + " perm " + ::testing::PrintToString(c.p1) +
                             " reshape " + ::testing::PrintToString(c.r) + " perm " +
                             ::testing::PrintToString(c.p2);
    rt::Session plain(m, {.optimization = OptLevel::kNone, .threads = 1});
    rt::Session basic(m, {.optimization = OptLevel::kBasic, .threads = 1});
    const rt::Tensor want = plain.run({{"x", iota(c.x)}})[0].tensor();
    const rt::Tensor got = basic.run({{"x", iota(c.x)}})[0].tensor();
    EXPECT_EQ(rt::compare_values(rt::Value(want), rt::Value(got), {0, 0}), "") << what;
    bool keeps = true;  // Neg(iota) read flat is -1, -2, ... exactly when the chain keeps the order
    for (int64_t i = 0; i < want.numel() && keeps; ++i)
      keeps = want.to_double(i) == -static_cast<double>(i + 1);
    const size_t transposes = count(basic.model().graph, "Transpose");
    EXPECT_EQ(transposes == 0, keeps) << what << ": " << transposes << " Transpose left";
    (keeps ? folded : kept) += 1;
  }
  // Both kinds were drawn.
  EXPECT_GE(folded, 10);
  EXPECT_GE(kept, 10);
}

// Longer chains and an intermediate read elsewhere: the folded Reshape reads the chain's input, the shared
// value stays for its other reader.
TEST(PassesViewChain, SharedIntermediateStaysForItsOtherReader) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", static_type({2, 3, 4, 5}));
  auto t1 = b.node("Transpose", {x}, {Attribute::of_ints("perm", {0, 3, 1, 2})});  // [2, 5, 3, 4]
  auto r = b.node("Reshape", {t1, b.constant_ints("s", {2, 5, 12})});
  auto t2 = b.node("Transpose", {r}, {Attribute::of_ints("perm", {0, 2, 1})});  // [2, 12, 5]
  auto r2 = b.node("Reshape", {t2, b.constant_ints("s2", {24, 5})});
  b.output(b.node("Relu", {r2}), static_type({24, 5}));
  b.output(b.node("Sigmoid", {t1}), static_type({2, 5, 3, 4}));
  rt::Session plain(m, {.optimization = OptLevel::kNone, .threads = 1});
  rt::Session basic(m, {.optimization = OptLevel::kBasic, .threads = 1});
  const std::vector<std::pair<std::string, rt::Value>> feed = {{"x", random_tensor({2, 3, 4, 5}, 7)}};
  expect_same(plain.run(feed), basic.run(feed));
  EXPECT_EQ(count(basic.model().graph, "Transpose"), 1u);  // t1, for the Sigmoid
  EXPECT_EQ(count(basic.model().graph, "Reshape"), 1u);
}

// ViT-B/16's patch embedding in miniature: Conv 4x4 stride 4 -> Reshape [N, D, P] -> Transpose(0, 2, 1).
// Under the NHWC layout (a GPU session's, with the CPU's kernels as the oracle) the Conv becomes NhwcConv
// and the layout's Transpose back to NCHW starts the chain: all of it becomes one Reshape of the
// channels-last output; only the input's Transpose to NHWC is left.
TEST(PassesViewChain, PatchEmbeddingUnderTheNhwcLayout) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}};
  GraphBuilder b(m.graph);
  auto x = b.input("x", static_type({2, 3, 16, 16}));
  auto c = b.node("Conv", {x, b.random_normal("w", {8, 3, 4, 4}, 0.3f), b.random_normal("bias", {8}, 0.1f)},
                  {Attribute::of_ints("strides", {4, 4})});
  auto r = b.node("Reshape", {c, b.constant_ints("s", {2, 8, 16})});
  auto t = b.node("Transpose", {r}, {Attribute::of_ints("perm", {0, 2, 1})});
  b.output(b.node("Relu", {t}), static_type({2, 16, 8}));
  const std::vector<std::pair<std::string, rt::Value>> feed = {{"x", random_tensor({2, 3, 16, 16}, 3)}};
  rt::Session plain(m, {.optimization = OptLevel::kNone, .threads = 1});
  rt::SessionOptions o{.optimization = OptLevel::kLayout, .threads = 1, .layout = Layout::kNhwc};
  rt::Session nhwc(m, o);
  expect_same(plain.run(feed), nhwc.run(feed));
  EXPECT_EQ(count(nhwc.model().graph, "NhwcConv"), 1u);
  EXPECT_EQ(count(nhwc.model().graph, "Transpose"), 1u) << "only the input's";
  o.disabled_rules = {kRule};
  rt::Session off(m, o);
  expect_same(plain.run(feed), off.run(feed));
  EXPECT_EQ(count(off.model().graph, "Transpose"), 3u);
}

TEST(PassesViewChain, IsListedAndSwitchedOffByName) {
  EXPECT_TRUE(rule_exists(kRule));
  // [N, P, C] read as [N, C, P], P split in two, then the channels last again: a reshape of x.
  Chain c{{2, 4, 5}, {0, 2, 1}, {2, 5, 2, 2}, {0, 2, 3, 1}};
  ir::Model m = chain_model(c);
  rt::Session on(m, {.optimization = OptLevel::kBasic, .threads = 1});
  EXPECT_EQ(count(on.model().graph, "Transpose"), 0u);
  rt::Session off(m, {.optimization = OptLevel::kBasic, .threads = 1, .disabled_rules = {kRule}});
  // fuse_consecutive_transposes cannot see through the Reshape: both stay.
  EXPECT_EQ(count(off.model().graph, "Transpose"), 2u);
}

}  // namespace
}  // namespace tessera::passes
