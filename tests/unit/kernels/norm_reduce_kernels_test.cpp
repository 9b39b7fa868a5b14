// Unit tests of the normalization, softmax, reduction, quantization, loss and random reference kernels
// for what the ONNX conformance suite does not cover: other element types, generic axis sets, error
// paths, and the shape and type of random outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ir/model.h"
#include "runtime/half.h"
#include "runtime/session.h"

namespace {

using namespace tessera;
using ir::DataType;
using rt::Tensor;

struct In {
  std::string name;
  Tensor t;
};

// A model of the single node `op` (ai.onnx at `opset`) reading `inputs` and writing `outputs` outputs;
// an input named "" is left out.
ir::Model one_node(const std::string& op, int opset, const std::vector<In>& inputs,
                   std::vector<ir::Attribute> attrs = {}, size_t outputs = 1) {
  ir::Model m;
  m.ir_version = 10;
  m.opset_imports = {{"", opset}};
  ir::Node n;
  n.op_type = op;
  n.name = "n";
  for (const In& in : inputs) {
    n.inputs.push_back(in.name);
    if (in.name.empty()) continue;
    ir::ValueInfo vi;
    vi.name = in.name;
    vi.type = ir::Type::tensor(in.t.dtype());
    m.graph.inputs.push_back(vi);
  }
  for (size_t k = 0; k < outputs; ++k) {
    std::string name = "y" + std::to_string(k);
    n.outputs.push_back(name);
    ir::ValueInfo vi;
    vi.name = name;
    m.graph.outputs.push_back(vi);
  }
  n.attributes = std::move(attrs);
  m.graph.nodes.push_back(std::move(n));
  return m;
}

std::vector<rt::Value> run(const ir::Model& m, const std::vector<In>& inputs, int threads = 1) {
  rt::Session s(m, {.optimization = rt::OptLevel::kNone, .threads = threads});
  std::vector<std::pair<std::string, rt::Value>> feeds;
  for (const In& in : inputs)
    if (!in.name.empty()) feeds.emplace_back(in.name, rt::Value(in.t));
  return s.run(feeds);
}

std::vector<rt::Value> run1(const std::string& op, int opset, const std::vector<In>& inputs,
                            std::vector<ir::Attribute> attrs = {}, size_t outputs = 1) {
  return run(one_node(op, opset, inputs, std::move(attrs), outputs), inputs);
}

// The message of what `f` throws ("(no error)" when it returns).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}
#define EXPECT_ERROR(stmt, text)                         \
  do {                                                   \
    std::string msg = error_of([&] { stmt; });           \
    EXPECT_NE(msg.find(text), std::string::npos) << msg; \
  } while (0)

Tensor floats(rt::Shape s, std::vector<float> v) {
  return Tensor::from_vector<float>(DataType::kFloat, std::move(s), v);
}
Tensor ints64(rt::Shape s, std::vector<int64_t> v) {
  return Tensor::from_vector<int64_t>(DataType::kInt64, std::move(s), v);
}

template <class T>
std::vector<T> values(const rt::Value& v) {
  const Tensor& t = v.tensor();
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

TEST(NormReduceKernels, ReduceSumNonContiguousAxesInt32) {
  // [2, 3, 2] reducing axes 0 and 2: the generic (offset table) path.
  std::vector<int32_t> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  Tensor t = Tensor::from_vector<int32_t>(DataType::kInt32, {2, 3, 2}, x);
  auto out = run1("ReduceSum", 18, {{"x", t}, {"axes", ints64({2}, {0, 2})}},
                  {ir::Attribute::of_int("keepdims", 0)});
  EXPECT_EQ(out[0].tensor().shape(), (rt::Shape{3}));
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{1 + 2 + 7 + 8, 3 + 4 + 9 + 10, 5 + 6 + 11 + 12}));
}

