// tessera import-layer MODEL OTHER.onnx --name N [--domain D] -o OUT: OTHER as a local function of MODEL.
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/transform_io.h"
#include "ir/commands/history.h"
#include "onnx/onnx_io.h"
#include "transforms/import_layer.h"

namespace tessera::cli {

void add_import_layer_command(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand("import-layer",
                                 "Import another model as a local function usable as a layer (its weights "
                                 "become constants of the body)");
  auto io = add_transform_io(cmd);
  auto other = std::make_shared<std::string>();
  auto opts = std::make_shared<transforms::ImportLayerOptions>();
  cmd->add_option("OTHER", *other, "The model to import")->required();
  cmd->add_option("--name", opts->name, "The layer's (function's) name")->required();
  cmd->add_option("--domain", opts->domain, "Its domain (default: local)");
  cmd->callback([io, other, opts, &status] {
    run_transform("import-layer", *io, status, [&](ir::Model& m) {
      ir::Model o;
      try {
        o = onnx::load_model(*other);
      } catch (const std::exception& e) {
        throw transforms::TransformError(fmt::format("cannot read {}: {}", *other, e.what()));
      }
      ir::History h(m);
      return transforms::import_layer(h, o, *opts);
    });
  });
}

}  // namespace tessera::cli
