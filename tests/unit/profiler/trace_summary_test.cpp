// The profile report's GPU timing summary: layer and span sums per traced run against the device's
// end-to-end time, where the layers came from, and the overhead of tracing.
#include <gtest/gtest.h>

#include "profiler/report.h"

namespace rt = tessera::rt;
namespace profiler = tessera::profiler;

namespace {

rt::RunStats traced_run(double a_us, double b_us, double gap_us, bool replayed) {
  rt::RunStats st;
  rt::NodeEvent a, b;
  a.graph_path = b.graph_path = "main";
  a.node_id = 1;
  a.node_name = "gemm";
  b.node_id = 2;
  b.node_name = "softmax";
  a.duration_us = a_us;
  b.duration_us = b_us;
  a.span_us = a_us + gap_us;
  b.span_us = b_us;
  st.events = {a, b};
  st.device_us = a_us + gap_us + b_us;
  st.layers_from_replay = replayed;
  return st;
}

}  // namespace

TEST(ProfileTrace, SumsPerTracedRunAgainstTheDeviceTimeAndTheOverhead) {
  profiler::LayerTable table;
  table.add(traced_run(90, 8, 2, true));
  table.add(traced_run(92, 8, 0, true));
  auto t = profiler::summarize_trace(
      table, {{1.00, 1.02, 0.98}, {1.01, 1.03, 1.02}, {0.50, 0.40}, {0.41, 0.42, 0.90}}, "");
  EXPECT_EQ(t.layers_source, "replayed graph");
  EXPECT_DOUBLE_EQ(t.device_ms, 0.1);
  EXPECT_DOUBLE_EQ(t.layer_sum_ms, 0.099);
  EXPECT_DOUBLE_EQ(t.span_sum_ms, 0.1);
  EXPECT_NEAR(t.overhead_percent(), 2.0, 1e-9);
  // Device times: medians 0.45 untraced (two runs) and 0.42 traced.
  EXPECT_NEAR(t.untraced_device_ms, 0.45, 1e-12);
  EXPECT_NEAR(t.traced_device_ms, 0.42, 1e-12);
  EXPECT_NEAR(t.device_overhead_percent(), 100.0 * (0.42 - 0.45) / 0.45, 1e-9);
  auto j = profiler::trace_json(t);
  EXPECT_NEAR(j["device_overhead_percent"].get<double>(), t.device_overhead_percent(), 1e-12);
  EXPECT_NEAR(j["layer_sum_percent_of_device"].get<double>(), 99.0, 1e-9);
  auto layers = table.layers();
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].name, "gemm");
  EXPECT_DOUBLE_EQ(layers[0].span_us, 184);
}

TEST(ProfileTrace, SaysWhereTheLayersCameFrom) {
  profiler::LayerTable host;
  rt::RunStats cpu;
  cpu.events.resize(1);
  host.add(cpu);
  EXPECT_EQ(profiler::summarize_trace(host, {}, "").layers_source, "host");
  profiler::LayerTable nodes;
  nodes.add(traced_run(1, 1, 1, false));
  auto t = profiler::summarize_trace(nodes, {{1}, {1}, {}, {}}, "the graph is not one device segment");
  EXPECT_EQ(t.device_overhead_percent(), 0);  // not replayed: no device time to compare
  EXPECT_EQ(t.layers_source, "node by node");
  EXPECT_EQ(profiler::trace_json(t)["note"], "the graph is not one device segment");
  nodes.add(traced_run(1, 1, 1, true));
  EXPECT_EQ(profiler::summarize_trace(nodes, {{1}, {1}, {}, {}}, "").layers_source, "mixed");
}

// A stamped run's spans land on the layers traced before, by node; the summary compares the stamped
// replays' device time with the untraced one.
TEST(ProfileTrace, StampedSpansGoToTheirLayersAndTheirOverheadToTheSummary) {
  profiler::LayerTable table;
  table.add(traced_run(90, 8, 2, true));
  rt::RunStats stamped;
  stamped.stamped = {{"main", "softmax", 2, 9.5}, {"main", "gemm", 1, 91.0}, {"main", "gone", 7, 3.0}};
  stamped.stamped_device_us = 102;
  stamped.stamped_replays = 15;
  table.add_stamped(stamped);
  auto layers = table.layers();
  ASSERT_EQ(layers.size(), 2u) << "a stamped span of a node never traced adds no layer";
  EXPECT_DOUBLE_EQ(layers[0].stamped_us, 91.0);
  EXPECT_DOUBLE_EQ(layers[1].stamped_us, 9.5);
  auto t = profiler::summarize_trace(table, {{1.0}, {1.1}, {0.100}, {0.104}}, "");
  EXPECT_EQ(t.stamped_replays, 15);
  EXPECT_NEAR(t.stamped_sum_ms, 0.1005, 1e-12);
  EXPECT_NEAR(t.stamp_overhead_percent(), 2.0, 1e-9);
  auto j = profiler::trace_json(t);
  EXPECT_EQ(j["stamp_note"], "");
  EXPECT_NEAR(j["stamp_overhead_percent"].get<double>(), 2.0, 1e-9);

  profiler::LayerTable none;
  none.add(traced_run(90, 8, 2, true));
  rt::RunStats refused;
  refused.stamp_note = "the captured graph is not a chain (5 nodes, 5 edges, 1 roots)";
  none.add_stamped(refused);
  EXPECT_LT(none.layers()[0].stamped_us, 0);
  auto tn = profiler::summarize_trace(none, {{1.0}, {1.1}, {0.100}, {0.104}}, "");
  EXPECT_EQ(tn.stamped_replays, 0);
  EXPECT_EQ(tn.stamp_note, refused.stamp_note);
  EXPECT_DOUBLE_EQ(tn.stamp_overhead_percent(), 0);
}