TEST(NormReduceKernels, ReduceMaxOldOpsetAttributeAxesAndEmptySet) {
  auto out = run1("ReduceMax", 13, {{"x", floats({2, 0, 3}, {})}}, {ir::Attribute::of_ints("axes", {1})});
  ASSERT_EQ(out[0].tensor().shape(), (rt::Shape{2, 1, 3}));
  for (float v : values<float>(out[0])) EXPECT_EQ(v, -INFINITY);
  auto prod = run1("ReduceProd", 13, {{"x", floats({2, 0}, {})}}, {ir::Attribute::of_ints("axes", {1})});
  EXPECT_EQ(values<float>(prod[0]), (std::vector<float>{1, 1}));
}

TEST(NormReduceKernels, ReduceLogSumExpFloat16IsStable) {
  std::vector<rt::Float16> x = {rt::Float16(1000.0f), rt::Float16(1000.0f)};
  auto out = run1("ReduceLogSumExp", 18, {{"x", Tensor::from_vector(DataType::kFloat16, {2}, x)}});
  EXPECT_NEAR(static_cast<float>(values<rt::Float16>(out[0])[0]), 1000.0f + std::log(2.0f), 0.5f);
}

TEST(NormReduceKernels, ReduceNoopWithEmptyAxesAndBadAxes) {
  Tensor x = floats({2, 2}, {1, -2, 3, -4});
  auto out = run1("ReduceL1", 18, {{"x", x}, {"axes", ints64({0}, {})}},
                  {ir::Attribute::of_int("noop_with_empty_axes", 1)});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_ERROR(run1("ReduceSum", 18, {{"x", x}, {"axes", ints64({1}, {2})}}), "axes value 2 is out of range");
  EXPECT_ERROR(run1("ReduceSum", 18, {{"x", x}, {"axes", ints64({2}, {1, -1})}}), "listed twice");
}

TEST(NormReduceKernels, ReduceMinBoolAndMeanInt) {
  std::vector<bool> b = {true, false, true, true};
  Tensor tb = Tensor::zeros(DataType::kBool, {2, 2});
  for (size_t i = 0; i < b.size(); ++i) tb.data<bool>()[i] = b[i];
  auto out = run1("ReduceMin", 20, {{"x", tb}, {"axes", ints64({1}, {1})}});
  EXPECT_EQ(out[0].tensor().data<bool>()[0], false);
  EXPECT_EQ(out[0].tensor().data<bool>()[1], true);
  auto mean = run1("ReduceMean", 18, {{"x", ints64({3}, {1, 2, 4})}});
  EXPECT_EQ(values<int64_t>(mean[0]), (std::vector<int64_t>{2}));
}

TEST(NormReduceKernels, ArgMaxSelectLastIndexInt64) {
  auto out = run1("ArgMax", 13, {{"x", ints64({2, 3}, {5, 1, 5, 2, 2, 0})}},
                  {ir::Attribute::of_int("axis", 1), ir::Attribute::of_int("select_last_index", 1)});
  EXPECT_EQ(values<int64_t>(out[0]), (std::vector<int64_t>{2, 1}));
  auto first =
      run1("ArgMin", 13, {{"x", ints64({2, 3}, {5, 1, 1, 2, 2, 0})}}, {ir::Attribute::of_int("axis", 1)});
  EXPECT_EQ(values<int64_t>(first[0]), (std::vector<int64_t>{1, 2}));
}

TEST(NormReduceKernels, TopKTiesAndBadK) {
  auto out = run1("TopK", 11, {{"x", floats({5}, {1, 3, 3, 2, 3})}, {"k", ints64({1}, {2})}}, {}, 2);
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{3, 3}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{1, 2}));
  auto small = run1("TopK", 11, {{"x", floats({5}, {1, 3, 3, 2, 3})}, {"k", ints64({1}, {2})}},
                    {ir::Attribute::of_int("largest", 0)}, 2);
  EXPECT_EQ(values<int64_t>(small[1]), (std::vector<int64_t>{0, 3}));
  EXPECT_ERROR(run1("TopK", 11, {{"x", floats({2}, {1, 2})}, {"k", ints64({1}, {3})}}, {}, 2),
               "K = 3 is outside");
  EXPECT_ERROR(run1("TopK", 11, {{"x", floats({2}, {1, 2})}, {"k", ints64({1}, {-1})}}, {}, 2),
               "K = -1 is outside");
}

