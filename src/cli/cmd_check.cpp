// tessera check MODEL [--json] [--identifiers]
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "check/checker.h"
#include "cli/commands.h"
#include "onnx/onnx_io.h"

namespace tessera::cli {
namespace {

nlohmann::json to_json(const std::string& path, const check::Diagnostics& d) {
  nlohmann::json j;
  j["model"] = path;
  j["errors"] = d.count(check::Severity::kError);
  j["warnings"] = d.count(check::Severity::kWarning);
  j["diagnostics"] = nlohmann::json::array();
  for (const auto& x : d.items) {
    nlohmann::json e{
        {"severity", check::severity_name(x.severity)}, {"graph", x.graph}, {"message", x.message}};
    if (!x.node.empty() || !x.op_type.empty()) {
      e["node"] = x.node;
      e["op_type"] = x.op_type;
    }
    if (x.input_index >= 0) e["input"] = x.input_index;
    if (x.output_index >= 0) e["output"] = x.output_index;
    j["diagnostics"].push_back(std::move(e));
  }
  return j;
}

}  // namespace

void add_check_command(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand(
      "check",
      "Type-check a model: structure, operator schemas and shapes.\nExit status: 0 no errors, 1 errors "
      "found, 2 the file cannot be read");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto identifiers = std::make_shared<bool>(false);
  cmd->add_option("MODEL", *path, "ONNX model file")->required();
  cmd->add_flag("--json", *json, "Print JSON instead of text");
  cmd->add_flag("--identifiers", *identifiers, "Also list names that are not valid C identifiers");
  cmd->callback([path, json, identifiers, &status] {
    ir::Model model;
    try {
      model = onnx::load_model(*path);
    } catch (const std::exception& e) {
      if (*json) {
        std::cout << nlohmann::json{{"model", *path}, {"unreadable", e.what()}}.dump(2) << "\n";
      } else {
        fmt::print(stderr, "tessera check: cannot read {}: {}\n", *path, e.what());
      }
      status = kUnreadable;
      return;
    }
    check::CheckOptions opts;
    opts.check_identifiers = *identifiers;
    check::CheckResult r = check::check_model(model, opts);
    const auto& d = r.diagnostics;
    if (*json) {
      std::cout << to_json(*path, d).dump(2) << "\n";
    } else {
      for (const auto& x : d.items) fmt::print("{}\n", x.to_string());
      fmt::print("{}: {} errors, {} warnings\n", *path, d.count(check::Severity::kError),
                 d.count(check::Severity::kWarning));
    }
    status = d.has_errors() ? kFindings : kOk;
  });
}

}  // namespace tessera::cli
