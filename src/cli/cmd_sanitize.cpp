// tessera sanitize MODEL -o OUT [--fold-threshold BYTES] [--passes N]: constant and shape folding, no-op
// and dead node removal, to a fixed point, with the engine's own rules (src/transforms/sanitize.h).
#include "cli/commands.h"
#include "cli/transform_io.h"
#include "ir/commands/history.h"
#include "transforms/sanitize.h"

namespace tessera::cli {

void add_sanitize_command(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand("sanitize",
                                 "Fold constants and static shapes (static elements of symbolic shapes "
                                 "too), merge equal\nconstants and nodes, remove no-ops, dead nodes and "
                                 "unused initializers; what the model\ncomputes stays bit for bit the same");
  auto io = add_transform_io(cmd);
  auto opts = std::make_shared<transforms::SanitizeOptions>();
  cmd->add_option("--fold-threshold", opts->fold_threshold,
                  "Largest folded result in bytes; larger ones stay computed (default 16 MiB)");
  cmd->add_option("--passes", opts->passes, "Sweeps over the graph; 0: until nothing changes (default)");
  cmd->callback([io, opts, &status] {
    run_transform("sanitize", *io, status, [&](ir::Model& m) {
      ir::History h(m);
      return transforms::sanitize(h, *opts);
    });
  });
}

}  // namespace tessera::cli
