// The memory planner: places the tensors a run allocates in one arena, reusing bytes between tensors
// whose lifetimes do not overlap.
//
// Shapes are dynamic, so the plan is learned rather than predicted: a recording run allocates each
// tensor on the heap and notes its size and the clock ticks of its allocation and release (release is
// when the last reference goes, which covers outputs passed through, tensors kept in sequences and
// values used by subgraphs without the planner knowing why). The plan then assigns offsets greedily,
// largest first, to the lowest gap free during the tensor's lifetime. Later runs with the same input
// shapes hand out allocation k at its planned offset; an allocation larger than planned, beyond the
// plan, or whose bytes are still held by a live tensor (data-dependent control flow can change
// lifetimes) falls back to the heap, so a stale plan costs memory, never correctness.
//
// Each backend has a planner of its own: its arena and fallbacks come from the backend's allocate()
// (host memory for the CPU, device memory for a GPU), and its tensors are tagged with its device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/tensor.h"

namespace tessera::rt {

struct MemoryStats {
  size_t arena_bytes = 0;        // size of the planned arena
  size_t lower_bound_bytes = 0;  // most bytes simultaneously live in the recorded run
  size_t peak_bytes = 0;         // arena + most heap bytes in use during the last run
  size_t planned_allocations = 0;
  size_t fallback_allocations = 0;  // planned run allocations that went to the heap
  bool planned = false;             // whether the last run used a plan
};

class Backend;

class MemoryPlanner {
 public:
  // Plans `backend`'s memory (nullptr: the host's, through a CPU backend of its own). The backend must
  // outlive the planner and every tensor it hands out.
  explicit MemoryPlanner(Backend* backend = nullptr);
  ~MemoryPlanner();
  // Starts a run: `replan` records a fresh plan (new input shapes), otherwise the current plan is used.
  void begin_run(bool replan);
  // Completes the run; after a recording run this computes the plan.
  void end_run();
  // Ends a run that failed: a recording is dropped, not planned (a run cancelled after thousands of
  // loop iterations would otherwise pay for planning them), and the next run records again.
  void abort_run();
  // Zero-filled unless `zero` is false (strings always start empty).
  Tensor allocate(DataType dtype, Shape shape, bool zero = true);
  MemoryStats stats() const;
  bool has_plan() const;

  struct State;

 private:
  std::shared_ptr<State> st_;
};

}  // namespace tessera::rt
