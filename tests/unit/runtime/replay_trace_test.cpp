// Tying a traced replay of a captured device graph back to the nodes: the capture's layout (the work
// each node added) and made-up activity records, as CUPTI would report them, in every shape the real
// ones come in: keyed by graph node or not, out of order, nodes with several kernels or none, fused
// nodes, copies and memsets, lost records.
#include "runtime/replay_trace.h"

#include <gtest/gtest.h>

namespace rt = tessera::rt;
using rt::CapturedWork;
using rt::TraceRecord;
using rt::WorkKind;

namespace {

// Node 0: one kernel (key 10); node 1: a view, nothing; node 2: a fused node's memset then two kernels
// (keys 20, 21, 22); node 3: a device-to-device copy (key 30).
std::vector<std::vector<CapturedWork>> layout() {
  return {{{10, WorkKind::kKernel}},
          {},
          {{20, WorkKind::kMemset}, {21, WorkKind::kKernel}, {22, WorkKind::kKernel}},
          {{30, WorkKind::kMemcpy}}};
}

TraceRecord rec(double start, double dur, const std::string& name, WorkKind kind, uint64_t key) {
  return {rt::kReplayTraceId, start, dur, name, kind, key};
}

// The replay's records in time order, with the captured graph's keys (0: keys left out).
std::vector<TraceRecord> records(bool keyed) {
  auto k = [&](uint64_t key) { return keyed ? key : 0; };
  return {rec(100, 5, "gemm", WorkKind::kKernel, k(10)), rec(107, 1, "Memset", WorkKind::kMemset, k(20)),
          rec(109, 3, "conv", WorkKind::kKernel, k(21)), rec(113, 2, "bias_relu", WorkKind::kKernel, k(22)),
          rec(116, 4, "Memcpy DtoD", WorkKind::kMemcpy, k(30))};
}

void expect_attributed(const rt::ReplayAttribution& a) {
  ASSERT_TRUE(a.ok) << a.problem;
  ASSERT_EQ(a.nodes.size(), 4u);
  EXPECT_DOUBLE_EQ(a.nodes[0].busy_us, 5);
  EXPECT_DOUBLE_EQ(a.nodes[0].first_start_us, 100);
  EXPECT_EQ(a.nodes[0].kernels, (std::vector<std::string>{"gemm"}));
  EXPECT_EQ(a.nodes[1].records, 0u);
  EXPECT_LT(a.nodes[1].first_start_us, 0) << "a view queued nothing";
  EXPECT_DOUBLE_EQ(a.nodes[2].busy_us, 6);
  EXPECT_DOUBLE_EQ(a.nodes[2].first_start_us, 107);
  EXPECT_EQ(a.nodes[2].kernels, (std::vector<std::string>{"Memset", "conv", "bias_relu"}));
  EXPECT_DOUBLE_EQ(a.nodes[3].busy_us, 4);
  EXPECT_DOUBLE_EQ(a.end_us, 120);
}

}  // namespace

TEST(ReplayTrace, RecordsCarryingGraphNodeKeysGoToTheirNodesWhateverTheirOrder) {
  auto recs = records(true);
  std::reverse(recs.begin(), recs.end());
  // Overlapping work (a kernel starting before the previous one ended) changes nothing either.
  recs[1].start_us = 108;
  auto a = rt::attribute_replay(layout(), recs);
  EXPECT_EQ(a.method, "graph node ids");
  ASSERT_TRUE(a.ok) << a.problem;
  EXPECT_DOUBLE_EQ(a.nodes[2].first_start_us, 107);
  EXPECT_EQ(a.nodes[2].kernels, (std::vector<std::string>{"Memset", "bias_relu", "conv"})) << "in time order";
}

TEST(ReplayTrace, WithoutKeysTheRecordsGoByLaunchOrder) {
  auto recs = records(false);
  std::swap(recs[0], recs[3]);  // the activity buffer's order is not the device's
  auto a = rt::attribute_replay(layout(), recs);
  EXPECT_EQ(a.method, "launch order");
  expect_attributed(a);
}

TEST(ReplayTrace, KeysThatAreNotTheCapturesFallBackToLaunchOrder) {
  // CUPTI reporting the instantiated graph's node ids, which the backend could not translate: 0.
  auto recs = records(true);
  recs[2].graph_node = 0;
  auto a = rt::attribute_replay(layout(), recs);
  EXPECT_EQ(a.method, "launch order");
  expect_attributed(a);
}