TEST(NormReduceKernels, SoftmaxOpset11CoercesTo2D) {
  // axis 1 of [2, 2, 2]: each sample's 4 values form one distribution.
  auto out = run1("Softmax", 11, {{"x", floats({2, 2, 2}, {0, 0, 0, 0, 1, 1, 1, 1})}});
  for (float v : values<float>(out[0])) EXPECT_NEAR(v, 0.25f, 1e-6);
  auto hard = run1("Hardmax", 13, {{"x", floats({1, 3}, {2, 5, 5})}});
  EXPECT_EQ(values<float>(hard[0]), (std::vector<float>{0, 1, 0}));
  EXPECT_ERROR(run1("Softmax", 13, {{"x", floats({2}, {1, 2})}}, {ir::Attribute::of_int("axis", 1)}),
               "out of range");
}

TEST(NormReduceKernels, CumSumIntegerReverseExclusiveAndCumProd) {
  Tensor x = Tensor::from_vector<int32_t>(DataType::kInt32, {4}, {1, 2, 3, 4});
  Tensor axis = Tensor::from_vector<int32_t>(DataType::kInt32, {}, {0});
  auto out = run1("CumSum", 14, {{"x", x}, {"axis", axis}},
                  {ir::Attribute::of_int("exclusive", 1), ir::Attribute::of_int("reverse", 1)});
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{9, 7, 4, 0}));
  auto prod = run1("CumProd", 26, {{"x", x}, {"axis", axis}});
  EXPECT_EQ(values<int32_t>(prod[0]), (std::vector<int32_t>{1, 2, 6, 24}));
  Tensor bad = Tensor::from_vector<int32_t>(DataType::kInt32, {}, {1});
  EXPECT_ERROR(run1("CumSum", 14, {{"x", x}, {"axis", bad}}), "axis (input 1) 1 is out of range");
}

TEST(NormReduceKernels, LayerNormBFloat16WithStatistics) {
  std::vector<rt::BFloat16> x = {rt::BFloat16(1.0f), rt::BFloat16(3.0f)};
  std::vector<rt::BFloat16> one = {rt::BFloat16(1.0f), rt::BFloat16(1.0f)};
  auto out = run1("LayerNormalization", 17,
                  {{"x", Tensor::from_vector(DataType::kBFloat16, {1, 2}, x)},
                   {"s", Tensor::from_vector(DataType::kBFloat16, {2}, one)}},
                  {ir::Attribute::of_float("epsilon", 0.0f)}, 3);
  auto y = values<rt::BFloat16>(out[0]);
  EXPECT_NEAR(static_cast<float>(y[0]), -1.0f, 1e-2);
  EXPECT_NEAR(static_cast<float>(y[1]), 1.0f, 1e-2);
  EXPECT_EQ(out[1].tensor().dtype(), DataType::kFloat);
  EXPECT_EQ(out[1].tensor().shape(), (rt::Shape{1, 1}));
  EXPECT_FLOAT_EQ(values<float>(out[1])[0], 2.0f);
  EXPECT_FLOAT_EQ(values<float>(out[2])[0], 1.0f);
  // Scale that does not broadcast onto the normalized axes.
  EXPECT_ERROR(run1("LayerNormalization", 17, {{"x", floats({1, 2}, {1, 2})}, {"s", floats({3}, {1, 1, 1})}}),
               "does not broadcast");
}

