// tessera: the command-line face of the Tessera core.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Tessera: design, check, run and profile ONNX models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tessera 0.1.0");
  int status = tessera::cli::kOk;
  tessera::cli::add_info_command(app, status);
  tessera::cli::add_check_command(app, status);
  tessera::cli::add_new_command(app, status);
  tessera::cli::add_run_command(app, status);
  tessera::cli::add_profile_command(app, status);
  tessera::cli::add_optimize_command(app, status);
  tessera::cli::add_convert_command(app, status);
  tessera::cli::add_sanitize_command(app, status);
  tessera::cli::add_set_shapes_command(app, status);
  tessera::cli::add_extract_command(app, status);
  tessera::cli::add_function_command(app, status);
  tessera::cli::add_tool_command(app, status);
  tessera::cli::add_import_layer_command(app, status);
  tessera::cli::add_studio_command(app, status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : tessera::cli::kUnreadable;
  }
  return status;
}
