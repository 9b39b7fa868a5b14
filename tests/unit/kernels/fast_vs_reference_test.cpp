// One harness for every fast CPU kernel: the same node runs on the fast kernel and on the reference
// kernel (SessionOptions::reference_kernels), on seeded random inputs, and the outputs must agree:
// elementwise ops within a number of ulps (Case::max_ulps) on inputs that cover the whole float line
// (Input::sweep: subnormals, zeros, infinities, NaN, huge and tiny magnitudes); dot products (MatMul,
// Gemm, Conv, FusedMatMul, MatMulBias) within the bound of a length-K float32 sum,
// |fast - ref| <= 2 K eps sum|a||b| (Case::dot: the sum of |a||b| is the reference run on |inputs|),
// on inputs of magnitudes 1e-3..1e3 of both signs (Input::wide); the rest relative 1e-4, absolute
// 1e-5 (float32 with different summation orders). The harness also checks
// that the fast kernel really ran (the profiler names it, and the count of hand-overs to the reference
// kernel, tessera::cpu::reference_fallbacks(), stays put), so a silent fallback cannot pass as a test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "accuracy/ulp.h"
#include "backends/cpu/dnnl_common.h"
#include "backends/cpu/gemm_f32.h"
#include "backends/cpu/gemv.h"
#include "ir/builder.h"
#include "runtime/dispatch.h"
#include "runtime/session.h"
#include "runtime/value_io.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;

namespace {

struct Input {
  std::string name;  // empty: an optional input left out
  rt::Shape shape;
  bool constant = false;  // an initializer (weights) rather than a graph input
  DataType dtype = DataType::kFloat;
  float lo = -1.0f, hi = 1.0f;  // the range of the random values (Log and Sqrt want positive ones)
  bool wide = false;            // magnitudes 10^[-3, 3) of both signs instead of [lo, hi)
  bool sweep =
      false;  // the whole float line (accuracy::float_sweep), the shape's first dimension grown to fit
};

struct Case {
  std::string label;
  std::string op;
  std::string domain;
  std::vector<Input> inputs;
  std::vector<ir::Attribute> attrs;
  std::string fast_kernel = "dnnl";
  int64_t opset = 17;
  size_t outputs = 1;       // all of them compared (LayerNormalization's statistics, the skip sum)
  bool falls_back = false;  // a case the fast kernel hands to the reference kernel on purpose
  int64_t max_ulps = -1;    // elementwise: compare in ulps (NaN and infinities must match exactly)
  int64_t dot = 0;          // a dot product of this length K: the K eps sum|a||b| bound
  int64_t row = 0;          // a normalisation over rows of K: the K eps (|y| + rms y) bound
  int64_t layer_norm = 0;   // LayerNormalization over rows of K: the two-pass float32 bound
};

rt::Tensor random_tensor(const Input& in, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(in.lo, in.hi);
  if (in.sweep) {
    std::vector<float> v = tessera::accuracy::float_sweep(16, {0, 1, -1});
    std::shuffle(v.begin(), v.end(), rng);
    return rt::Tensor::from_vector<float>(DataType::kFloat, {static_cast<int64_t>(v.size())}, v);
  }
  if (in.wide) {
    std::uniform_real_distribution<float> e(-3.0f, 3.0f);
    rt::Tensor t = rt::Tensor::zeros(in.dtype, in.shape);
    for (auto& v : t.span<float>()) v = (d(rng) < 0 ? -1.0f : 1.0f) * std::pow(10.0f, e(rng));
    return t;
  }
  rt::Tensor t = rt::Tensor::zeros(in.dtype, in.shape);
  rt::dispatch(rt::NumericBoolTypes{}, in.dtype, "random_tensor", [&]<class T>() {
    for (auto& v : t.span<T>()) {
      if constexpr (std::is_same_v<T, bool>)
        v = d(rng) > 0;
      else
        v = static_cast<T>(std::is_integral_v<T> ? std::abs(d(rng)) * 100.0f : d(rng));
    }
  });
  return t;
}

rt::Tensor absolute(const rt::Tensor& t) {
  rt::Tensor a = t.clone();
  if (a.dtype() == DataType::kFloat)
    for (auto& v : a.span<float>()) v = std::fabs(v);
  return a;
}

// Elementwise: every output within max_ulps of the reference; NaN, infinities and signed zeros the same.
void expect_within_ulps(const rt::Tensor& want, const rt::Tensor& got, int64_t max_ulps) {
  ASSERT_EQ(want.numel(), got.numel());
  int reported = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    float w = want.data<float>()[i], g = got.data<float>()[i];
    auto cmp = tessera::accuracy::compare(g, static_cast<double>(w));
    if ((cmp.ulps > max_ulps || cmp.special_wrong || cmp.flushed) && reported++ < 5)
      ADD_FAILURE() << "element " << i << ": fast " << g << ", reference " << w << " (" << cmp.ulps
                    << " ulp)";
  }
}

// A float32 dot product of length K: |fast - ref| <= 2 K eps sum|a||b| (+ the smallest normal).
void expect_within_dot_bound(const rt::Tensor& want, const rt::Tensor& got, const rt::Tensor& abs_sum,
                             int64_t k) {
  ASSERT_EQ(want.numel(), got.numel());
  const double eps = 1.1920928955078125e-07;
  int reported = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double w = want.data<float>()[i], g = got.data<float>()[i];
    double bound = 2.0 * static_cast<double>(k) * eps * abs_sum.data<float>()[i] + 1.2e-38;
    if (!(std::fabs(g - w) <= bound) && reported++ < 5)
      ADD_FAILURE() << "element " << i << ": fast " << g << ", reference " << w << ", bound " << bound;
  }
}

