// tessera extract MODEL -o OUT (--subgraph NODE:ATTR[/NODE:ATTR...] | --function DOMAIN:NAME |
//                               --inputs a,b --outputs c,d)
#include "cli/commands.h"
#include "cli/transform_io.h"
#include "transforms/extract.h"

namespace tessera::cli {

void add_extract_command(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand(
      "extract",
      "Save part of a model as a model of its own: a subgraph or local function body (outer values\n"
      "become inputs), or the nodes between named values of the main graph");
  auto io = add_transform_io(cmd, false);
  auto opts = std::make_shared<transforms::ExtractOptions>();
  cmd->add_option("--subgraph", opts->subgraph, "NODE:ATTR[/NODE:ATTR...], e.g. loop:body/if_1:then_branch");
  cmd->add_option("--function", opts->function, "DOMAIN:NAME of a local function");
  cmd->add_option("--inputs", opts->inputs, "Values where the cut starts (comma-separated)")->delimiter(',');
  cmd->add_option("--outputs", opts->outputs, "Values where the cut ends (comma-separated)")->delimiter(',');
  cmd->callback([io, opts, &status] {
    run_transform("extract", *io, status, [&](ir::Model& m) {
      transforms::Report report;
      m = transforms::extract(m, *opts, report);
      return report;
    });
  });
}

}  // namespace tessera::cli
