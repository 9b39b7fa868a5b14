// CUDA graphs: a model that runs wholly on the GPU is captured on its second run and replayed from then
// on; every run's outputs must be those of its own inputs (the replay reads the new inputs), and new
// input shapes capture again.
#include <gtest/gtest.h>

#include <cmath>

#include "cuda_test_util.h"
#include "ir/builder.h"
#include "runtime/backend_loader.h"
#include "runtime/session.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;
using ir::Dim;
using ir::Type;

namespace {

// y = Sigmoid(Relu(x) * W + x), with a batch dimension left free.
ir::Model chain() {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{Dim::symbol("batch"), Dim::of(1000)}));
  std::vector<float> w(1000);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5f + 0.001f * static_cast<float>(i);
  auto wt = b.initializer(ir::make_tensor<float>("W", DataType::kFloat, {1000}, w));
  auto r = b.node("Relu", {x}, {}, "relu");
  auto m1 = b.node("Mul", {r, wt}, {}, "mul");
  auto a = b.node("Add", {m1, x}, {}, "add");
  b.output(b.node("Sigmoid", {a}, {}, "sigmoid"), Type::tensor(DataType::kFloat));
  return m;
}

float expected(float x, size_t i) {
  float r = std::max(x, 0.0f) * (0.5f + 0.001f * static_cast<float>(i % 1000)) + x;
  return 1.0f / (1.0f + std::exp(-r));
}

rt::Tensor input(int64_t batch, float shift) {
  rt::Tensor t = rt::Tensor::zeros(DataType::kFloat, {batch, 1000});
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = std::sin(0.01f * static_cast<float>(i)) * 4 + shift;
  return t;
}

class CudaGraphs : public cuda_test::CudaBackendTest {};
class CudaProfile : public cuda_test::CudaBackendTest {};

}  // namespace

// With device I/O (inputs already on the GPU, outputs left there and held by the caller through the
// next run, as the benchmark does) the second run is captured and the later ones replay.
TEST_F(CudaGraphs, DeviceInputsAndOutputsAreReplayed) {
  rt::Session s(chain(), {.optimization = rt::OptLevel::kNone,
                          .backend = "cuda",
                          .precision = tessera::passes::Precision::kFp32});
  rt::Tensor x = input(4, 0.5f);
  rt::Value dx = s.to_device(rt::Value(x));
  std::vector<rt::Value> held;
  for (int run = 0; run < 5; ++run) {
    auto outs = s.run({{"x", dx}}, {}, {.outputs_on_device = true});
    rt::Tensor y = s.to_host(outs[0]).tensor();
    for (int64_t i = 0; i < y.numel(); ++i)
      ASSERT_NEAR(y.data<float>()[i], expected(x.data<float>()[i], static_cast<size_t>(i)), 1e-6f)
          << "run " << run << " element " << i;
    held = std::move(outs);
  }
  EXPECT_EQ(s.last_stats().device_graph_replays, 3u) << s.last_stats().device_graph_note;
}

TEST_F(CudaGraphs, ReplaysReadEachRunsInputsAndNewShapesCaptureAgain) {
  rt::Session s(chain(), {.optimization = rt::OptLevel::kNone,
                          .backend = "cuda",
                          .precision = tessera::passes::Precision::kFp32});
  ASSERT_EQ(s.backends().front().nodes, 4u) << "the whole chain runs on the GPU";
  size_t runs = 0;
  for (int64_t batch : {3, 3, 3, 3, 5, 5, 5, 3}) {
    rt::Tensor x = input(batch, static_cast<float>(runs) * 0.25f - 1.0f);
    rt::Tensor y = s.run({{"x", rt::Value(x)}})[0].tensor();
    ++runs;
    ASSERT_EQ(y.shape(), (rt::Shape{batch, 1000}));
    for (int64_t i = 0; i < y.numel(); ++i)
      ASSERT_NEAR(y.data<float>()[i], expected(x.data<float>()[i], static_cast<size_t>(i)), 1e-6f)
          << "run " << runs << " element " << i;
  }
  // Batch 3: run 1 records the plan, run 2 captures, runs 3-4 replay; batch 5 the same (one replay);
  // back to 3: a new plan is recorded again.
  EXPECT_GE(s.last_stats().device_graph_replays, 3u) << s.last_stats().device_graph_note;
  rt::Session plain(chain(), {.optimization = rt::OptLevel::kNone,
                              .backend = "cuda",
                              .precision = tessera::passes::Precision::kFp32,
                              .device_graphs = false});
  for (int k = 0; k < 3; ++k) plain.run({{"x", rt::Value(input(3, 0.0f))}});
  EXPECT_EQ(plain.last_stats().device_graph_replays, 0u);
}

// A profiled run is traced with CUPTI: each GPU node's time is the device time of the kernels it
// launched, named; the copies are copies; device I/O (--device-io) leaves the copies out of the run.
TEST_F(CudaProfile, TracedRunsNameTheKernelsEachNodeRanAndTimeThem) {
  rt::Session s(chain(), {.optimization = rt::OptLevel::kNone,
                          .backend = "cuda",
                          .profile = true,
                          .precision = tessera::passes::Precision::kFp32});
  rt::Tensor x = input(256, 0.25f);
  for (int run = 0; run < 2; ++run) s.run({{"x", rt::Value(x)}});
  const auto& events = s.last_stats().events;
  size_t traced = 0;
  for (const auto& ev : events) {
    if (ev.device_kernels.empty()) continue;
    traced++;
    EXPECT_GT(ev.duration_us, 0.0) << ev.node_name;
    EXPECT_LT(ev.duration_us, 50000.0) << ev.node_name << ": device time, not a wait";
    if (ev.op_type == "MemcpyToDevice") {
      EXPECT_EQ(ev.device_kernels.front(), "Memcpy HtoD") << ev.node_name;
    } else if (ev.op_type == "MemcpyToHost") {
      EXPECT_EQ(ev.device_kernels.front(), "Memcpy DtoH") << ev.node_name;
    } else {
      EXPECT_NE(ev.device_kernels.front().find("tessera"), std::string::npos)
          << ev.node_name << " ran " << ev.device_kernels.front();
    }
  }
  if (traced == 0) GTEST_SKIP() << "CUPTI could not trace here (no permission?): events timed the nodes";
  EXPECT_EQ(traced, events.size()) << "every node of the chain and both copies launched device work";
  // With the input on the device and the output left there, neither copy launches anything.
  rt::Value dx = s.to_device(rt::Value(x));
  auto outs = s.run({{"x", dx}}, {}, {.outputs_on_device = true});
  for (const auto& ev : s.last_stats().events)
    if (ev.op_type.rfind("Memcpy", 0) == 0) {
      EXPECT_TRUE(ev.device_kernels.empty()) << ev.node_name;
    }
  rt::Tensor y = s.to_host(outs[0]).tensor();
  for (int64_t i = 0; i < y.numel(); i += 997)
    EXPECT_NEAR(y.data<float>()[i], expected(x.data<float>()[i], static_cast<size_t>(i)), 1e-5f);
}
