// Ties the traced replay of a captured device graph back to the nodes that queued its work.
//
// When a model is captured as one device graph (a CUDA graph) and replayed, the host launches the graph
// once and the trace sees the device's kernels, copies and memsets without the node around each one.
// What links them is the capture's bookkeeping: the work each node added to the graph, in the order the
// nodes ran (Backend::capture_layout). A piece of work is attributed by the key of the graph node that ran
// it where the backend knows it (TraceRecord::graph_node), otherwise by launch order: a graph captured
// from one stream is a chain, so its work runs in capture order and the k-th record in time belongs to
// the node that queued the k-th piece of work. Both are checked against the capture (the count of each
// kind of work per node, keys landing where order says); a replay that does not match is not attributed,
// and the caller times the nodes one by one instead.
//
// Pure functions: the CUDA backend feeds them CUPTI's records, the unit tests feed them made-up ones.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/session.h"

namespace tessera::rt {

// What one node's captured work did in a traced replay.
struct NodeWork {
  double busy_us = 0;                // summed device time of its kernels, copies and memsets
  double first_start_us = -1;        // the start of its first piece of work (-1: it queued none)
  std::vector<std::string> kernels;  // names in launch order, without repeats
  size_t records = 0;
};

struct ReplayAttribution {
  bool ok = false;
  std::string method;           // "graph node ids" or "launch order"
  std::string problem;          // when not ok: what did not match the capture
  std::vector<NodeWork> nodes;  // one per entry of the layout
  double end_us = 0;            // the end of the replay's last piece of work
};

// `layout`: per node (in the order they ran under capture) the work it added; `records`: every piece
// of work the traced replay ran, in any order.
ReplayAttribution attribute_replay(std::span<const std::vector<CapturedWork>> layout,
                                   std::vector<TraceRecord> records);

// Gives each traced event (device_start_us >= 0, in run order) its span: to the next traced event's
// start, the last one's to `end_us` (the run's last device work's end). Returns the run's device time,
// from the first traced start to `end_us` (0 when nothing was traced): the spans' sum.
double assign_spans(std::vector<NodeEvent>& events, double end_us);

// Each layout node's span from stamped replays (BoundaryTimes): from the boundary before its first work to
// the next node's with work (the last one's to the boundary after the graph); 0 for a node that queued
// none. A span that would come out negative (the medians of two boundaries crossed: jitter larger than
// a short node) is 0 and the next node's span starts from the later of the two, so the spans still sum
// to the stamped graph time: end_us less the first boundary.
std::vector<double> stamped_spans(const BoundaryTimes& b);

}  // namespace tessera::rt
