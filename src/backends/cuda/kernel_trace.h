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
  const std::string& error() const { return error_; }

 private:
  KernelTrace() = default;
  bool registered_ = false;
  bool running_ = false;
  std::string error_;
};

// A readable kernel name: a C++ mangled name demangled, without its parameter list.
std::string short_kernel_name(const char* name);

}  // namespace tessera::cuda
