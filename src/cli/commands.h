// The `tessera` subcommands. Each adds itself to the app and stores its exit status in `status`.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera::cli {

// Exit statuses shared by the subcommands.
inline constexpr int kOk = 0;
inline constexpr int kFindings = 1;    // the command ran and found errors (check)
inline constexpr int kUnreadable = 2;  // the input could not be read at all, or bad usage

void add_info_command(CLI::App& app, int& status);
void add_check_command(CLI::App& app, int& status);
void add_new_command(CLI::App& app, int& status);
void add_run_command(CLI::App& app, int& status);
void add_profile_command(CLI::App& app, int& status);
void add_optimize_command(CLI::App& app, int& status);
void add_convert_command(CLI::App& app, int& status);
void add_sanitize_command(CLI::App& app, int& status);
void add_set_shapes_command(CLI::App& app, int& status);
void add_extract_command(CLI::App& app, int& status);
void add_function_command(CLI::App& app, int& status);
void add_tool_command(CLI::App& app, int& status);
void add_import_layer_command(CLI::App& app, int& status);
void add_studio_command(CLI::App& app, int& status);

}  // namespace tessera::cli
