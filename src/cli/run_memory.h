// The memory a run will need, known before it allocates anything: `tessera run` and `tessera profile`
// stop with a message when it exceeds what the machine has free (or --memory-limit), instead of
// allocating until the kernel's OOM killer ends them.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "runtime/session.h"

namespace tessera::cli {

// The session's memory plan predicted from the inputs' shapes: every value of the optimised main graph
// typed as `tessera check` infers it with the inputs' sizes and the shape chains evaluated for them
// (run_shape_values.h: ViT's 331 values past its batch-sized Reshapes), each living from the node that makes
// it to the last node that reads it (the graph's outputs to the end), in the order the session runs them.
// What the memory planner's first run would learn as its lower bound (most bytes live at once), before it.
struct PlannedMemory {
  size_t peak_bytes = 0;  // most bytes of node outputs live at once
  std::string at_node;    // the node running then ("name (OpType)")
  size_t unknown = 0;     // node outputs whose size only the run tells (NonZero's...): counted as 0, the
                          // peak is then a lower bound, and the message says how many
};

PlannedMemory plan_memory(const rt::Session& session,
                          const std::vector<std::pair<std::string, rt::Value>>& feeds);

// Throws std::runtime_error when the planned peak of a run on the host exceeds `limit` bytes, naming
// both (the message says "for one run", as the planner's own stop does). Does nothing for a session
// placed on a GPU (its device memory is another budget) or with `limit` 0.
void check_planned_memory(const rt::Session& session,
                          const std::vector<std::pair<std::string, rt::Value>>& feeds, size_t limit);

}  // namespace tessera::cli
