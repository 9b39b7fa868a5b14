// Per-layer GPU times of the replayed CUDA graph: a profiled run of a model that is replayed replays it
// traced, and CUPTI's records of the replay are tied back to the nodes through the capture's layout
// (runtime/replay_trace.h). The layers must be the ones a node-by-node traced run names, with the same
// kernels, and their times must add up to the replay's device time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "cuda_test_util.h"
#include "ir/builder.h"
#include "runtime/session.h"

namespace rt = tessera::rt;
namespace ir = tessera::ir;
using ir::DataType;
using ir::Type;

namespace {

constexpr int64_t kRows = 8192, kCols = 2048;

std::vector<float> wave(size_t n, float f, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(f * static_cast<float>(i % 9973) + 0.1f);
  return v;
}

// Two MatMul+bias+Relu blocks, a Softmax and a residual Mul: cuBLASLt GEMMs and our own kernels, each
// kernel tens of microseconds on an H100, so that the replay's gaps between kernels are small beside them.
ir::Model blocks() {
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  ir::GraphBuilder b(m.graph);
  auto x = b.input("x", Type::tensor(DataType::kFloat, ir::Shape{ir::Dim::of(kRows), ir::Dim::of(kCols)}));
  auto w1 = b.initializer(
      ir::make_tensor<float>("W1", DataType::kFloat, {kCols, kCols}, wave(kCols * kCols, 0.37f, 0.02f)));
  auto b1 = b.initializer(ir::make_tensor<float>("B1", DataType::kFloat, {kCols}, wave(kCols, 0.11f, 0.1f)));
  auto w2 = b.initializer(
      ir::make_tensor<float>("W2", DataType::kFloat, {kCols, kCols}, wave(kCols * kCols, 0.53f, 0.02f)));
  auto h =
      b.node("Relu", {b.node("Add", {b.node("MatMul", {x, w1}, {}, "mm1"), b1}, {}, "bias1")}, {}, "relu1");
  auto g = b.node("MatMul", {h, w2}, {}, "mm2");
  auto sm = b.node("Softmax", {g}, {ir::Attribute::of_int("axis", -1)}, "softmax");
  b.output(b.node("Mul", {sm, x}, {}, "residual"), Type::tensor(DataType::kFloat));
  return m;
}

// The model's input, in the session's device memory.
rt::Value device_input(rt::Session& s) {
  std::vector<float> xv = wave(kRows * kCols, 0.013f, 1.0f);
  return s.to_device(rt::Value(rt::Tensor::from_vector<float>(DataType::kFloat, {kRows, kCols}, xv)));
}

// The device times of 5 untraced replays timed by events after the gate, sorted (the median is [2]).
std::vector<double> untraced_device_times(rt::Session& s, const rt::Value& dx, std::vector<rt::Value>& held) {
  std::vector<double> untraced;
  for (int run = 0; run < 5; ++run) {
    held = s.run({{"x", dx}}, {}, {.outputs_on_device = true, .time_device = true});
    untraced.push_back(s.last_stats().replay_device_us);
    EXPECT_GT(untraced.back(), 0) << "run " << run;
  }
  std::sort(untraced.begin(), untraced.end());
  return untraced;
}

class CudaReplayProfile : public cuda_test::CudaBackendTest {};

}  // namespace