// A normalisation (Softmax, LogSoftmax) over rows of length K: each output within 2 K eps (|y| + rms y)
// of the reference, the rounding of a length-K sum relative to the output's own scale.
void expect_within_row_bound(const rt::Tensor& want, const rt::Tensor& got, int64_t k) {
  ASSERT_EQ(want.numel(), got.numel());
  const double eps = 1.1920928955078125e-07;
  double ss = 0;
  for (int64_t i = 0; i < want.numel(); ++i) ss += std::pow(static_cast<double>(want.data<float>()[i]), 2);
  const double rms = std::sqrt(ss / static_cast<double>(std::max<int64_t>(1, want.numel())));
  int reported = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double w = want.data<float>()[i], g = got.data<float>()[i];
    double bound = 2.0 * static_cast<double>(k) * eps * (std::fabs(w) + rms);
    if (!(std::fabs(g - w) <= bound) && reported++ < 5)
      ADD_FAILURE() << "element " << i << ": fast " << g << ", reference " << w << ", bound " << bound;
  }
}

// LayerNormalization y = (x - mean) / sd * s + b over rows of K, computed two-pass in float32: the
// mean's rounding (|mean| eps / 2, times a margin of 4 for its length-K sum) over sd, the rounding of the
// variance's length-K sum (K eps relative in sd, so K eps |n| in n = (x - mean) / sd) and a few
// roundings of the scale and bias steps, each output scaled by max|s|. Rows around 1000 with spread 0.01
// (the hard region) make the first term dominate: what any float32 two-pass form loses.
// With `summed` (SkipLayerNormalization's x = input + skip), each x also carries the rounding of that
// sum, eps / 2 |x|, over sd.
void expect_within_layer_norm_bound(const rt::Tensor& want, const rt::Tensor& got, const rt::Tensor& x,
                                    const rt::Tensor& scale, const rt::Tensor* bias, int64_t k,
                                    bool summed = false) {
  ASSERT_EQ(want.numel(), got.numel());
  ASSERT_EQ(x.numel(), want.numel());
  const double eps = 1.1920928955078125e-07;
  double smax = 0, bmax = 0;
  for (float v : scale.span<float>()) smax = std::max(smax, std::fabs(static_cast<double>(v)));
  if (bias)
    for (float v : bias->span<float>()) bmax = std::max(bmax, std::fabs(static_cast<double>(v)));
  int reported = 0;
  for (int64_t r = 0; r < x.numel() / k; ++r) {
    const float* xr = x.data<float>() + r * k;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < k; ++j) mean += xr[j];
    mean /= static_cast<double>(k);
    for (int64_t j = 0; j < k; ++j) var += (xr[j] - mean) * (xr[j] - mean);
    const double sd = std::sqrt(var / static_cast<double>(k) + 1e-5);
    for (int64_t j = 0; j < k; ++j) {
      const int64_t i = r * k + j;
      const double w = want.data<float>()[i], g = got.data<float>()[i];
      const double n = std::fabs(xr[j] - mean) / sd;
      const double sum_rounding = summed ? 2 * eps * std::fabs(xr[j]) / sd : 0;
      const double bound = smax * (4 * std::fabs(mean) * eps / 2 / sd +
                                   static_cast<double>(k) * eps * (n + 1) + sum_rounding) +
                           4 * eps * (smax * n + bmax);
      if (!(std::fabs(g - w) <= bound) && reported++ < 5)
        ADD_FAILURE() << "row " << r << " element " << j << ": fast " << g << ", reference " << w
                      << ", bound " << bound;
    }
  }
}

// Returns the path the fast kernel took in its last run (NodeEvent::path), for the tests of that name.
std::string check(const Case& c) {
  SCOPED_TRACE(c.label);
  std::mt19937 rng(20261121);
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", c.opset}, {"com.microsoft", 1}, {"com.tessera", 1}};
  ir::GraphBuilder b(m.graph);
  std::vector<std::string> names;
  std::vector<std::pair<std::string, rt::Value>> feeds;
  for (const auto& in : c.inputs) {
    if (in.name.empty()) {
      names.emplace_back();
      continue;
    }
    rt::Tensor t = random_tensor(in, rng);
    if (in.constant) {
      names.push_back(b.initializer(t.to_ir(in.name)));
      continue;
    }
    ir::Shape dims;
    for (int64_t d : t.shape()) dims.push_back(ir::Dim::of(d));
    names.push_back(b.input(in.name, ir::Type::tensor(in.dtype, dims)));
    feeds.emplace_back(in.name, rt::Value(t));
  }
  for (const auto& y : b.nodes(c.op, names, c.attrs, "node", c.outputs, c.domain))
    b.output(y, ir::Type::tensor(c.inputs[0].dtype));

  rt::SessionOptions fast_opts{.optimization = rt::OptLevel::kNone, .threads = 2, .profile = true};
  rt::SessionOptions ref_opts = fast_opts;
  ref_opts.reference_kernels = true;
  rt::Session fast(m, fast_opts), ref(m, ref_opts);
  auto want = ref.run(feeds);
  // sum |a||b| of each output of a dot product: the reference on the inputs' absolute values.
  std::vector<rt::Value> abs_ref;
  if (c.dot > 0) {
    ir::Model am = m;
    for (auto& init : am.graph.initializers) init = absolute(rt::Tensor::from_ir(init)).to_ir(init.name);
    auto abs_feeds = feeds;
    for (auto& [name, v] : abs_feeds) v = rt::Value(absolute(v.tensor()));
    abs_ref = rt::Session(am, ref_opts).run(abs_feeds);
  }
  std::string path;
  // Twice: the second run takes the cached primitive and the planned memory.
  for (int run = 0; run < 2; ++run) {
    const int64_t fallbacks = tessera::cpu::reference_fallbacks();
    auto got = fast.run(feeds);
    EXPECT_EQ(tessera::cpu::reference_fallbacks() != fallbacks, c.falls_back)
        << (c.falls_back ? "the case was meant to fall back" : "the fast kernel fell back to the reference");
    if (fast.last_stats().events.size() != 1u) {
      ADD_FAILURE() << "expected one profiled node, got " << fast.last_stats().events.size();
      return "";
    }
    path = fast.last_stats().events[0].path;
    EXPECT_EQ(fast.last_stats().events[0].kernel, c.fast_kernel) << "the fast kernel did not run";
    // The profiler tells a fallback from the fast path.
    EXPECT_EQ(path == "reference fallback", c.falls_back) << path;
    EXPECT_EQ(ref.last_stats().events.empty() ? "reference" : ref.last_stats().events[0].kernel, "reference");
    if (got.size() != c.outputs) {
      ADD_FAILURE() << "expected " << c.outputs << " outputs, got " << got.size();
      return "";
    }
    for (size_t o = 0; o < c.outputs; ++o) {
      if (c.max_ulps >= 0) {
        expect_within_ulps(want[o].tensor(), got[o].tensor(), c.max_ulps);
      } else if (c.dot > 0) {
        expect_within_dot_bound(want[o].tensor(), got[o].tensor(), abs_ref[o].tensor(), c.dot);
      } else if (c.row > 0) {
        expect_within_row_bound(want[o].tensor(), got[o].tensor(), c.row);
      } else if (c.layer_norm > 0 && o == 0 && c.op == "SkipLayerNormalization") {
        // Inputs x, skip (same shape), gamma, beta: the bound of the normalisation of x + skip.
        rt::Tensor sum = feeds[0].second.tensor().clone();
        const float* skip = feeds[1].second.tensor().data<float>();
        for (int64_t i = 0; i < sum.numel(); ++i) sum.data<float>()[i] += skip[i];
        expect_within_layer_norm_bound(want[o].tensor(), got[o].tensor(), sum, feeds[2].second.tensor(),
                                       &feeds[3].second.tensor(), c.layer_norm, true);
      } else if (c.layer_norm > 0 && o == 0) {
        const rt::Tensor* bias = feeds.size() > 2 ? &feeds[2].second.tensor() : nullptr;
        expect_within_layer_norm_bound(want[o].tensor(), got[o].tensor(), feeds[0].second.tensor(),
                                       feeds[1].second.tensor(), bias, c.layer_norm);
      } else {
        std::string diff = rt::compare_values(want[o], got[o], {.rtol = 1e-4, .atol = 1e-5});
        EXPECT_TRUE(diff.empty()) << "output " << o << ": " << diff;
      }
    }
  }
  return path;
}

