// tessera tool list | add NAME APPLICATION [ARGUMENTS...] | remove NAME | run NAME MODEL [--output OUT]
// The user tools of the studio's Tools menu (src/transforms/user_tools.h), from the command line.
#include <fmt/format.h>

#include "check/checker.h"
#include "cli/commands.h"
#include "onnx/onnx_io.h"
#include "transforms/user_tools.h"

namespace tessera::cli {

namespace {

using transforms::UserTool;

std::filesystem::path file_of(const std::string& option) {
  return option.empty() ? transforms::default_tools_file() : std::filesystem::path(option);
}

int fail(const std::string& what, const std::string& msg, int code) {
  fmt::print(stderr, "tessera tool {}: {}\n", what, msg);
  return code;
}

int list(const std::filesystem::path& file) {
  auto tools = transforms::load_tools(file);
  if (tools.empty()) fmt::print("no tools in {}\n", file.string());
  for (const auto& t : tools) {
    fmt::print("{:<20} {} {}{}{}\n", t.name, t.application, fmt::join(t.arguments, " "),
               t.prompt_for_output ? "  [prompts for output]" : "", t.open_output ? " [opens output]" : "");
  }
  return kOk;
}

int add(const std::filesystem::path& file, UserTool tool) {
  auto tools = transforms::load_tools(file);
  for (const auto& t : tools)
    if (t.name == tool.name)
      return fail("add", fmt::format("a tool named '{}' already exists", tool.name), kFindings);
  tools.push_back(std::move(tool));
  transforms::save_tools(file, tools);
  fmt::print("added '{}' to {}\n", tools.back().name, file.string());
  return kOk;
}

int remove(const std::filesystem::path& file, const std::string& name) {
  auto tools = transforms::load_tools(file);
  size_t before = tools.size();
  std::erase_if(tools, [&](const UserTool& t) { return t.name == name; });
  if (tools.size() == before) return fail("remove", fmt::format("no tool named '{}'", name), kFindings);
  transforms::save_tools(file, tools);
  fmt::print("removed '{}' from {}\n", name, file.string());
  return kOk;
}

int run(const std::filesystem::path& file, const std::string& name, const std::string& model,
        const std::string& output) {
  auto tools = transforms::load_tools(file);
  auto it = std::find_if(tools.begin(), tools.end(), [&](const UserTool& t) { return t.name == name; });
  if (it == tools.end())
    return fail("run", fmt::format("no tool named '{}' in {}", name, file.string()), kFindings);
  if (it->prompt_for_output && output.empty())
    return fail("run", fmt::format("tool '{}' writes a model: give --output FILE", name), kUnreadable);
  transforms::ToolResult r = transforms::run_tool(*it, model, output);
  if (r.cancelled) return fail("run", fmt::format("tool '{}' cancelled", name), kFindings);
  if (r.signal)
    return fail("run", fmt::format("tool '{}' was ended by signal {}", name, r.signal), kFindings);
  if (r.exit_status != 0)
    return fail("run", fmt::format("tool '{}' exited with status {}", name, r.exit_status), kFindings);
  fmt::print("tool '{}' exited with status 0\n", name);
  if (output.empty() || !std::filesystem::exists(output)) return kOk;
  try {
    auto checked = check::check_model(onnx::load_model(output));
    size_t errors = checked.diagnostics.count(check::Severity::kError);
    if (errors)
      return fail("run",
                  fmt::format("output {} has {} type-check errors (see tessera check)", output, errors),
                  kFindings);
    fmt::print("output {} type-checks\n", output);
  } catch (const std::exception& e) {
    return fail("run", fmt::format("output {} is not a readable model: {}", output, e.what()), kFindings);
  }
  return kOk;
}

}  // namespace

void add_tool_command(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand(
      "tool", "User tools: external programs run on a model ($XDG_CONFIG_HOME/tessera/tools.json)");
  cmd->require_subcommand(1);
  auto file = std::make_shared<std::string>();
  cmd->add_option("--tools-file", *file, "The tools file (default $XDG_CONFIG_HOME/tessera/tools.json)");
  auto tool = std::make_shared<UserTool>();
  auto model = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();

  auto guarded = [&status](const std::function<int()>& fn) {
    try {
      status = fn();
    } catch (const transforms::TransformError& e) {
      fmt::print(stderr, "tessera tool: {}\n", e.what());
      status = kFindings;
    }
  };
  cmd->add_subcommand("list", "List the tools")->callback([=] {
    guarded([&] { return list(file_of(*file)); });
  });

  auto* a =
      cmd->add_subcommand("add", "Add a tool; arguments may use $Model and $Output (put them after --)");
  a->add_option("NAME", tool->name, "Tool name")->required();
  a->add_option("APPLICATION", tool->application, "Program (a path, or a name looked up in PATH)")
      ->required();
  a->add_option("ARGUMENTS", tool->arguments, "Its arguments");
  a->add_flag("--prompt-for-output", tool->prompt_for_output, "The tool writes a model ($Output): ask where");
  a->add_flag("--open-output", tool->open_output, "Open the output model when the tool is done (studio)");
  a->callback([=] { guarded([&] { return add(file_of(*file), *tool); }); });

  auto* r = cmd->add_subcommand("remove", "Remove a tool");
  r->add_option("NAME", tool->name, "Tool name")->required();
  r->callback([=] { guarded([&] { return remove(file_of(*file), tool->name); }); });

  auto* x = cmd->add_subcommand("run", "Run a tool on a model, streaming its output; Ctrl+C ends it");
  x->add_option("NAME", tool->name, "Tool name")->required();
  x->add_option("MODEL", *model, "The model ($Model)")->required();
  x->add_option("--output,-o", *output, "Where the tool writes its model ($Output); checked afterwards");
  x->callback([=] { guarded([&] { return run(file_of(*file), tool->name, *model, *output); }); });
}

}  // namespace tessera::cli
