// User tools: external programs run on the open model from a Tools menu (the studio) or `tessera tool`.
// They live in a JSON file, `$XDG_CONFIG_HOME/tessera/tools.json` (~/.config/tessera/tools.json):
//
//   {"tools": [{"name": "simplify", "application": "/usr/bin/onnxsim",
//               "arguments": ["$Model", "$Output"], "prompt_for_output": true, "open_output": true}]}
//
// `$Model` and `$Output` in an argument are replaced by the model's and the output's paths. The program
// runs with that argument list and no shell, so no path or name is ever interpreted as shell syntax.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "transforms/transform.h"

namespace tessera::transforms {

struct UserTool {
  std::string name;
  std::string application;             // a path, or a program name looked up in PATH
  std::vector<std::string> arguments;  // with $Model / $Output
  bool prompt_for_output = false;      // the tool writes a model: ask where ($Output)
  bool open_output = false;            // open that model when the tool is done
  bool operator==(const UserTool& o) const = default;
};

// The tools file: $XDG_CONFIG_HOME/tessera/tools.json, or $HOME/.config/tessera/tools.json.
std::filesystem::path default_tools_file();

// The tools in `file`; none when it does not exist. Throws TransformError naming the file and what is
// wrong (not valid JSON, with the position; a tool without a name or application; a name used twice).
std::vector<UserTool> load_tools(const std::filesystem::path& file);
// Writes the file atomically, creating its folder.
void save_tools(const std::filesystem::path& file, const std::vector<UserTool>& tools);

// The argument list with $Model and $Output replaced.
std::vector<std::string> expand_arguments(const UserTool& tool, const std::string& model,
                                          const std::string& output);

struct ToolResult {
  int exit_status = -1;  // when it exited
  int signal = 0;        // when a signal ended it
  bool cancelled = false;
};

// Runs the tool with its stdout and stderr going straight to ours (streamed as it writes them). While
// it runs, SIGINT and SIGTERM to this process are passed on to the tool (Ctrl+C ends the child, and
// the result says cancelled). Throws TransformError when the program cannot be started (not found,
// not executable), naming the tool and the program.
ToolResult run_tool(const UserTool& tool, const std::string& model, const std::string& output);

}  // namespace tessera::transforms
