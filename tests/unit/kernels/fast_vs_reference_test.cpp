// One harness for every fast CPU kernel: the same node runs on the fast kernel and on the reference
// kernel (SessionOptions::reference_kernels), on seeded random inputs, and the outputs must agree
// (relative 1e-4, absolute 1e-5: float32 with different summation orders). The harness also checks
// that the fast kernel really ran (the profiler names it), so a silent fallback cannot pass as a test.
#include <gtest/gtest.h>

#include <random>

#include "ir/builder.h"
#include "runtime/session.h"
#include "runtime/value_io.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;

namespace {

struct Input {
  std::string name;
  rt::Shape shape;
  bool constant = false;  // an initializer (weights) rather than a graph input
};

struct Case {
  std::string label;
  std::string op;
  std::string domain;
  std::vector<Input> inputs;
  std::vector<ir::Attribute> attrs;
  std::string fast_kernel = "dnnl";
  int64_t opset = 17;
};

rt::Tensor random_tensor(const rt::Shape& shape, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  rt::Tensor t = rt::Tensor::zeros(DataType::kFloat, shape);
  for (auto& v : t.span<float>()) v = d(rng);
  return t;
}

void check(const Case& c) {
  SCOPED_TRACE(c.label);
  std::mt19937 rng(20261121);
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", c.opset}, {"com.microsoft", 1}};
  ir::GraphBuilder b(m.graph);
  std::vector<std::string> names;
  std::vector<std::pair<std::string, rt::Value>> feeds;
  for (const auto& in : c.inputs) {
    rt::Tensor t = random_tensor(in.shape, rng);
    if (in.constant) {
      names.push_back(b.initializer(t.to_ir(in.name)));
      continue;
    }
    ir::Shape dims;
    for (int64_t d : in.shape) dims.push_back(ir::Dim::of(d));
    names.push_back(b.input(in.name, ir::Type::tensor(DataType::kFloat, dims)));
    feeds.emplace_back(in.name, rt::Value(t));
  }
  auto y = b.nodes(c.op, names, c.attrs, "node", 1, c.domain)[0];
  b.output(y, ir::Type::tensor(DataType::kFloat));

  rt::SessionOptions fast_opts{.optimization = rt::OptLevel::kNone, .threads = 2, .profile = true};
  rt::SessionOptions ref_opts = fast_opts;
  ref_opts.reference_kernels = true;
  rt::Session fast(m, fast_opts), ref(m, ref_opts);
  auto want = ref.run(feeds);
  // Twice: the second run takes the cached primitive and the planned memory.
  for (int run = 0; run < 2; ++run) {
    auto got = fast.run(feeds);
    ASSERT_EQ(fast.last_stats().events.size(), 1u);
    EXPECT_EQ(fast.last_stats().events[0].kernel, c.fast_kernel) << "the fast kernel did not run";
    EXPECT_EQ(ref.last_stats().events.empty() ? "reference" : ref.last_stats().events[0].kernel, "reference");
    std::string diff = rt::compare_values(want[0], got[0], {.rtol = 1e-4, .atol = 1e-5});
    EXPECT_TRUE(diff.empty()) << diff;
  }
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
  };
  for (const auto& c : cases) check(c);
}