ir::Attribute ints(const char* n, std::vector<int64_t> v) {
  return ir::Attribute::of_ints(n, std::move(v));
}

}  // namespace

TEST(FastVsReference, Conv) {
  std::vector<Case> cases = {
      {"3x3 pad 1",
       "Conv",
       "",
       {{"x", {1, 8, 17, 19}}, {"w", {16, 8, 3, 3}, true}, {"b", {16}, true}},
       {ints("pads", {1, 1, 1, 1})}},
      {"stride 2, asymmetric pads",
       "Conv",
       "",
       {{"x", {2, 4, 15, 16}}, {"w", {6, 4, 3, 5}, true}},
       {ints("pads", {0, 1, 2, 2}), ints("strides", {2, 2})}},
      {"dilation 2",
       "Conv",
       "",
       {{"x", {1, 3, 20, 20}}, {"w", {5, 3, 3, 3}, true}},
       {ints("dilations", {2, 2})}},
      {"groups 2",
       "Conv",
       "",
       {{"x", {1, 8, 9, 9}}, {"w", {12, 4, 3, 3}, true}, {"b", {12}, true}},
       {ir::Attribute::of_int("group", 2), ints("pads", {1, 1, 1, 1})}},
      {"depthwise",
       "Conv",
       "",
       {{"x", {1, 32, 14, 14}}, {"w", {32, 1, 3, 3}, true}},
       {ir::Attribute::of_int("group", 32), ints("pads", {1, 1, 1, 1})}},
      {"1x1", "Conv", "", {{"x", {1, 64, 7, 7}}, {"w", {128, 64, 1, 1}, true}, {"b", {128}, true}}, {}},
      {"SAME_UPPER",
       "Conv",
       "",
       {{"x", {1, 3, 10, 11}}, {"w", {4, 3, 4, 4}, true}},
       {ir::Attribute::of_string("auto_pad", "SAME_UPPER"), ints("strides", {2, 2})}},
      {"SAME_LOWER",
       "Conv",
       "",
       {{"x", {1, 3, 10, 11}}, {"w", {4, 3, 4, 4}, true}},
       {ir::Attribute::of_string("auto_pad", "SAME_LOWER")}},
      {"1-D",
       "Conv",
       "",
       {{"x", {2, 6, 30}}, {"w", {8, 6, 5}, true}, {"b", {8}, true}},
       {ints("pads", {2, 2})}},
      {"3-D",
       "Conv",
       "",
       {{"x", {1, 4, 6, 7, 8}}, {"w", {3, 4, 3, 3, 3}, true}},
       {ints("pads", {1, 1, 1, 1, 1, 1})}},
      {"weights as an input", "Conv", "", {{"x", {1, 4, 8, 8}}, {"w", {4, 4, 3, 3}}}, {}},
  };
  for (const auto& c : cases) check(c);
}

TEST(FastVsReference, ConvTranspose) {
  std::vector<Case> cases = {
      {"stride 2, pads, bias",
       "ConvTranspose",
       "",
       {{"x", {1, 8, 7, 9}}, {"w", {8, 6, 3, 3}, true}, {"b", {6}, true}},
       {ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}},
      {"output_padding",
       "ConvTranspose",
       "",
       {{"x", {2, 4, 5, 5}}, {"w", {4, 3, 3, 3}, true}},
       {ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1}), ints("output_padding", {1, 1})}},
      {"groups 2, dilation 2",
       "ConvTranspose",
       "",
       {{"x", {1, 6, 6, 7}}, {"w", {6, 2, 3, 2}, true}},
       {ir::Attribute::of_int("group", 2), ints("dilations", {2, 2})}},
      {"output_shape",
       "ConvTranspose",
       "",
       {{"x", {1, 3, 4, 4}}, {"w", {3, 2, 3, 3}, true}},
       {ints("strides", {3, 2}), ints("output_shape", {12, 9})}},
      {"1-D", "ConvTranspose", "", {{"x", {2, 5, 11}}, {"w", {5, 4, 4}, true}}, {ints("strides", {2})}},
  };
  for (const auto& c : cases) check(c);
}