TEST(NormReduceKernels, GroupNormOpset18ScalesPerGroup) {
  // Two groups of one channel each; scale and bias are per group.
  auto out =
      run1("GroupNormalization", 18,
           {{"x", floats({1, 2, 2}, {1, 3, 5, 9})}, {"s", floats({2}, {1, 2})}, {"b", floats({2}, {0, 10})}},
           {ir::Attribute::of_int("num_groups", 2), ir::Attribute::of_float("epsilon", 0.0f)});
  auto y = values<float>(out[0]);
  EXPECT_NEAR(y[0], -1, 1e-5);
  EXPECT_NEAR(y[1], 1, 1e-5);
  EXPECT_NEAR(y[2], 8, 1e-5);
  EXPECT_NEAR(y[3], 12, 1e-5);
  EXPECT_ERROR(
      run1("GroupNormalization", 18,
           {{"x", floats({1, 3, 1}, {1, 2, 3})}, {"s", floats({2}, {1, 1})}, {"b", floats({2}, {0, 0})}},
           {ir::Attribute::of_int("num_groups", 2)}),
      "does not divide");
}

TEST(NormReduceKernels, BatchNormDoubleInference) {
  auto d = [](rt::Shape s, std::vector<double> v) {
    return Tensor::from_vector<double>(DataType::kDouble, std::move(s), v);
  };
  auto out = run1("BatchNormalization", 15,
                  {{"x", d({1, 2, 1}, {3, 4})},
                   {"s", d({2}, {2, 1})},
                   {"b", d({2}, {1, 0})},
                   {"m", d({2}, {1, 4})},
                   {"v", d({2}, {4, 1})}},
                  {ir::Attribute::of_float("epsilon", 0.0f)});
  EXPECT_EQ(values<double>(out[0]), (std::vector<double>{3, 0}));
}

TEST(NormReduceKernels, QuantizeInt4PackedRoundTrip) {
  Tensor x = floats({3}, {-20, 2.5, 7});
  auto q = run1("QuantizeLinear", 21, {{"x", x}, {"s", floats({}, {1})}, {"", Tensor()}},
                {ir::Attribute::of_int("output_dtype", static_cast<int64_t>(DataType::kInt4))});
  ASSERT_EQ(q[0].tensor().dtype(), DataType::kInt4);
  const auto* bytes = static_cast<const uint8_t*>(q[0].tensor().raw());
  EXPECT_EQ(bytes[0], 0x28);  // -8 (saturated) low nibble, 2 (2.5 rounds to even) high nibble
  EXPECT_EQ(bytes[1] & 0x0F, 7);
  auto dq = run1("DequantizeLinear", 21, {{"q", q[0].tensor()}, {"s", floats({}, {2})}});
  EXPECT_EQ(values<float>(dq[0]), (std::vector<float>{-16, 4, 14}));
}

TEST(NormReduceKernels, QuantizeFloat8SaturateAndPerAxisErrors) {
  Tensor x = floats({2}, {1000, -1});
  auto sat = run1("QuantizeLinear", 21, {{"x", x}, {"s", floats({}, {1})}},
                  {ir::Attribute::of_int("output_dtype", static_cast<int64_t>(DataType::kFloat8E4M3FN))});
  const auto* b = static_cast<const uint8_t*>(sat[0].tensor().raw());
  EXPECT_EQ(b[0], 0x7E);  // 448
  EXPECT_EQ(b[1], 0xB8);  // -1
  auto nosat = run1("QuantizeLinear", 21, {{"x", x}, {"s", floats({}, {1})}},
                    {ir::Attribute::of_int("output_dtype", static_cast<int64_t>(DataType::kFloat8E4M3FN)),
                     ir::Attribute::of_int("saturate", 0)});
  EXPECT_EQ(static_cast<const uint8_t*>(nosat[0].tensor().raw())[0], 0x7F);  // NaN
  // Per-axis scale with the wrong length.
  EXPECT_ERROR(
      run1("QuantizeLinear", 21, {{"x", floats({2, 3}, {1, 2, 3, 4, 5, 6})}, {"s", floats({2}, {1, 1})}}),
      "per-axis scale must be 1-D with 3 values");
}

TEST(NormReduceKernels, DynamicQuantizeAllZeros) {
  auto out = run1("DynamicQuantizeLinear", 11, {{"x", floats({3}, {0, 0, 0})}}, {}, 3);
  EXPECT_EQ(values<uint8_t>(out[0]), (std::vector<uint8_t>{0, 0, 0}));
  EXPECT_EQ(values<float>(out[1])[0], 0.0f);
}

