// Runs a compiled graph: one frame of slot values per graph invocation (subgraphs of If, Loop and Scan
// get a frame of their own whose outer-scope slots are copied from the enclosing frame).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/backend.h"
#include "runtime/exec_graph.h"
#include "runtime/memory_planner.h"
#include "runtime/session.h"
#include "runtime/thread_pool.h"

namespace tessera::rt {

// The main graph's device work as one replayable device graph, kept by the session across runs. It
// applies where the main graph is copies to one device, nodes on that device, copies back (a model
// that runs wholly on the GPU): the first run with a memory plan in use captures the device nodes, and
// later runs with the same input buffers (same shapes, so the same plan) copy their inputs in, replay
// the graph and copy the results out, without running the nodes' kernels on the host at all.
struct DeviceReplay {
  bool disabled = false;        // the graph's shape or a failed capture rules it out
  std::string why_not;          // when disabled: why, for `tessera run` and the bench to say
  std::shared_ptr<void> graph;  // null until captured
  struct Result {               // a slot the copies back read: where the captured graph leaves it
    int slot;
    DataType dtype;
    Shape shape;
    void* data;  // in the device planner's arena (planned, so the same on every replay)
    Device device;
  };
  std::vector<Result> results;
  std::vector<std::pair<const void*, Shape>> inputs;  // the device buffers the copies in wrote then
  size_t replays = 0, captures = 0;
  // For profiled runs that replay (traced, runtime/replay_trace.h): each captured node's event as the
  // capture saw it (names, ids, kernels, shapes: what a replay does not recompute), and the device work
  // each node added to the graph (Backend::capture_layout), in the same order.
  std::vector<NodeEvent> profile_nodes;
  std::vector<std::vector<CapturedWork>> layout;
  bool trace_disabled = false;  // a traced replay did not match the capture: profile node by node
  std::string trace_note;       // why
};

// Thrown out of run_graph when a capture of the device nodes failed after they had started to consume
// their inputs (released values, in-place outputs): the run cannot go on from there, so the session runs
// the graph again from its inputs, with replay disabled. Not an error the caller sees.
struct CaptureAbandoned {};

struct RunContext {
  DeviceReplay* replay = nullptr;    // non-null: the main graph may be captured and replayed
  bool may_capture = false;          // the planners hand out planned memory this run (not recording)
  MemoryPlanner* planner = nullptr;  // the host's
  // Each device backend's planner (the host's is `planner`); a node allocates from its backend's.
  std::vector<std::pair<const Backend*, MemoryPlanner*>> device_planners;
  ThreadPool* pool = nullptr;
  const std::atomic<bool>* cancel = nullptr;
  std::vector<NodeEvent>* events = nullptr;  // non-null when profiling
  // A profiled run may replay the captured device graph, traced, instead of running the nodes one by
  // one; replay_events is then the index in `events` of the first replayed node's event.
  bool trace_replay = false;
  size_t replay_events = SIZE_MAX;
  std::vector<NodeEvent>* capture_events = nullptr;  // under capture: each node's event, recorded here
  bool outputs_on_device = false;                    // the main graph's outputs skip their copy to the host
  // A stamped run (RunOptions::stamp_repeats): before its replay, the boundaries of the captured graph
  // are timed by stamped replays (Backend::stamp_boundaries) into `stamps`.
  int stamp_repeats = 0;
  BoundaryTimes* stamps = nullptr;
  // Backends tracing this profiled run (Backend::trace_begin): each node is traced under the index of
  // its event, and nodes of these backends get their device time from the trace, not from events.
  std::vector<Backend*> tracers;
  // Per profiled event, the backend events recorded around its kernel, in the same order.
  std::vector<std::pair<std::unique_ptr<Event>, std::unique_ptr<Event>>> timings;
  std::chrono::steady_clock::time_point start;
};

struct Frame {
  const ExecGraph* graph = nullptr;
  std::vector<Value> slots;
  const Frame* parent = nullptr;
};

// Runs `g` with the given inputs (in graph-input order; a missing trailing input keeps its initializer
// default) and returns the graph outputs. Errors come back as RunError naming graph and node.
std::vector<Value> run_graph(const ExecGraph& g, std::span<const Value> inputs, const Frame* parent,
                             RunContext& rc);

}  // namespace tessera::rt