TEST(FastVsReference, FusedConvActivations) {
  for (const char* act : {"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh"}) {
    std::vector<ir::Attribute> attrs = {ir::Attribute::of_string("activation", act),
                                        ints("pads", {1, 1, 1, 1})};
    if (std::string(act) == "Clip")
      attrs.push_back(ir::Attribute::of_floats("activation_params", {0.0f, 0.5f}));
    if (std::string(act) == "LeakyRelu")
      attrs.push_back(ir::Attribute::of_floats("activation_params", {0.2f}));
    check({std::string("FusedConv ") + act,
           "FusedConv",
           "com.microsoft",
           {{"x", {1, 6, 12, 12}}, {"w", {10, 6, 3, 3}, true}, {"b", {10}, true}},
           attrs});
  }
}

TEST(FastVsReference, MatMul) {
  std::vector<Case> cases = {
      {"2-D weights", "MatMul", "", {{"a", {37, 64}}, {"b", {64, 96}, true}}, {}},
      {"3-D x 2-D (linear layer)", "MatMul", "", {{"a", {2, 33, 48}}, {"b", {48, 80}, true}}, {}},
      {"batched", "MatMul", "", {{"a", {2, 4, 16, 32}}, {"b", {2, 4, 32, 16}}}, {}},
      {"batch broadcast", "MatMul", "", {{"a", {3, 1, 5, 8}}, {"b", {1, 2, 8, 7}}}, {}},
      {"rank 3 x rank 4", "MatMul", "", {{"a", {4, 6, 9}}, {"b", {2, 4, 9, 5}}}, {}},
      {"2-D input weights", "MatMul", "", {{"a", {16, 16}}, {"b", {16, 16}}}, {}},
  };
  for (const auto& c : cases) check(c);
}

TEST(FastVsReference, SoftmaxAndLogSoftmax) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    std::vector<Case> cases = {
        {std::string(op) + " last axis", op, "", {{"x", {2, 3, 17}}}, {}},
        {std::string(op) + " attention rows",
         op,
         "",
         {{"x", {1, 4, 16, 16}}},
         {ir::Attribute::of_int("axis", -1)}},
        {std::string(op) + " middle axis", op, "", {{"x", {3, 5, 7}}}, {ir::Attribute::of_int("axis", 1)}},
        {std::string(op) + " first axis", op, "", {{"x", {6, 4}}}, {ir::Attribute::of_int("axis", 0)}},
    };
    // Before opset 13 the input is flattened to 2-D at `axis` and each row normalised.
    cases.push_back({std::string(op) + " opset 11, 2-D coercion",
                     op,
                     "",
                     {{"x", {2, 3, 4, 5}}},
                     {ir::Attribute::of_int("axis", 2)},
                     "dnnl",
                     11});
    cases.push_back(
        {std::string(op) + " opset 11, default axis", op, "", {{"x", {3, 4, 5}}}, {}, "dnnl", 11});
    for (const auto& c : cases) check(c);
  }
}

TEST(FastVsReference, ElementwiseBinary) {
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    std::vector<Case> cases = {
        {std::string(op) + " same shape", op, "", {{"a", {2, 3, 17}}, {"b", {2, 3, 17}}}, {}},
        {std::string(op) + " bias", op, "", {{"a", {1, 8, 24}}, {"b", {24}, true}}, {}},
        {std::string(op) + " bias with leading ones", op, "", {{"a", {2, 8, 24}}, {"b", {1, 1, 24}}}, {}},
        {std::string(op) + " per channel", op, "", {{"a", {2, 5, 4, 4}}, {"b", {5, 1, 1}}}, {}},
        {std::string(op) + " scalar", op, "", {{"a", {3, 7}}, {"b", {}}}, {}},
        {std::string(op) + " two scalars", op, "", {{"a", {}}, {"b", {}}}, {}},
    };
    for (const auto& c : cases) check(c);
  }
  // The first operand broadcast: Add and Mul swap operands, and still run on oneDNN.
  check({"Add, first operand broadcast", "Add", "", {{"a", {6}}, {"b", {4, 6}}}, {}});
  check({"Mul, both broadcast", "Mul", "", {{"a", {4, 1}}, {"b", {4, 6}}}, {}});
  check({"BiasGelu", "BiasGelu", "com.microsoft", {{"a", {2, 5, 32}}, {"b", {32}, true}}, {}});
}

TEST(FastVsReference, FusedMatMul) {
  auto alpha = [](float a) { return ir::Attribute::of_float("alpha", a); };
  auto flag = [](const char* n) { return ir::Attribute::of_int(n, 1); };
  std::vector<Case> cases = {
      {"attention scores: transB, alpha",
       "FusedMatMul",
       "com.microsoft",
       {{"q", {1, 4, 16, 8}}, {"k", {1, 4, 16, 8}}},
       {alpha(0.125f), flag("transB")}},
      {"transA", "FusedMatMul", "com.microsoft", {{"a", {2, 9, 5}}, {"b", {2, 9, 7}}}, {flag("transA")}},
      {"both, broadcast",
       "FusedMatMul",
       "com.microsoft",
       {{"a", {3, 1, 6, 4}}, {"b", {1, 2, 5, 6}}},
       {flag("transA"), flag("transB"), alpha(2.0f)}},
      {"2-D weights transposed",
       "FusedMatMul",
       "com.microsoft",
       {{"a", {2, 10, 12}}, {"b", {20, 12}, true}},
       {flag("transB")}},
      {"2-D weights, alpha 1",
       "FusedMatMul",
       "com.microsoft",
       {{"a", {2, 10, 12}}, {"b", {12, 20}, true}},
       {}},
  };
  for (const auto& c : cases) check(c);
}

TEST(FastVsReference, MatMulBias) {
  std::vector<Case> cases = {
      {"BERT projection",
       "MatMulBias",
       "com.tessera",
       {{"x", {1, 16, 48}}, {"w", {48, 40}, true}, {"b", {40}, true}},
       {}},
      {"2-D, one row",
       "MatMulBias",
       "com.tessera",
       {{"x", {1, 33}}, {"w", {33, 7}, true}, {"b", {7}, true}},
       {}},
      {"rank 4",
       "MatMulBias",
       "com.tessera",
       {{"x", {2, 3, 5, 8}}, {"w", {8, 24}, true}, {"b", {24}, true}},
       {}},
  };
  for (const auto& c : cases) check(c);
}

