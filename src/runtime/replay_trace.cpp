#include "runtime/replay_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <unordered_map>

namespace tessera::rt {

namespace {

using KindCounts = std::array<size_t, 3>;

const char* kind_name(size_t k) {
  static const char* names[] = {"kernels", "copies", "memsets"};
  return names[k];
}

std::string counts_str(const KindCounts& c) {
  std::string s;
  for (size_t k = 0; k < c.size(); ++k)
    if (c[k]) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", c[k], kind_name(k));
  return s.empty() ? "nothing" : s;
}

void add(NodeWork& w, const TraceRecord& r) {
  w.busy_us += r.duration_us;
  if (w.first_start_us < 0 || r.start_us < w.first_start_us) w.first_start_us = r.start_us;
  if (std::find(w.kernels.begin(), w.kernels.end(), r.name) == w.kernels.end()) w.kernels.push_back(r.name);
  w.records++;
}

}  // namespace

ReplayAttribution attribute_replay(std::span<const std::vector<CapturedWork>> layout,
                                   std::vector<TraceRecord> records) {
  ReplayAttribution out;
  out.nodes.resize(layout.size());
  std::unordered_map<uint64_t, size_t> owner;  // captured key -> node
  size_t captured = 0;
  for (size_t n = 0; n < layout.size(); ++n)
    for (const CapturedWork& w : layout[n]) {
      owner[w.key] = n;
      captured++;
    }
  if (records.size() != captured) {
    out.problem = fmt::format("the replay traced {} pieces of work, the capture recorded {}{}",
                              records.size(), captured, records.size() < captured ? " (records lost?)" : "");
    return out;
  }
  for (const TraceRecord& r : records) out.end_us = std::max(out.end_us, r.start_us + r.duration_us);
  // Every record carrying the key of a captured node: attributed by key, whatever the timing.
  bool all_keyed = std::all_of(records.begin(), records.end(), [&](const TraceRecord& r) {
    return r.graph_node && owner.count(r.graph_node);
  });
  std::vector<size_t> node_of(records.size());
  if (all_keyed) {
    out.method = "graph node ids";
    for (size_t i = 0; i < records.size(); ++i) node_of[i] = owner[records[i].graph_node];
  } else {
    // Launch order: the k-th record in time is the k-th piece of captured work; within one node the
    // order does not matter (its kinds are compared as counts).
    out.method = "launch order";
    std::vector<size_t> order(records.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return records[a].start_us < records[b].start_us; });
    size_t next = 0;
    for (size_t n = 0; n < layout.size(); ++n)
      for (size_t k = 0; k < layout[n].size(); ++k) node_of[order[next++]] = n;
    for (size_t i = 0; i < records.size(); ++i) {
      const TraceRecord& r = records[i];
      auto it = r.graph_node ? owner.find(r.graph_node) : owner.end();
      if (it != owner.end() && it->second != node_of[i]) {
        out.problem = fmt::format("'{}' ran for node {} by its graph node, for node {} by launch order",
                                  r.name, it->second, node_of[i]);
        return out;
      }
    }
  }
  std::vector<KindCounts> got(layout.size(), KindCounts{});
  for (size_t i = 0; i < records.size(); ++i) got[node_of[i]][static_cast<size_t>(records[i].kind)]++;
  for (size_t n = 0; n < layout.size(); ++n) {
    KindCounts want{};
    for (const CapturedWork& w : layout[n]) want[static_cast<size_t>(w.kind)]++;
    if (want != got[n]) {
      out.problem = fmt::format("node {} queued {} under capture, its replay ran {} ({})", n,
                                counts_str(want), counts_str(got[n]), out.method);
      return out;
    }
  }
  // Each node's work in time order, so that its names list in launch order.
  std::vector<size_t> order(records.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return records[a].start_us < records[b].start_us; });
  for (size_t i : order) add(out.nodes[node_of[i]], records[i]);
  out.ok = true;
  return out;
}

double assign_spans(std::vector<NodeEvent>& events, double end_us) {
  NodeEvent* prev = nullptr;
  double first = -1;
  for (NodeEvent& ev : events) {
    ev.span_us = 0;
    if (ev.device_start_us < 0) continue;
    if (first < 0) first = ev.device_start_us;
    if (prev) prev->span_us = ev.device_start_us - prev->device_start_us;
    prev = &ev;
  }
  if (!prev) return 0;
  prev->span_us = std::max(0.0, end_us - prev->device_start_us);
  return std::max(0.0, end_us - first);
}

std::vector<double> stamped_spans(const BoundaryTimes& b) {
  std::vector<double> spans(b.start_us.size(), 0.0);
  size_t prev = SIZE_MAX;
  double prev_at = 0;
  auto close = [&](double at) {
    if (prev == SIZE_MAX) return;
    // A boundary earlier than the one before it counts as that one: this node gets 0.
    spans[prev] = std::max(0.0, at - prev_at);
    prev_at = std::max(prev_at, at);
  };
  for (size_t k = 0; k < b.start_us.size(); ++k) {
    if (b.start_us[k] < 0) continue;
    if (prev == SIZE_MAX) {
      prev_at = b.start_us[k];
    } else {
      close(b.start_us[k]);
    }
    prev = k;
  }
  close(b.end_us);
  return spans;
}

}  // namespace tessera::rt
