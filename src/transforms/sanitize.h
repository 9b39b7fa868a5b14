// `tessera sanitize`: the model made simpler without changing what it computes. Constant folding
// (nothing folded whose result is larger than a threshold), shape folding (static shapes only: symbolic
// dimensions stay symbolic), Identity and no-op removal, merging of identical nodes, dead node and
// unused initializer removal, repeated to a fixed point or for a given number of passes. The rewrites are
// the engine's own basic-level rules (src/passes), so folded values are what the session computes.
#pragma once

#include <cstdint>
#include <functional>

#include "ir/commands/history.h"
#include "transforms/transform.h"

namespace tessera::transforms {

struct SanitizeOptions {
  // Results of more bytes than this stay computed at run time. The engine's folding rule has its own
  // ceiling of 64 MiB, which a larger threshold does not lift.
  int64_t fold_threshold = int64_t{16} << 20;
  // Sweeps over the graph (the seed's "number of constant folding passes"); 0: until a sweep changes
  // nothing (at most 64).
  int passes = 0;
  // Called before each sweep with its number (1, 2...) and the most there will be, for a progress line.
  // It may throw to stop (the studio's Cancel): the model `h` edits is then left as it was.
  std::function<void(int, int)> progress;
};

Report sanitize(ir::History& h, const SanitizeOptions& options);
ir::Model sanitize_copy(const ir::Model& m, const SanitizeOptions& options, Report& report);

}  // namespace tessera::transforms