TEST(FastVsReference, LayerNormalization) {
  auto axis = [](int64_t a) { return ir::Attribute::of_int("axis", a); };
  std::vector<Case> cases = {
      {"BERT rows",
       "LayerNormalization",
       "",
       {{"x", {1, 9, 768}}, {"s", {768}, true}, {"b", {768}, true}},
       {}},
      {"odd width, no bias", "LayerNormalization", "", {{"x", {3, 5, 37}}, {"s", {37}, true}}, {}},
      {"two normalised axes",
       "LayerNormalization",
       "",
       {{"x", {2, 3, 4, 5}}, {"s", {4, 5}, true}, {"b", {4, 5}, true}},
       {axis(-2)}},
      {"axis 0, scale as an input", "LayerNormalization", "", {{"x", {3, 7}}, {"s", {3, 7}}}, {axis(0)}},
      {"with Mean and InvStdDev",
       "LayerNormalization",
       "",
       {{"x", {4, 19}}, {"s", {19}, true}, {"b", {19}, true}},
       {},
       "dnnl",
       17,
       3},
      {"contrib", "LayerNormalization", "com.microsoft", {{"x", {2, 6, 33}}, {"s", {33}}, {"b", {33}}}, {}},
      {"contrib with statistics",
       "LayerNormalization",
       "com.microsoft",
       {{"x", {2, 6, 33}}, {"s", {33}}, {"b", {33}}},
       {axis(-1)},
       "dnnl",
       17,
       3},
      {"contrib simplified",
       "SimplifiedLayerNormalization",
       "com.microsoft",
       {{"x", {5, 129}}, {"s", {129}}},
       {ir::Attribute::of_float("epsilon", 1e-6f)},
       "dnnl",
       17,
       2},
      {"RMSNormalization", "RMSNormalization", "", {{"x", {2, 3, 40}}, {"s", {40}, true}}, {}, "dnnl", 23},
  };
  for (const auto& c : cases) check(c);
}

// LayerNormalization where float32 is hard: rows around 1000 with spread 0.01 (a one-pass variance
// cancels to nothing there), BERT's width and an odd one, within the two-pass float32 bound; scale and
// bias as inputs so the bound sees them.
TEST(FastVsReference, LayerNormalizationOfLargeOffsetsWithinTheTwoPassBound) {
  for (int64_t k : {768, 37}) {
    Case c{"rows around 1000, width " + std::to_string(k),
           "LayerNormalization",
           "",
           {{"x", {6, k}, false, DataType::kFloat, 999.99f, 1000.01f}, {"s", {k}}, {"b", {k}}},
           {}};
    c.layer_norm = k;
    check(c);
    Case plain{"rows in [-1, 1), width " + std::to_string(k),
               "LayerNormalization",
               "",
               {{"x", {6, k}}, {"s", {k}}, {"b", {k}}},
               {}};
    plain.layer_norm = k;
    check(plain);
  }
}

TEST(FastVsReference, SkipLayerNormalization) {
  const char* ms = "com.microsoft";
  std::vector<Case> cases = {
      {"skip, gamma, beta, bias",
       "SkipLayerNormalization",
       ms,
       {{"x", {2, 7, 64}}, {"skip", {2, 7, 64}}, {"g", {64}, true}, {"be", {64}, true}, {"bias", {64}, true}},
       {}},
      {"no beta, no bias, odd width",
       "SkipLayerNormalization",
       ms,
       {{"x", {3, 5, 45}}, {"skip", {3, 5, 45}}, {"g", {45}, true}},
       {}},
      {"bias without beta",
       "SkipLayerNormalization",
       ms,
       {{"x", {1, 4, 24}}, {"skip", {1, 4, 24}}, {"g", {24}}, {"", {}}, {"bias", {24}}},
       {}},
      {"broadcast skip (S, H), all outputs",
       "SkipLayerNormalization",
       ms,
       {{"x", {3, 4, 16}}, {"skip", {4, 16}}, {"g", {16}}, {"be", {16}}},
       {ir::Attribute::of_float("epsilon", 1e-5f)},
       "dnnl",
       17,
       4},
      {"simplified",
       "SkipSimplifiedLayerNormalization",
       ms,
       {{"x", {2, 9, 32}}, {"skip", {1, 9, 32}}, {"g", {32}}, {"bias", {32}}},
       {},
       "dnnl",
       17,
       4},
  };
  for (const auto& c : cases) check(c);
}

// SkipLayerNormalization of a residual stream around 1000 (spread 0.01) plus a small skip: within the
// two-pass float32 bound of x + skip, as LayerNormalization above.
TEST(FastVsReference, SkipLayerNormalizationOfLargeOffsetsWithinTheTwoPassBound) {
  for (int64_t k : {768, 45}) {
    Case c{"residual around 1000, width " + std::to_string(k),
           "SkipLayerNormalization",
           "com.microsoft",
           {{"x", {2, 3, k}, false, DataType::kFloat, 999.99f, 1000.01f},
            {"skip", {2, 3, k}, false, DataType::kFloat, -0.001f, 0.001f},
            {"g", {k}},
            {"be", {k}}},
           {}};
    c.layer_norm = k;
    check(c);
  }
}

