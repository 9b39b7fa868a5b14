// The session: feeds checked against the graph, runs, re-planning on new shapes, local functions,
// errors that name what is wrong.
#include "runtime/session.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "backends/cpu/gemm_f32.h"
#include "ir/builder.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;
using ir::Dim;
using ir::Type;

namespace {

// y = (x + x) * x - x, with a symbolic batch dimension.
ir::Model arithmetic_model() {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{Dim::symbol("n"), Dim::of(4)}));
  auto s = b.node("Add", {x, x});
  auto p = b.node("Mul", {s, x});
  auto y = b.node("Sub", {p, x});
  auto z = b.node("Identity", {y});
  b.output(z, Type::tensor(DataType::kFloat));
  return m;
}

rt::Tensor filled(int64_t n, float start) {
  std::vector<float> v(static_cast<size_t>(n * 4));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return rt::Tensor::from_vector<float>(DataType::kFloat, {n, 4}, v);
}

}  // namespace

TEST(Session, RunsAndReplansWhenShapesChange) {
  rt::Session s(arithmetic_model(), {.threads = 2});
  for (int64_t n : {1, 300, 300, 200}) {
    auto outs = s.run({{"x", rt::Value(filled(n, 1.0f))}});
    ASSERT_EQ(outs.size(), 1u);
    const rt::Tensor& y = outs[0].tensor();
    ASSERT_EQ(y.shape(), (rt::Shape{n, 4}));
    for (int64_t i = 0; i < y.numel(); ++i) {
      float x = 1.0f + static_cast<float>(i);
      EXPECT_FLOAT_EQ(y.data<float>()[i], 2 * x * x - x);
    }
  }
  const auto& mem = s.last_stats().memory;
  EXPECT_GT(mem.lower_bound_bytes, 0u);
  EXPECT_LE(mem.peak_bytes, mem.lower_bound_bytes * 12 / 10);
}

TEST(Session, SecondRunWithSameShapesUsesThePlan) {
  rt::Session s(arithmetic_model());
  s.run({{"x", rt::Value(filled(8, 0.0f))}});
  s.run({{"x", rt::Value(filled(8, 0.0f))}});
  EXPECT_TRUE(s.last_stats().memory.planned);
  EXPECT_EQ(s.last_stats().memory.fallback_allocations, 1u);  // only the graph output leaves the plan
}

TEST(Session, RefusesBadFeedsWithClearMessages) {
  rt::Session s(arithmetic_model());
  auto msg = [&](std::vector<std::pair<std::string, rt::Value>> feeds) {
    try {
      s.run(feeds);
    } catch (const rt::RunError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg({{"y", rt::Value(filled(1, 0))}}).find("no input named 'y'"), std::string::npos);
  EXPECT_NE(msg({}).find("input 'x' is not given"), std::string::npos);
  auto ints = rt::Tensor::from_vector<int64_t>(DataType::kInt64, {1, 4}, {1, 2, 3, 4});
  EXPECT_NE(msg({{"x", rt::Value(ints)}}).find("expects element type float, got int64"), std::string::npos);
  auto wrong = rt::Tensor::from_vector<float>(DataType::kFloat, {1, 5}, {1, 2, 3, 4, 5});
  EXPECT_NE(msg({{"x", rt::Value(wrong)}}).find("dimension 1 must be 4"), std::string::npos);
}

TEST(Session, KernelErrorsNameTheNode) {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto a = b.input("a", Type::tensor(DataType::kInt32, ir::Shape{Dim::of(2)}));
  auto c = b.input("c", Type::tensor(DataType::kInt32, ir::Shape{Dim::of(2)}));
  b.output(b.node("Div", {a, c}, {}, "divide"), Type::tensor(DataType::kInt32));
  rt::Session s(m);
  auto x = rt::Tensor::from_vector<int32_t>(DataType::kInt32, {2}, {4, 6});
  auto zero = rt::Tensor::from_vector<int32_t>(DataType::kInt32, {2}, {2, 0});
  try {
    s.run({{"a", rt::Value(x)}, {"c", rt::Value(zero)}});
    FAIL() << "division by zero was not reported";
  } catch (const rt::RunError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'divide' (Div): integer division by zero"), std::string::npos)
        << e.what();
  }
}

TEST(Session, UnknownOperatorIsRefusedAtLoad) {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}, {"example.custom", 1}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{Dim::of(2)}));
  b.output(b.nodes("Frobnicate", {x}, {}, "f", 1, "example.custom")[0], Type::tensor(DataType::kFloat));
  try {
    rt::Session s(m);
    FAIL() << "no error for an unknown op";
  } catch (const rt::RunError& e) {
    EXPECT_NE(std::string(e.what()).find("Frobnicate"), std::string::npos) << e.what();
  }
}

TEST(Session, InlinesModelLocalFunctions) {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}, {"local", 1}};
  ir::Function f;
  f.name = "Square";
  f.domain = "local";
  f.opset_imports = {{"", 17}};
  {
    ir::GraphBuilder fb(f.body);
    f.body.inputs.push_back({"X", {}, {}, {}});
    f.body.nodes.push_back(ir::Node{});
    f.body.nodes.back().op_type = "Mul";
    f.body.nodes.back().inputs = {"X", "X"};
    f.body.nodes.back().outputs = {"Y"};
    f.body.outputs.push_back({"Y", {}, {}, {}});
  }
  m.functions.push_back(f);
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{Dim::of(3)}));
  auto y = b.nodes("Square", {x}, {}, "sq", 1, "local")[0];
  auto z = b.nodes("Square", {y}, {}, "sq2", 1, "local")[0];
  b.output(z, Type::tensor(DataType::kFloat));
  rt::Session s(m);
  auto in = rt::Tensor::from_vector<float>(DataType::kFloat, {3}, {1, 2, 3});
  auto outs = s.run({{"x", rt::Value(in)}});
  EXPECT_EQ(outs[0].tensor().data<float>()[2], 81.0f);
  for (const auto& n : s.model().graph.nodes) EXPECT_EQ(n.op_type, "Mul");
}