TEST(NormReduceKernels, LossTargetOutOfRange) {
  Tensor x = floats({1, 2}, {-1, -2});
  EXPECT_ERROR(run1("NegativeLogLikelihoodLoss", 13, {{"x", x}, {"t", ints64({1}, {2})}}), "target value 2");
  auto ok = run1("NegativeLogLikelihoodLoss", 13, {{"x", x}, {"t", ints64({1}, {1})}});
  EXPECT_FLOAT_EQ(values<float>(ok[0])[0], 2.0f);
  auto sce = run1("SoftmaxCrossEntropyLoss", 13, {{"x", floats({1, 2}, {0, 0})}, {"t", ints64({1}, {0})}},
                  {ir::Attribute::of_string("reduction", "none")}, 2);
  EXPECT_NEAR(values<float>(sce[0])[0], std::log(2.0f), 1e-6);
  EXPECT_EQ(sce[1].tensor().shape(), (rt::Shape{1, 2}));
}

TEST(NormReduceKernels, RandomOpsShapeAndType) {
  auto u = run1("RandomUniform", 22, {},
                {ir::Attribute::of_ints("shape", {2, 3}),
                 ir::Attribute::of_int("dtype", static_cast<int64_t>(DataType::kDouble)),
                 ir::Attribute::of_float("low", 2.0f), ir::Attribute::of_float("high", 3.0f),
                 ir::Attribute::of_float("seed", 1.0f)});
  ASSERT_EQ(u[0].tensor().dtype(), DataType::kDouble);
  EXPECT_EQ(u[0].tensor().shape(), (rt::Shape{2, 3}));
  for (double v : values<double>(u[0])) EXPECT_TRUE(v >= 2 && v < 3);
  auto u2 = run1("RandomUniform", 22, {},
                 {ir::Attribute::of_ints("shape", {2, 3}),
                  ir::Attribute::of_int("dtype", static_cast<int64_t>(DataType::kDouble)),
                  ir::Attribute::of_float("low", 2.0f), ir::Attribute::of_float("high", 3.0f),
                  ir::Attribute::of_float("seed", 1.0f)});
  EXPECT_EQ(values<double>(u[0]), values<double>(u2[0]));  // same seed, same stream
  auto n = run1("RandomNormalLike", 22, {{"x", ints64({4, 1}, {0, 0, 0, 0})}},
                {ir::Attribute::of_int("dtype", static_cast<int64_t>(DataType::kFloat16))});
  EXPECT_EQ(n[0].tensor().dtype(), DataType::kFloat16);
  EXPECT_EQ(n[0].tensor().shape(), (rt::Shape{4, 1}));
  auto ul = run1("RandomUniformLike", 22, {{"x", floats({3}, {0, 0, 0})}});
  EXPECT_EQ(ul[0].tensor().dtype(), DataType::kFloat);
  auto b = run1("Bernoulli", 22, {{"x", floats({4}, {0, 1, 0.5f, 1})}},
                {ir::Attribute::of_int("dtype", static_cast<int64_t>(DataType::kInt32))});
  ASSERT_EQ(b[0].tensor().dtype(), DataType::kInt32);
  auto bv = values<int32_t>(b[0]);
  EXPECT_EQ(bv[0], 0);
  EXPECT_EQ(bv[1], 1);
  EXPECT_TRUE(bv[2] == 0 || bv[2] == 1);
  EXPECT_ERROR(run1("Bernoulli", 22, {{"x", floats({1}, {1.5f})}}), "outside [0, 1]");
  auto m = run1("Multinomial", 22, {{"x", floats({2, 3}, {0, 0, 0, -INFINITY, 0, -INFINITY})}},
                {ir::Attribute::of_int("sample_size", 5),
                 ir::Attribute::of_int("dtype", static_cast<int64_t>(DataType::kInt64))});
  ASSERT_EQ(m[0].tensor().dtype(), DataType::kInt64);
  EXPECT_EQ(m[0].tensor().shape(), (rt::Shape{2, 5}));
  auto mv = values<int64_t>(m[0]);
  for (int k = 0; k < 5; ++k) EXPECT_TRUE(mv[k] >= 0 && mv[k] < 3);
  for (int k = 5; k < 10; ++k) EXPECT_EQ(mv[k], 1);  // only class 1 has mass
}