TEST_F(CudaReplayProfile, LayersOfATracedReplayAreTheNodesAndSumToItsDeviceTime) {
  rt::Session s(blocks(), {.backend = "cuda"});
  rt::Value dx = device_input(s);
  std::vector<rt::Value> held;
  for (int run = 0; run < 4; ++run) held = s.run({{"x", dx}}, {}, {.outputs_on_device = true});
  const size_t replays = s.last_stats().device_graph_replays;
  ASSERT_GE(replays, 1u) << s.last_stats().device_graph_note;
  rt::Tensor want = s.to_host(held[0]).tensor();

  held = s.run({{"x", dx}}, {}, {.outputs_on_device = true, .profile = true});
  const rt::RunStats& st = s.last_stats();
  if (st.device_us == 0) GTEST_SKIP() << "CUPTI could not trace here (no permission?)";
  ASSERT_TRUE(st.layers_from_replay) << st.replay_trace_note;
  EXPECT_EQ(st.device_graph_replays, replays + 1) << "the profiled run replayed the graph";
  cuda_test::expect_close(s.to_host(held[0]).tensor(), want, 2, "traced replay vs untraced replay");

  double sum = 0, spans = 0;
  std::map<uint64_t, std::vector<std::string>> replayed;
  for (const auto& ev : st.events) {
    if (ev.op_type.rfind("Memcpy", 0) == 0) continue;  // the input is on the device: its copy is none
    EXPECT_FALSE(ev.device_kernels.empty()) << ev.node_name << " (" << ev.op_type << ") ran no device work";
    EXPECT_GE(ev.device_start_us, 0) << ev.node_name;
    sum += ev.duration_us;
    spans += ev.span_us;
    replayed[ev.node_id] = ev.device_kernels;
  }
  EXPECT_NEAR(spans, st.device_us, 1e-3 * st.device_us) << "spans add up to the device time";
  EXPECT_GE(sum, 0.95 * st.device_us) << "layer sum " << sum << " us, replay " << st.device_us << " us";
  EXPECT_LE(sum, st.device_us * 1.0001) << "one stream: the layers cannot overlap";

  // The same nodes, traced one by one (no replay): the same layers, each with the same kernels.
  rt::Session plain(blocks(), {.backend = "cuda", .device_graphs = false});
  for (int run = 0; run < 2; ++run)
    plain.run({{"x", dx}}, {}, {.outputs_on_device = true, .profile = run == 1});
  const rt::RunStats& pst = plain.last_stats();
  EXPECT_FALSE(pst.layers_from_replay);
  std::set<uint64_t> ids;
  for (const auto& ev : pst.events) {
    if (ev.op_type.rfind("Memcpy", 0) == 0) continue;
    ids.insert(ev.node_id);
    auto it = replayed.find(ev.node_id);
    ASSERT_NE(it, replayed.end()) << ev.node_name << " is missing from the replay's layers";
    EXPECT_EQ(std::set<std::string>(it->second.begin(), it->second.end()),
              std::set<std::string>(ev.device_kernels.begin(), ev.device_kernels.end()))
        << ev.node_name;
  }
  EXPECT_EQ(ids.size(), replayed.size());
}

// The replayed graph's device time, timed by events after the gate (Backend::time_replays), is the
// profiler's measure of its own overhead: the same untraced and traced, and it brackets the traced
// kernels' span. A run not asked to time its replay reports none.
TEST_F(CudaReplayProfile, ReplayDeviceTimeIsTheSameTracedAndUntraced) {
  rt::Session s(blocks(), {.backend = "cuda"});
  rt::Value dx = device_input(s);
  std::vector<rt::Value> held;
  for (int run = 0; run < 3; ++run) held = s.run({{"x", dx}}, {}, {.outputs_on_device = true});
  ASSERT_GE(s.last_stats().device_graph_replays, 1u) << s.last_stats().device_graph_note;
  EXPECT_EQ(s.last_stats().replay_device_us, 0) << "an untimed run";
  std::vector<double> untraced = untraced_device_times(s, dx, held);
  held = s.run({{"x", dx}}, {}, {.outputs_on_device = true, .profile = true});
  const rt::RunStats& st = s.last_stats();
  if (st.device_us == 0) GTEST_SKIP() << "CUPTI could not trace here (no permission?)";
  ASSERT_TRUE(st.layers_from_replay) << st.replay_trace_note;
  const double traced = st.replay_device_us;
  // The kernels take ~1 ms: a traced replay within 10% of the untraced median (the gate keeps CUPTI's
  // slow launch out); the events around the graph hold its kernels' span.
  EXPECT_NEAR(traced, untraced[2], 0.1 * untraced[2]);
  EXPECT_LE(st.device_us, traced * 1.001)
      << "kernel span " << st.device_us << " us, events " << traced << " us";
  EXPECT_GE(st.device_us, 0.9 * traced);
}