TEST(Session, CancelStopsInsideALongKernel) {
  // One large matrix product on the reference kernel, on one thread. cancel() from another thread must
  // stop it inside the kernel (the thread pool checks between chunks), not only between nodes: the
  // cancelled run takes well under half of a whole one.
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  const int64_t n = 1024;
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{Dim::of(n), Dim::of(n)}));
  auto w = b.initializer(rt::Tensor::zeros(DataType::kFloat, {n, n}).to_ir("w"));
  b.output(b.node("MatMul", {x, w}, {}, "product"));
  rt::Session s(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
  std::vector<std::pair<std::string, rt::Value>> feeds = {
      {"x", rt::Value(rt::Tensor::zeros(DataType::kFloat, {n, n}))}};
  using Clock = std::chrono::steady_clock;
  s.run(feeds);  // warm
  auto t0 = Clock::now();
  s.run(feeds);
  const double whole = std::chrono::duration<double>(Clock::now() - t0).count();

  std::atomic<bool> stop{false};
  std::thread canceller([&] {
    while (!stop) {
      s.cancel();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  std::string err;
  t0 = Clock::now();
  try {
    s.run(feeds);
  } catch (const rt::RunError& e) {
    err = e.what();
  }
  const double cancelled = std::chrono::duration<double>(Clock::now() - t0).count();
  stop = true;
  canceller.join();
  EXPECT_NE(err.find("run cancelled"), std::string::npos) << err;
  RecordProperty("whole_s", std::to_string(whole));
  RecordProperty("cancelled_s", std::to_string(cancelled));
  EXPECT_LT(cancelled, whole / 2) << "whole run " << whole << " s, cancelled run " << cancelled << " s";
  // The session runs again afterwards.
  EXPECT_EQ(s.run(feeds).size(), 1u);
}

TEST(Session, CountsTheWeightsKernelsPrepared) {
  // oneDNN's convolution reorders its filters into a blocked layout when the session is built and
  // releases the original, so the weight is held once, in the kernel's copy
  // (RunStats::prepared_weight_bytes, released_weight_bytes). The reference kernels hold none.
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input(
      "x", Type::tensor(DataType::kFloat, ir::Shape{Dim::symbol("n"), Dim::of(16), Dim::of(8), Dim::of(8)}));
  auto w = b.random_normal("w", {32, 16, 3, 3}, 0.5f);
  b.output(b.node("Conv", {x, w}, {ir::Attribute::of_ints("pads", {1, 1, 1, 1})}, "conv"));
  const size_t weights = 32 * 16 * 9 * sizeof(float);
  rt::Session fast(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .profile = true});
  EXPECT_GE(fast.last_stats().prepared_weight_bytes, weights);      // at session build, not the first run
  EXPECT_LT(fast.last_stats().prepared_weight_bytes, 2 * weights);  // one copy, padded at most
  EXPECT_EQ(fast.last_stats().released_weight_bytes, weights);
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
  // Other batch sizes than the one prepared for (the symbolic batch taken as 1) still run, from the copy.
  EXPECT_EQ(fast.model().graph.find_initializer("w")->data, nullptr);
  for (int64_t n : {1, 3}) {
    rt::Tensor xv = rt::Tensor::zeros(DataType::kFloat, {n, 16, 8, 8});
    for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = std::cos(0.37f * static_cast<float>(i));
    auto got = fast.run({{"x", rt::Value(xv)}})[0].tensor();
    auto want = ref.run({{"x", rt::Value(xv)}})[0].tensor();
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < got.numel(); ++i)
      EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-4f) << "n=" << n << " i=" << i;
  }
  EXPECT_EQ(fast.last_stats().events.at(0).kernel, "dnnl");
  EXPECT_LT(fast.last_stats().prepared_weight_bytes, 2 * weights);
  EXPECT_EQ(ref.last_stats().prepared_weight_bytes, 0u);
}

TEST(Session, WeightsPackedAtBuildAreHeldOnce) {
  // MatMul by a constant [64, 48]: the own GEMM packs it when the session is built and the original is
  // released, so the weight is held once (in the GEMM's panels); outputs match the reference kernels.
  if (!tessera::cpu::gemm_supported()) GTEST_SKIP() << "the own GEMM needs AVX-512";
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{Dim::symbol("n"), Dim::of(64)}));
  auto w = b.random_normal("w", {64, 48}, 0.5f);
  b.output(b.node("MatMul", {x, w}, {}, "mm"));
  rt::Session fast(m, {.optimization = rt::OptLevel::kNone, .threads = 1});
  EXPECT_EQ(fast.last_stats().released_weight_bytes, 64u * 48 * 4);
  EXPECT_GE(fast.last_stats().prepared_weight_bytes, 64u * 48 * 4) << "prepared when built, not on a run";
  EXPECT_EQ(fast.model().graph.find_initializer("w")->data, nullptr);
  rt::Session ref(m, {.optimization = rt::OptLevel::kNone, .threads = 1, .reference_kernels = true});
  for (int64_t n : {1, 7, 33}) {
    rt::Tensor xv = rt::Tensor::zeros(DataType::kFloat, {n, 64});
    for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = std::cos(0.37f * static_cast<float>(i));
    auto got = fast.run({{"x", rt::Value(xv)}})[0].tensor();
    auto want = ref.run({{"x", rt::Value(xv)}})[0].tensor();
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < got.numel(); ++i)
      EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-4f) << "n=" << n << " i=" << i;
  }
}
