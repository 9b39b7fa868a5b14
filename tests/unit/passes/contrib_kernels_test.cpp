// The contrib kernels the extended level fuses into, checked against plain loops for what the rule
// tests do not reach: FusedMatMul's batch transposes, the simplified (RMS) and skip layer norms with
// every optional input and output, FusedConv's Z input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "ir/builder.h"
#include "runtime/session.h"
#include "runtime/value_io.h"

namespace tessera::passes {
namespace {

using ir::Attribute;
using ir::DataType;

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

rt::Tensor tensor(std::vector<int64_t> dims, const std::vector<float>& v) {
  return rt::Tensor::from_vector<float>(DataType::kFloat, std::move(dims), v);
}

// Runs one com.microsoft node on the given inputs (empty name: omitted) and returns its outputs.
std::vector<rt::Value> run_node(const std::string& op,
                                const std::vector<std::pair<std::string, rt::Tensor>>& inputs,
                                std::vector<Attribute> attrs, size_t outputs,
                                const std::vector<bool>& wanted = {}) {
  ir::Model m;
  m.ir_version = 9;
  m.opset_imports = {{"", 17}, {"com.microsoft", 1}};
  ir::Node n;
  n.op_type = op;
  n.domain = "com.microsoft";
  n.attributes = std::move(attrs);
  std::vector<std::pair<std::string, rt::Value>> feeds;
  for (const auto& [name, t] : inputs) {
    n.inputs.push_back(name);
    if (name.empty()) continue;
    ir::Shape s;
    for (int64_t d : t.shape()) s.push_back(ir::Dim::of(d));
    m.graph.inputs.push_back({name, ir::Type::tensor(t.dtype(), s), {}, {}});
    feeds.emplace_back(name, t);
  }
  for (size_t k = 0; k < outputs; ++k) {
    bool want = wanted.empty() || wanted[k];
    n.outputs.push_back(want ? "out" + std::to_string(k) : "");
    if (want) m.graph.outputs.push_back({"out" + std::to_string(k), {}, {}, {}});
  }
  m.graph.add_node(std::move(n));
  rt::Session s(std::move(m), {.optimization = rt::OptLevel::kNone, .threads = 1});
  return s.run(feeds);
}

void expect_close(const rt::Value& got, std::vector<int64_t> dims, const std::vector<float>& want) {
  EXPECT_EQ(rt::compare_values(rt::Value(tensor(std::move(dims), want)), got, {1e-4, 1e-5}), "");
}

TEST(PassesContribKernels, FusedMatMulBatchTransposes) {
  // A [M=2, B=3, K=4] read as [3, 2, 4] (transBatchA); B [3, N=5, K=4] with transB.
  auto a = random_floats(24, 1), b = random_floats(60, 2);
  auto outs = run_node("FusedMatMul", {{"a", tensor({2, 3, 4}, a)}, {"b", tensor({3, 5, 4}, b)}},
                       {Attribute::of_float("alpha", 0.5f), Attribute::of_int("transBatchA", 1),
                        Attribute::of_int("transB", 1)},
                       1);
  std::vector<float> want(3 * 2 * 5);
  for (int bt = 0; bt < 3; ++bt)
    for (int m = 0; m < 2; ++m)
      for (int n = 0; n < 5; ++n) {
        float acc = 0;
        for (int k = 0; k < 4; ++k) acc += a[(m * 3 + bt) * 4 + k] * b[(bt * 5 + n) * 4 + k];
        want[(bt * 2 + m) * 5 + n] = 0.5f * acc;
      }
  expect_close(outs[0], {3, 2, 5}, want);
}

TEST(PassesContribKernels, FusedMatMulTransAWithBroadcast) {
  // A [K=3, M=2] transposed, B [2, 3, 4] batched: op(A) broadcasts over B's batch.
  auto a = random_floats(6, 3), b = random_floats(24, 4);
  auto outs = run_node("FusedMatMul", {{"a", tensor({3, 2}, a)}, {"b", tensor({2, 3, 4}, b)}},
                       {Attribute::of_int("transA", 1)}, 1);
  std::vector<float> want(2 * 2 * 4);
  for (int bt = 0; bt < 2; ++bt)
    for (int m = 0; m < 2; ++m)
      for (int n = 0; n < 4; ++n) {
        float acc = 0;
        for (int k = 0; k < 3; ++k) acc += a[k * 2 + m] * b[(bt * 3 + k) * 4 + n];
        want[(bt * 2 + m) * 4 + n] = acc;
      }
  expect_close(outs[0], {2, 2, 4}, want);
}

// Row-wise (RMS) normalisation of `x` (rows of h) with optional mean subtraction, scale and shift.
std::vector<float> normalize(const std::vector<float>& x, size_t h, bool simplified,
                             const std::vector<float>& g, const std::vector<float>& b, float eps,
                             std::vector<float>* inv_out = nullptr) {
  std::vector<float> y(x.size());
  for (size_t r = 0; r < x.size() / h; ++r) {
    double mean = 0, sq = 0;
    for (size_t j = 0; j < h; ++j) mean += x[r * h + j];
    mean = simplified ? 0 : mean / h;
    for (size_t j = 0; j < h; ++j) sq += (x[r * h + j] - mean) * (x[r * h + j] - mean);
    double inv = 1 / std::sqrt(sq / h + eps);
    if (inv_out) inv_out->push_back(static_cast<float>(inv));
    for (size_t j = 0; j < h; ++j)
      y[r * h + j] = static_cast<float>((x[r * h + j] - mean) * inv * g[j] + (b.empty() ? 0 : b[j]));
  }
  return y;
}

TEST(PassesContribKernels, SimplifiedLayerNormalization) {
  auto x = random_floats(24, 5), g = random_floats(8, 6);
  auto outs = run_node("SimplifiedLayerNormalization", {{"x", tensor({3, 8}, x)}, {"g", tensor({8}, g)}},
                       {Attribute::of_float("epsilon", 1e-5f)}, 2);
  std::vector<float> inv;
  expect_close(outs[0], {3, 8}, normalize(x, 8, true, g, {}, 1e-5f, &inv));
  expect_close(outs[1], {3, 1}, inv);
}

TEST(PassesContribKernels, ContribLayerNormalization) {
  auto x = random_floats(24, 7), g = random_floats(8, 8), b = random_floats(8, 9);
  auto outs = run_node("LayerNormalization",
                       {{"x", tensor({3, 8}, x)}, {"g", tensor({8}, g)}, {"b", tensor({8}, b)}}, {}, 1);
  expect_close(outs[0], {3, 8}, normalize(x, 8, false, g, b, 1e-5f));
}

TEST(PassesContribKernels, SkipLayerNormalizationWithBroadcastSkipAndSum) {
  // input [2, 3, 4], skip [3, 4] (broadcast over the batch), bias, and the sum as output 3.
  auto x = random_floats(24, 10), skip = random_floats(12, 11), g = random_floats(4, 12),
       beta = random_floats(4, 13), bias = random_floats(4, 14);
  auto outs = run_node("SkipLayerNormalization",
                       {{"x", tensor({2, 3, 4}, x)},
                        {"s", tensor({3, 4}, skip)},
                        {"g", tensor({4}, g)},
                        {"beta", tensor({4}, beta)},
                        {"bias", tensor({4}, bias)}},
                       {Attribute::of_float("epsilon", 1e-6f)}, 4, {true, false, false, true});
  std::vector<float> sum(24);
  for (size_t i = 0; i < 24; ++i) sum[i] = x[i] + skip[i % 12] + bias[i % 4];
  expect_close(outs[0], {2, 3, 4}, normalize(sum, 4, false, g, beta, 1e-6f));
  expect_close(outs[1], {2, 3, 4}, sum);
}

TEST(PassesContribKernels, SkipSimplifiedLayerNormalization) {
  auto x = random_floats(24, 15), skip = random_floats(24, 16), g = random_floats(4, 17),
       bias = random_floats(4, 18);
  auto outs = run_node("SkipSimplifiedLayerNormalization",
                       {{"x", tensor({2, 3, 4}, x)},
                        {"s", tensor({2, 3, 4}, skip)},
                        {"g", tensor({4}, g)},
                        {"bias", tensor({4}, bias)}},
                       {Attribute::of_float("epsilon", 1e-6f)}, 3, {true, false, true});
  std::vector<float> sum(24), inv;
  for (size_t i = 0; i < 24; ++i) sum[i] = x[i] + skip[i] + bias[i % 4];
  expect_close(outs[0], {2, 3, 4}, normalize(sum, 4, true, g, {}, 1e-6f, &inv));
  expect_close(outs[1], {2, 3, 1}, inv);
}

TEST(PassesContribKernels, BiasGelu) {
  auto x = random_floats(12, 19), b = random_floats(4, 20);
  auto outs = run_node("BiasGelu", {{"x", tensor({3, 4}, x)}, {"b", tensor({4}, b)}}, {}, 1);
  std::vector<float> want(12);
  for (size_t i = 0; i < 12; ++i) {
    double v = x[i] + b[i % 4];
    want[i] = static_cast<float>(v * 0.5 * (1 + std::erf(v / std::sqrt(2.0))));
  }
  expect_close(outs[0], {3, 4}, want);
}

TEST(PassesContribKernels, FastGeluAndQuickGelu) {
  auto x = random_floats(12, 24), b = random_floats(4, 25);
  auto fast = run_node("FastGelu", {{"x", tensor({3, 4}, x)}, {"b", tensor({4}, b)}}, {}, 1);
  auto quick = run_node("QuickGelu", {{"x", tensor({3, 4}, x)}}, {Attribute::of_float("alpha", 1.5f)}, 1);
  std::vector<float> want_fast(12), want_quick(12);
  for (size_t i = 0; i < 12; ++i) {
    double v = x[i] + b[i % 4];
    want_fast[i] =
        static_cast<float>(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
    want_quick[i] = static_cast<float>(x[i] / (1 + std::exp(-1.5 * x[i])));
  }
  expect_close(fast[0], {3, 4}, want_fast);
  expect_close(quick[0], {3, 4}, want_quick);
}

TEST(PassesContribKernels, BiasAdd) {
  auto x = random_floats(2 * 3 * 4, 26), b = random_floats(4, 27), skip = random_floats(2 * 3 * 4, 28);
  auto outs = run_node(
      "BiasAdd", {{"x", tensor({2, 3, 4}, x)}, {"b", tensor({4}, b)}, {"s", tensor({2, 3, 4}, skip)}}, {}, 1);
  std::vector<float> want(24);
  for (size_t i = 0; i < 24; ++i) want[i] = x[i] + b[i % 4] + skip[i];
  expect_close(outs[0], {2, 3, 4}, want);
}

TEST(PassesContribKernels, FusedConvWithZAndClip) {
  // A 1x1 convolution is a per-pixel matrix product, easy to write out.
  auto x = random_floats(2 * 3 * 3, 21), w = random_floats(2 * 2, 22), z = random_floats(2 * 3 * 3, 23);
  std::vector<rt::Value> outs;
  try {
    outs = run_node("FusedConv",
                    {{"x", tensor({1, 2, 3, 3}, x)},
                     {"w", tensor({2, 2, 1, 1}, w)},
                     {"", {}},
                     {"z", tensor({1, 2, 3, 3}, z)}},
                    {Attribute::of_string("activation", "Clip"),
                     Attribute::of_floats("activation_params", {-0.5f, 0.5f})},
                    1);
  } catch (const rt::RunError& e) {
    if (std::string(e.what()).find("Conv kernel") != std::string::npos) GTEST_SKIP() << e.what();
    throw;
  }
  std::vector<float> want(18);
  for (int oc = 0; oc < 2; ++oc)
    for (int p = 0; p < 9; ++p) {
      float acc = z[oc * 9 + p];
      for (int ic = 0; ic < 2; ++ic) acc += w[oc * 2 + ic] * x[ic * 9 + p];
      want[oc * 9 + p] = std::min(std::max(acc, -0.5f), 0.5f);
    }
  expect_close(outs[0], {1, 2, 3, 3}, want);
}

}  // namespace
}  // namespace tessera::passes