TEST(FastVsReference, Activations) {
  auto f = [](const char* n, float v) { return ir::Attribute::of_float(n, v); };
  std::vector<Case> cases = {
      {"Relu", "Relu", "", {{"x", {2, 3, 17}}}, {}},
      {"LeakyRelu", "LeakyRelu", "", {{"x", {5, 33}}}, {f("alpha", 0.3f)}},
      {"Sigmoid", "Sigmoid", "", {{"x", {1, 1000}, false, DataType::kFloat, -8.f, 8.f}}, {}},
      {"Tanh", "Tanh", "", {{"x", {3, 7, 9}, false, DataType::kFloat, -4.f, 4.f}}, {}},
      {"Exp", "Exp", "", {{"x", {4, 31}, false, DataType::kFloat, -5.f, 5.f}}, {}},
      {"Log", "Log", "", {{"x", {4, 31}, false, DataType::kFloat, 0.01f, 10.f}}, {}},
      {"Sqrt", "Sqrt", "", {{"x", {129}, false, DataType::kFloat, 0.f, 10.f}}, {}},
      {"Abs", "Abs", "", {{"x", {2, 2, 2, 3}}}, {}},
      {"Elu", "Elu", "", {{"x", {6, 11}, false, DataType::kFloat, -3.f, 3.f}}, {f("alpha", 0.7f)}},
      {"Softplus", "Softplus", "", {{"x", {6, 11}, false, DataType::kFloat, -5.f, 5.f}}, {}},
      {"HardSwish", "HardSwish", "", {{"x", {6, 11}, false, DataType::kFloat, -5.f, 5.f}}, {}, "dnnl", 14},
      {"HardSigmoid",
       "HardSigmoid",
       "",
       {{"x", {6, 11}, false, DataType::kFloat, -5.f, 5.f}},
       {f("alpha", 0.25f), f("beta", 0.4f)}},
      {"Gelu", "Gelu", "", {{"x", {2, 9, 64}, false, DataType::kFloat, -4.f, 4.f}}, {}, "dnnl", 20},
      {"Gelu tanh",
       "Gelu",
       "",
       {{"x", {2, 9, 64}, false, DataType::kFloat, -4.f, 4.f}},
       {ir::Attribute::of_string("approximate", "tanh")},
       "dnnl",
       20},
      {"contrib Gelu", "Gelu", "com.microsoft", {{"x", {3, 5, 77}, false, DataType::kFloat, -4.f, 4.f}}, {}},
      {"FastGelu", "FastGelu", "com.microsoft", {{"x", {3, 5, 77}, false, DataType::kFloat, -4.f, 4.f}}, {}},
      {"FastGelu with bias",
       "FastGelu",
       "com.microsoft",
       {{"x", {3, 5, 40}, false, DataType::kFloat, -4.f, 4.f}, {"b", {40}, true}},
       {}},
      {"QuickGelu", "QuickGelu", "com.microsoft", {{"x", {2, 45}, false, DataType::kFloat, -4.f, 4.f}}, {}},
  };
  for (const auto& c : cases) check(c);
}

TEST(FastVsReference, Transpose) {
  auto perm = [](std::vector<int64_t> p) { return ints("perm", std::move(p)); };
  std::vector<Case> cases = {
      {"attention heads [B,S,H,D] -> [B,H,S,D]",
       "Transpose",
       "",
       {{"x", {2, 9, 4, 16}}},
       {perm({0, 2, 1, 3})}},
      {"K^T [B,H,S,D] -> [B,H,D,S]", "Transpose", "", {{"x", {1, 4, 37, 16}}}, {perm({0, 1, 3, 2})}},
      {"2-D, odd sizes", "Transpose", "", {{"x", {33, 47}}}, {}},
      {"default perm, rank 3", "Transpose", "", {{"x", {3, 5, 7}}}, {}},
      {"rank 5 mixed", "Transpose", "", {{"x", {2, 3, 1, 5, 4}}}, {perm({4, 1, 0, 3, 2})}},
      {"identity after dropping ones", "Transpose", "", {{"x", {1, 6, 1, 5}}}, {perm({2, 0, 1, 3})}},
      {"NCHW -> NHWC", "Transpose", "", {{"x", {2, 19, 5, 3}}}, {perm({0, 2, 3, 1})}},
      {"scalar", "Transpose", "", {{"x", {}}}, {}},
      {"float16", "Transpose", "", {{"x", {5, 18, 3}, false, DataType::kFloat16}}, {perm({1, 0, 2})}},
      {"int64", "Transpose", "", {{"x", {17, 20}, false, DataType::kInt64}}, {}},
      {"int8", "Transpose", "", {{"x", {4, 33, 18}, false, DataType::kInt8}}, {perm({2, 0, 1})}},
      {"bool", "Transpose", "", {{"x", {3, 40}, false, DataType::kBool}}, {}},
      {"double rows", "Transpose", "", {{"x", {3, 4, 5}, false, DataType::kDouble}}, {perm({1, 0, 2})}},
  };
  for (const auto& c : cases) check(c);
}

TEST(FastVsReference, Gemm) {
  auto flag = [](const char* n) { return ir::Attribute::of_int(n, 1); };
  auto f = [](const char* n, float v) { return ir::Attribute::of_float(n, v); };
  std::vector<Case> cases = {
      {"linear layer: transB, bias",
       "Gemm",
       "",
       {{"a", {1, 64}}, {"b", {48, 64}, true}, {"c", {48}, true}},
       {flag("transB")}},
      {"plain, no C", "Gemm", "", {{"a", {7, 33}}, {"b", {33, 21}, true}}, {}},
      {"transA, full C, alpha, beta",
       "Gemm",
       "",
       {{"a", {12, 9}}, {"b", {12, 5}}, {"c", {9, 5}}},
       {flag("transA"), f("alpha", 0.5f)}},
      {"both transposed, C [1, N]",
       "Gemm",
       "",
       {{"a", {16, 6}}, {"b", {10, 16}}, {"c", {1, 10}}},
       {flag("transA"), flag("transB")}},
      // Declined when the session is built (KernelDef::supports): the reference kernel runs it.
      {"beta -0.75 (declined)",
       "Gemm",
       "",
       {{"a", {6, 7}}, {"b", {7, 10}}, {"c", {1, 10}}},
       {f("beta", -0.75f)},
       "reference"},
      {"C scalar", "Gemm", "", {{"a", {5, 8}}, {"b", {8, 3}}, {"c", {}}}, {}},
      {"C column [M, 1]", "Gemm", "", {{"a", {5, 8}}, {"b", {8, 3}}, {"c", {5, 1}}}, {}},
      {"beta 0 ignores C", "Gemm", "", {{"a", {4, 4}}, {"b", {4, 4}}, {"c", {4, 4}}}, {f("beta", 0.f)}},
      // One row in A: the own matrix-vector product (gemv.h) where AVX-512 is; K and N off the 16 lanes.
      {"one row, transB, bias [N], alpha",
       "Gemm",
       "",
       {{"a", {1, 1283}}, {"b", {1003, 1283}, true}, {"c", {1003}, true}},
       {flag("transB"), f("alpha", 0.5f)}},
      {"one row, B [K, N], C [1, N]",
       "Gemm",
       "",
       {{"a", {1, 77}}, {"b", {77, 150}, true}, {"c", {1, 150}}},
       {}},
      {"one column with transA, C scalar, 3 outputs",
       "Gemm",
       "",
       {{"a", {40, 1}}, {"b", {3, 40}}, {"c", {}}},
       {flag("transA"), flag("transB")}},
      {"one row, beta 0", "Gemm", "", {{"a", {1, 5}}, {"b", {5, 70}}, {"c", {1, 70}}}, {f("beta", 0.f)}},
  };
  for (const auto& c : cases) check(c);
}