TEST(ReplayTrace, WithinANodeTheOrderOfItsWorkDoesNotMatter) {
  auto recs = records(false);
  // The fused node's kernels ran before its memset (a library queued them so): still node 2's.
  recs[1].start_us = 114.5;
  recs[3].start_us = 107;
  auto a = rt::attribute_replay(layout(), recs);
  ASSERT_TRUE(a.ok) << a.problem;
  EXPECT_DOUBLE_EQ(a.nodes[2].busy_us, 6);
  EXPECT_DOUBLE_EQ(a.nodes[3].busy_us, 4);
}

TEST(ReplayTrace, LostRecordsAreAProblemNotWrongTimes) {
  auto recs = records(false);
  recs.erase(recs.begin() + 2);
  auto a = rt::attribute_replay(layout(), recs);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.problem.find("traced 4 pieces of work, the capture recorded 5"), std::string::npos)
      << a.problem;
  recs = records(false);
  recs.push_back(rec(130, 1, "extra", WorkKind::kKernel, 0));
  EXPECT_FALSE(rt::attribute_replay(layout(), recs).ok);
}

TEST(ReplayTrace, OrderThatContradictsTheCaptureIsRefused) {
  // A copy where node 2 queued a kernel: launch order would misattribute, so nothing is attributed.
  auto recs = records(false);
  std::swap(recs[3].start_us, recs[4].start_us);
  auto a = rt::attribute_replay(layout(), recs);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.problem.find("node 2"), std::string::npos) << a.problem;
  // A keyed record that launch order would give to another node.
  recs = records(false);
  recs[0].graph_node = 21;
  a = rt::attribute_replay(layout(), recs);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.problem.find("'gemm' ran for node 2 by its graph node, for node 0"), std::string::npos)
      << a.problem;
}

TEST(ReplayTrace, AnEmptyCaptureAndAnEmptyReplayMatch) {
  auto a = rt::attribute_replay(std::vector<std::vector<CapturedWork>>{{}, {}}, {});
  EXPECT_TRUE(a.ok);
  EXPECT_EQ(a.nodes.size(), 2u);
}

TEST(ReplayTrace, SpansRunFromEachNodesFirstWorkToTheNextsAndSumToTheDeviceTime) {
  std::vector<rt::NodeEvent> ev(5);
  ev[0].device_start_us = 100;  // copy in
  ev[1].device_start_us = -1;   // a view: no work, no span
  ev[2].device_start_us = 112;  // 4 us of launch gap after its predecessor's work shows in its span
  ev[3].device_start_us = 130;
  ev[4].device_start_us = -1;
  double device = rt::assign_spans(ev, 150);
  EXPECT_DOUBLE_EQ(device, 50);
  EXPECT_DOUBLE_EQ(ev[0].span_us, 12);
  EXPECT_DOUBLE_EQ(ev[1].span_us, 0);
  EXPECT_DOUBLE_EQ(ev[2].span_us, 18);
  EXPECT_DOUBLE_EQ(ev[3].span_us, 20);
  double sum = 0;
  for (const auto& e : ev) sum += e.span_us;
  EXPECT_DOUBLE_EQ(sum, device);
  std::vector<rt::NodeEvent> none(2);
  EXPECT_DOUBLE_EQ(rt::assign_spans(none, 0), 0);
}

TEST(ReplayTrace, StampedSpansRunFromBoundaryToBoundaryAndSumToTheStampedGraph) {
  rt::BoundaryTimes b;
  b.start_us = {3, -1, 10, 25, -1};  // node 1 and 4 queued no work
  b.end_us = 40;
  std::vector<double> spans = rt::stamped_spans(b);
  ASSERT_EQ(spans.size(), 5u);
  EXPECT_DOUBLE_EQ(spans[0], 7);
  EXPECT_DOUBLE_EQ(spans[1], 0);
  EXPECT_DOUBLE_EQ(spans[2], 15);
  EXPECT_DOUBLE_EQ(spans[3], 15);
  EXPECT_DOUBLE_EQ(spans[4], 0);
}

TEST(ReplayTrace, CrossedStampedBoundariesGiveNoNegativeSpanAndKeepTheSum) {
  rt::BoundaryTimes b;
  b.start_us = {0, 10, 9.5, 20};  // node 1 is shorter than the jitter: its median end came out early
  b.end_us = 30;
  std::vector<double> spans = rt::stamped_spans(b);
  double sum = 0;
  for (double s : spans) {
    EXPECT_GE(s, 0);
    sum += s;
  }
  EXPECT_DOUBLE_EQ(spans[1], 0);
  EXPECT_DOUBLE_EQ(spans[2], 10);
  EXPECT_DOUBLE_EQ(sum, 30);
  EXPECT_TRUE(rt::stamped_spans(rt::BoundaryTimes{}).empty());
}
