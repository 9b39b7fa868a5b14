// Device time of a replayed CUDA graph, as the profiler compares it between untraced and traced runs.
//
// CUPTI instruments every kernel node of a graph when it is launched while tracing: the launch call
// takes ~3 us per node on the host (0.3-0.4 ms for BERT or ResNet-50) against ~3-15 us untraced. The
// device would start the graph while the host is still submitting it, or wait for it, and a traced
// run's device time would count that wait. So a timed replay is queued behind a gate: a one-thread
// kernel that spins on a flag in mapped host memory, opened once the launch call has returned. Events
// recorded after the gate and after the graph then time the graph's own execution, the same way in
// untraced and traced runs.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::cuda {

class ReplayTimer {
 public:
  ReplayTimer() = default;
  ~ReplayTimer();
  ReplayTimer(const ReplayTimer&) = delete;
  ReplayTimer& operator=(const ReplayTimer&) = delete;

  // Queues the gate and the start event on `s`; false (nothing queued) where the events or the mapped
  // flag cannot be made: the replay is then not timed. `opened`, a device-visible address, receives
  // the device clock (%globaltimer, ns) when the gate opens (stamped replays: replay_stamps.h).
  bool begin(cudaStream_t s, uint64_t* opened = nullptr);
  // Queues the end event and opens the gate. Call after begin() returned true, whatever the launch did.
  void end(cudaStream_t s);
  // The time between the two events of the last begin()/end(), in microseconds; 0 if there is none.
  double elapsed_us();
  void forget() { timed_ = false; }

 private:
  bool ready();
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  volatile uint32_t* flag_ = nullptr;  // mapped host memory: the host writes, the gate kernel reads
  uint32_t* flag_device_ = nullptr;
  uint32_t generation_ = 0;
  bool failed_ = false, timed_ = false;
};

// A one-thread kernel `void(uint64_t* at)` writing the device clock (ns) to `at`, for graph kernel nodes.
const void* stamp_kernel_address();

}  // namespace tessera::cuda