// Nodes run one by one (no replay) still get spans that add up to the device time: there the launch
// gaps between layers are in the spans, not in the layer times.
TEST_F(CudaReplayProfile, NodeByNodeTracedRunsHaveSpansToo) {
  rt::Session s(blocks(), {.backend = "cuda", .device_graphs = false});
  rt::Value dx = s.to_device(rt::Value(
      rt::Tensor::from_vector<float>(DataType::kFloat, {kRows, kCols}, wave(kRows * kCols, 0.013f, 1.0f))));
  s.run({{"x", dx}}, {}, {.outputs_on_device = true});
  s.run({{"x", dx}}, {}, {.outputs_on_device = true, .profile = true});
  const rt::RunStats& st = s.last_stats();
  if (st.device_us == 0) GTEST_SKIP() << "CUPTI could not trace here (no permission?)";
  double sum = 0, spans = 0;
  for (const auto& ev : st.events) {
    sum += ev.duration_us;
    spans += ev.span_us;
  }
  EXPECT_NEAR(spans, st.device_us, 1e-3 * st.device_us);
  EXPECT_LE(sum, st.device_us * 1.0001);
}

// Stamped replays (Backend::stamp_boundaries): the layers' spans measured without CUPTI, one stamp kernel
// per replay. Every node with device work gets a span; they add up to the stamped graph, which costs
// the untraced replay no more than its one extra kernel; each span is close to the traced replay's
// (the kernels take tens of microseconds, the stamps' jitter a fraction of one); the run's outputs are
// its own replay's.
TEST_F(CudaReplayProfile, StampedSpansMatchTheTracedOnesAndCostOneKernel) {
  rt::Session s(blocks(), {.backend = "cuda"});
  rt::Value dx = device_input(s);
  std::vector<rt::Value> held;
  for (int run = 0; run < 3; ++run) held = s.run({{"x", dx}}, {}, {.outputs_on_device = true});
  ASSERT_GE(s.last_stats().device_graph_replays, 1u) << s.last_stats().device_graph_note;
  rt::Tensor want = s.to_host(held[0]).tensor();
  std::vector<double> untraced = untraced_device_times(s, dx, held);

  held = s.run({{"x", dx}}, {}, {.outputs_on_device = true, .stamp_repeats = 5});
  const rt::RunStats& st = s.last_stats();
  ASSERT_FALSE(st.stamped.empty()) << st.stamp_note;
  cuda_test::expect_close(s.to_host(held[0]).tensor(), want, 2, "stamped run vs untraced replay");
  double sum = 0;
  std::map<uint64_t, double> stamped;
  for (const auto& sp : st.stamped) {
    EXPECT_GE(sp.span_us, 0) << sp.node_name;
    sum += sp.span_us;
    stamped[sp.node_id] = sp.span_us;
  }
  EXPECT_GT(st.stamped_replays, 0);
  EXPECT_NEAR(st.stamped_device_us, untraced[2], 0.03 * untraced[2] + 3.0) << "one stamp kernel more";
  EXPECT_LE(sum, st.stamped_device_us * 1.001) << "the spans lie inside the stamped replay";
  EXPECT_GE(sum, 0.9 * untraced[2]);

  held = s.run({{"x", dx}}, {}, {.outputs_on_device = true, .profile = true});
  const rt::RunStats& tr = s.last_stats();
  if (tr.device_us == 0) GTEST_SKIP() << "CUPTI could not trace here (no permission?)";
  for (const auto& ev : tr.events) {
    if (ev.span_us <= 0) continue;
    auto it = stamped.find(ev.node_id);
    ASSERT_NE(it, stamped.end()) << ev.node_name << " has no stamped span";
    EXPECT_NEAR(it->second, ev.span_us, 0.1 * ev.span_us + 2.0) << ev.node_name;
  }
}
