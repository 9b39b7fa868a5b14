// Runs a compiled graph: one frame of slot values per graph invocation (subgraphs of If, Loop and Scan
// get a frame of their own whose outer-scope slots are copied from the enclosing frame).
#pragma once

#include <atomic>
#include <chrono>
#include <span>
#include <vector>

#include "runtime/exec_graph.h"
#include "runtime/memory_planner.h"
#include "runtime/session.h"
#include "runtime/thread_pool.h"

namespace tessera::rt {

struct RunContext {
  MemoryPlanner* planner = nullptr;  // the host's
  // Each device backend's planner (the host's is `planner`); a node allocates from its backend's.
  std::vector<std::pair<const Backend*, MemoryPlanner*>> device_planners;
  ThreadPool* pool = nullptr;
  const std::atomic<bool>* cancel = nullptr;
  std::vector<NodeEvent>* events = nullptr;  // non-null when profiling
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
