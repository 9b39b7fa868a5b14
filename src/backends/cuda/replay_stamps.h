// Stamped replays (rt::BoundaryTimes, Backend::stamp_boundaries): per-layer device times of a replayed
// CUDA graph without CUPTI. CUPTI's kernel records cost the device 0.15-0.5 us per kernel (its
// timestamps around each kernel of a traced launch): +2.4% to +4.2% on the benchmark models, over the
// 3% the profiler allows itself (docs/cuda.md, "Profiling overhead"). Here each boundary between layers
// gets its own copy of the captured graph with one one-thread kernel there that writes the device clock,
// replayed behind the replay timer's gate, which writes the clock when it opens. Everything before the
// stamp runs as in an untraced replay, so the stamp's time is that of the unperturbed prefix; the replay
// as a whole carries one extra kernel.
//
// The captured graph must be a chain (one stream captured: each node waits for the one before), its
// work in the layout's order; anything else is refused with a note, and the profile keeps CUPTI's times.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "backends/cuda/replay_timer.h"
#include "runtime/backend.h"

namespace tessera::cuda {

// Fills `out` for `graph` (the captured graph whose node handles are `layout`'s keys), `repeats`
// replays per boundary on stream `s`, timed with `timer`. False with out.note where it cannot.
bool stamp_boundaries(cudaGraph_t graph, const std::vector<std::vector<rt::CapturedWork>>& layout,
                      int repeats, cudaStream_t s, ReplayTimer& timer, rt::BoundaryTimes& out);

}  // namespace tessera::cuda