TEST(FastVsReference, Pooling) {
  auto k = [](std::vector<int64_t> v) { return ints("kernel_shape", std::move(v)); };
  auto one = [](const char* n) { return ir::Attribute::of_int(n, 1); };
  std::vector<Case> cases = {
      {"MaxPool 3x3 s2 p1",
       "MaxPool",
       "",
       {{"x", {1, 8, 17, 15}}},
       {k({3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}},
      {"MaxPool ceil_mode",
       "MaxPool",
       "",
       {{"x", {2, 3, 10, 11}}},
       {k({3, 3}), ints("strides", {2, 2}), one("ceil_mode")}},
      {"MaxPool dilated", "MaxPool", "", {{"x", {1, 4, 12, 12}}}, {k({2, 2}), ints("dilations", {2, 2})}},
      {"MaxPool SAME_UPPER",
       "MaxPool",
       "",
       {{"x", {1, 2, 9, 8}}},
       {k({3, 2}), ints("strides", {2, 2}), ir::Attribute::of_string("auto_pad", "SAME_UPPER")}},
      {"MaxPool 1-D", "MaxPool", "", {{"x", {2, 5, 20}}}, {k({4}), ints("strides", {3})}},
      {"AveragePool exclude pads",
       "AveragePool",
       "",
       {{"x", {1, 6, 13, 14}}},
       {k({3, 3}), ints("pads", {1, 1, 1, 1})}},
      {"AveragePool include pads",
       "AveragePool",
       "",
       {{"x", {1, 6, 13, 14}}},
       {k({3, 3}), ints("pads", {1, 0, 1, 2}), one("count_include_pad")}},
      {"AveragePool ceil_mode",
       "AveragePool",
       "",
       {{"x", {1, 3, 11, 11}}},
       {k({2, 2}), ints("strides", {2, 2}), one("ceil_mode")}},
      {"GlobalAveragePool", "GlobalAveragePool", "", {{"x", {2, 16, 7, 9}}}, {}},
      {"GlobalMaxPool", "GlobalMaxPool", "", {{"x", {2, 16, 7, 9}}}, {}},
      {"GlobalAveragePool 3-D", "GlobalAveragePool", "", {{"x", {1, 4, 3, 5, 6}}}, {}},
  };
  for (const auto& c : cases) check(c);
}

// Nodes a fast kernel does not take are declined from their inferred types and attributes when the
// session is built (KernelDef::supports), not handed over at run time: the session reports the
// reference kernel, and no fallback is counted.
TEST(FastVsReference, DeclinedNodesRunTheReferenceKernel) {
  const DataType f64 = DataType::kDouble, f16 = DataType::kFloat16, i64 = DataType::kInt64;
  std::vector<Case> cases = {
      {"double Conv",
       "Conv",
       "",
       {{"x", {1, 2, 5, 5}, false, f64}, {"w", {3, 2, 3, 3}, true, f64}},
       {},
       "reference"},
      {"int64 Add", "Add", "", {{"a", {4, 5}, false, i64}, {"b", {5}, false, i64}}, {}, "reference"},
      {"float16 Softmax", "Softmax", "", {{"x", {3, 7}, false, f16}}, {}, "reference"},
      {"float16 Relu", "Relu", "", {{"x", {3, 7}, false, f16}}, {}, "reference"},
      {"double MatMul", "MatMul", "", {{"a", {3, 4}, false, f64}, {"b", {4, 2}, true, f64}}, {}, "reference"},
      {"double LayerNormalization",
       "LayerNormalization",
       "",
       {{"x", {2, 6}, false, f64}, {"s", {6}, true, f64}},
       {},
       "reference"},
      {"AveragePool counting pads with ceil_mode",
       "AveragePool",
       "",
       {{"x", {1, 2, 7, 7}}},
       {ints("kernel_shape", {2, 2}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1}),
        ir::Attribute::of_int("count_include_pad", 1), ir::Attribute::of_int("ceil_mode", 1)},
       "reference"},
      {"1-D MatMul", "MatMul", "", {{"a", {4}}, {"b", {4, 3}, true}}, {}, "reference"},
  };
  for (const auto& c : cases) check(c);
}

TEST(FastVsReference, ProfilerNamesThePathTaken) {
  // The profiler's kernel column names the path inside the fast kernel: Tessera's own GEMM and GEMV
  // where AVX-512 is, else oneDNN's implementation (its name, such as "brg:avx512_core").
  std::string path =
      check({"BERT-like product", "MatMul", "", {{"x", {2, 16, 48}}, {"w", {48, 40}, true}}, {}});
  if (tessera::cpu::gemm_supported()) {
    EXPECT_EQ(path, "own gemm");
  } else {
    EXPECT_FALSE(path.empty());
  }
  path = check({"head", "Gemm", "", {{"a", {1, 64}}, {"b", {64, 10}, true}, {"c", {10}, true}}, {}});
  if (tessera::cpu::gemv_supported()) {
    EXPECT_EQ(path, "own gemv");
  } else {
    EXPECT_FALSE(path.empty());
  }
  // A transposed A is oneDNN's; its implementation name is shown.
  path = check({"transA", "Gemm", "", {{"a", {8, 5}}, {"b", {8, 6}}}, {ir::Attribute::of_int("transA", 1)}});
  EXPECT_FALSE(path.empty());
  EXPECT_NE(path.find(':'), std::string::npos) << path;  // "<kind>:<isa>"
  path = check({"3x3", "Conv", "", {{"x", {1, 8, 9, 9}}, {"w", {8, 8, 3, 3}, true}}, {}});
  EXPECT_NE(path.find(':'), std::string::npos) << path;
}

// Dot products on inputs of magnitudes 1e-3..1e3 of both signs, where a relative tolerance says
// nothing (outputs cancel): within 2 K eps sum|a||b| of the reference, K the products summed per output.
TEST(FastVsReference, DotProductsWithinTheSumBound) {
  auto wide = [](std::string name, rt::Shape shape, bool constant = false) {
    Input in{std::move(name), std::move(shape), constant};
    in.wide = true;
    return in;
  };
  auto flag = [](const char* n) { return ir::Attribute::of_int(n, 1); };
  std::vector<Case> cases = {
      {"MatMul 2-D weights", "MatMul", "", {wide("a", {37, 64}), wide("b", {64, 96}, true)}, {}},
      {"MatMul batched", "MatMul", "", {wide("a", {2, 4, 16, 32}), wide("b", {2, 4, 32, 16})}, {}},
      {"Gemm linear layer",
       "Gemm",
       "",
       {wide("a", {1, 64}), wide("b", {48, 64}, true), wide("c", {48}, true)},
       {flag("transB")}},
      {"Gemm plain", "Gemm", "", {wide("a", {7, 33}), wide("b", {33, 21}, true)}, {}},
      {"Conv 3x3",
       "Conv",
       "",
       {wide("x", {1, 8, 17, 19}), wide("w", {16, 8, 3, 3}, true), wide("b", {16}, true)},
       {ints("pads", {1, 1, 1, 1})}},
      {"FusedMatMul attention scores",
       "FusedMatMul",
       "com.microsoft",
       {wide("q", {1, 4, 16, 8}), wide("k", {1, 4, 16, 8})},
       {ir::Attribute::of_float("alpha", 0.125f), flag("transB")}},
      {"MatMulBias",
       "MatMulBias",
       "com.tessera",
       {wide("x", {1, 16, 48}), wide("w", {48, 40}, true), wide("b", {40}, true)},
       {}},
  };
  const std::vector<int64_t> lengths = {64, 32, 65, 33, 73, 8, 49};
  for (size_t i = 0; i < cases.size(); ++i) {
    cases[i].dot = lengths[i];
    check(cases[i]);
  }
}

// Elementwise kernels over the whole float line (subnormals, zeros, infinities, NaN, 1e-38..3e38 of
// both signs), in ulps against the reference: each within its bound of the float64 oracle
// (docs/accuracy.md), so within the sum of the two bounds of each other.
TEST(FastVsReference, ElementwiseInUlpsOverTheWholeLine) {
  auto f = [](const char* n, float v) { return ir::Attribute::of_float(n, v); };
  auto x = [] {
    Input in{"x", {1}};
    in.sweep = true;
    return in;
  };
  std::vector<Case> cases = {
      {"Relu", "Relu", "", {x()}, {}},
      {"Abs", "Abs", "", {x()}, {}},
      {"Sqrt", "Sqrt", "", {x()}, {}},
      {"Exp", "Exp", "", {x()}, {}},
      {"Log", "Log", "", {x()}, {}},
      {"Sigmoid", "Sigmoid", "", {x()}, {}},
      {"Softplus", "Softplus", "", {x()}, {}},
      {"Tanh", "Tanh", "", {x()}, {}},
      {"Elu", "Elu", "", {x()}, {f("alpha", 0.7f)}},
      {"QuickGelu", "QuickGelu", "com.microsoft", {x()}, {}},
  };
  cases.push_back({"Gelu", "Gelu", "", {x()}, {}, "dnnl", 20});
  cases.push_back(
      {"Gelu tanh", "Gelu", "", {x()}, {ir::Attribute::of_string("approximate", "tanh")}, "dnnl", 20});
  cases.push_back({"FastGelu", "FastGelu", "com.microsoft", {x()}, {}});
  cases.push_back({"HardSigmoid", "HardSigmoid", "", {x()}, {f("alpha", 0.25f), f("beta", 0.4f)}});
  cases.push_back({"LeakyRelu", "LeakyRelu", "", {x()}, {f("alpha", 0.2f)}});
  const std::vector<int64_t> ulps = {0, 0, 1, 2, 2, 4, 4, 4, 4, 8, 4, 4, 4, 1, 0};
  for (size_t i = 0; i < cases.size(); ++i) {
    cases[i].max_ulps = ulps[i];
    std::string path = check(cases[i]);
    // Everything but Abs and Sqrt (exact on oneDNN) runs on the own accurate math.
    if (cases[i].op != "Abs" && cases[i].op != "Sqrt") {
      EXPECT_EQ(path.rfind("own ", 0), 0u) << cases[i].label << ": " << path;
    }
  }
}

// Softmax and LogSoftmax of logits in the thousands (naive exp overflows; log(softmax) loses what is
// below eps) and of logits spread over 1e-3..1e3 of both signs, within the row bound.
TEST(FastVsReference, SoftmaxOnHardLogitsWithinTheRowBound) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    Input thousands{"x", {4, 1000}, false, DataType::kFloat, -3000.f, 3000.f};
    Input wide{"x", {3, 517}};
    wide.wide = true;
    std::vector<Case> cases = {
        {std::string(op) + " logits in the thousands",
         op,
         "",
         {thousands},
         {ir::Attribute::of_int("axis", -1)}},
        {std::string(op) + " logits 1e-3..1e3", op, "", {wide}, {ir::Attribute::of_int("axis", -1)}},
    };
    cases[0].row = 1000;
    cases[1].row = 517;
    for (const auto& c : cases) check(c);
  }
}