TEST(NormReduceKernels, DropoutTrainingShapesAndScaling) {
  Tensor x = floats({2, 50}, std::vector<float>(100, 1.0f));
  Tensor ratio = floats({}, {0.5f});
  Tensor training = Tensor::zeros(DataType::kBool, {});
  training.data<bool>()[0] = true;
  auto out =
      run1("Dropout", 22, {{"x", x}, {"r", ratio}, {"t", training}}, {ir::Attribute::of_int("seed", 3)}, 2);
  ASSERT_EQ(out[0].tensor().shape(), (rt::Shape{2, 50}));
  ASSERT_EQ(out[1].tensor().dtype(), DataType::kBool);
  auto y = values<float>(out[0]);
  int kept = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const bool m = out[1].tensor().data<bool>()[i];
    EXPECT_EQ(y[i], m ? 2.0f : 0.0f);
    kept += m;
  }
  EXPECT_GT(kept, 20);
  EXPECT_LT(kept, 80);
  EXPECT_ERROR(run1("Dropout", 22, {{"x", x}, {"r", floats({}, {1.0f})}, {"t", training}}),
               "must be in [0, 1)");
}

TEST(NormReduceKernels, DropoutTrainingFloat8) {
  Tensor x = Tensor::zeros(DataType::kFloat8E4M3FN, {40});
  auto* raw = static_cast<uint8_t*>(x.raw());
  for (int i = 0; i < 40; ++i) raw[i] = 0x38;  // 1.0
  Tensor training = Tensor::zeros(DataType::kBool, {});
  training.data<bool>()[0] = true;
  auto out = run1("Dropout", 22, {{"x", x}, {"r", floats({}, {0.5f})}, {"t", training}},
                  {ir::Attribute::of_int("seed", 1)}, 2);
  ASSERT_EQ(out[0].tensor().dtype(), DataType::kFloat8E4M3FN);
  const auto* y = static_cast<const uint8_t*>(out[0].tensor().raw());
  for (int i = 0; i < 40; ++i) EXPECT_EQ(y[i], out[1].tensor().data<bool>()[i] ? 0x40 : 0x00);  // 2.0 or 0
}

TEST(NormReduceKernels, ThreadedResultsMatchSingleThreaded) {
  // Large enough for the kernels to split their loops over the pool.
  std::vector<float> v(64 * 40 * 30);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7919) % 1000) / 100.0f - 5.0f;
  Tensor x = floats({64, 40, 30}, v);
  struct Case {
    std::string op;
    int opset;
    std::vector<In> extra;
    std::vector<ir::Attribute> attrs;
  };
  const std::vector<Case> cases = {
      {"ReduceSum", 18, {{"axes", ints64({2}, {0, 2})}}, {}},
      {"ReduceLogSumExp", 18, {{"axes", ints64({1}, {1})}}, {}},
      {"ReduceMax", 18, {{"axes", ints64({1}, {2})}}, {}},
      {"Softmax", 13, {}, {ir::Attribute::of_int("axis", 1)}},
      {"LpNormalization", 22, {}, {ir::Attribute::of_int("axis", 0)}},
      {"MeanVarianceNormalization", 13, {}, {ir::Attribute::of_ints("axes", {0, 2})}},
  };
  for (const Case& c : cases) {
    std::vector<In> inputs = {{"x", x}};
    inputs.insert(inputs.end(), c.extra.begin(), c.extra.end());
    ir::Model m = one_node(c.op, c.opset, inputs, c.attrs);
    EXPECT_EQ(values<float>(run(m, inputs, 1)[0]), values<float>(run(m, inputs, 4)[0])) << c.op;
  }
}

}  // namespace
