// Kernel-level tracing of profiled runs with CUPTI's activity API: the device start, duration and name
// of every kernel, copy and memset, each tied to the node that launched it through an external
// correlation id pushed around the node (cuptiActivityPushExternalCorrelationId). The per-node times
// are then device times of the work itself, without the gaps between launches that CUDA events around
// each node also count, and the names are what ran (cuDNN's engine kernel, cuBLASLt's GEMM, ours).
//
// CUPTI's activity buffers are process-wide, so there is one tracer; a run is traced when start()
// succeeds (it fails where CUPTI is missing or not permitted, and the profiler falls back to events).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/backend.h"

namespace tessera::cuda {

class KernelTrace {
 public:
  static KernelTrace& instance();
  // Starts collecting; false (with the reason in error()) where CUPTI cannot trace.
  bool start();
  void push(uint64_t id);
  void pop();
  // Flushes and stops; the records of the work launched under push()/pop(), after the device finished.
  std::vector<rt::TraceRecord> stop();
  // Before untraced work: CUPTI's activity kinds, left on by stop() for the next traced run, go off.
  void idle();
  const std::string& error() const { return error_; }

 private:
  KernelTrace() = default;
  bool registered_ = false;
  bool running_ = false;
  bool enabled_ = false;  // the activity kinds are on (from start() until idle())
  std::string error_;
};

// The capture's bookkeeping for traced replays: which graph nodes each node of the model added while the
// stream was captured (the graph's nodes after the node, less those seen before it; a child graph's
// kernels, copies and memsets count as the node's own). Keys are the captured graph's node handles,
// valid while that graph lives.
class CaptureLayout {
 public:
  void begin();
  // After a model node's launches under capture on `stream` (a cudaStream_t).
  void mark(void* stream);
  std::vector<std::vector<rt::CapturedWork>> take() { return std::move(nodes_); }

 private:
  std::vector<std::vector<rt::CapturedWork>> nodes_;
  std::vector<uint64_t> seen_;  // sorted
};

// CUPTI's graph-node ids of a captured graph's nodes (keys as CaptureLayout gives them) -> the keys:
// records of a replay carry the id of the node that ran them. Empty where CUPTI cannot tell.
std::vector<std::pair<uint64_t, uint64_t>> cupti_ids_of(
    const std::vector<std::vector<rt::CapturedWork>>& layout);

// A readable kernel name: a C++ mangled name demangled, without its parameter list.
std::string short_kernel_name(const char* name);

}  // namespace tessera::cuda
