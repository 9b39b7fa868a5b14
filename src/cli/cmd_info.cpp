// tessera info MODEL [--json]
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/json_types.h"
#include "ir/summary.h"
#include "onnx/onnx_io.h"

namespace tessera::cli {
namespace {

std::string human_bytes(int64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string domain_name(const std::string& d) {
  return d.empty() ? "ai.onnx" : d;
}

// External data that `check` and `run` would refuse: the load's own messages (LoadOptions::
// external_data_problems), one per tensor.
using Problems = std::vector<std::string>;

void print_text(const std::string& path, const ir::ModelSummary& s, const Problems& problems) {
  fmt::print("Model        {}\n", path);
  fmt::print("IR version   {}\n", s.ir_version);
  if (!s.producer.empty()) fmt::print("Producer     {}\n", s.producer);
  for (const auto& o : s.opsets) fmt::print("Opset        {} {}\n", domain_name(o.domain), o.version);
  fmt::print("Inputs\n");
  for (const auto& v : s.inputs) fmt::print("  {:<24} {}\n", v.name, v.type.to_string());
  fmt::print("Outputs\n");
  for (const auto& v : s.outputs) fmt::print("  {:<24} {}\n", v.name, v.type.to_string());
  fmt::print("Nodes        {} ({} operator types{})\n", s.node_count, s.op_counts.size(),
             s.function_count ? fmt::format(", {} local functions", s.function_count) : "");
  std::vector<std::pair<std::string, int64_t>> ops(s.op_counts.begin(), s.op_counts.end());
  std::stable_sort(ops.begin(), ops.end(), [](auto& a, auto& b) { return a.second > b.second; });
  for (const auto& [op, n] : ops) fmt::print("  {:<32} {}\n", op, n);
  fmt::print("Parameters   {} ({})\n", s.parameter_count, human_bytes(s.parameter_bytes));
  for (const auto& f : s.external_files) fmt::print("External     {}\n", f);
  for (const auto& p : problems) fmt::print("  refused    {}\n", p);
}

nlohmann::json to_json(const std::string& path, const ir::ModelSummary& s, const Problems& problems) {
  nlohmann::json j;
  j["model"] = path;
  j["ir_version"] = s.ir_version;
  j["producer"] = s.producer;
  j["opsets"] = nlohmann::json::array();
  for (const auto& o : s.opsets)
    j["opsets"].push_back({{"domain", domain_name(o.domain)}, {"version", o.version}});
  j["inputs"] = nlohmann::json::array();
  for (const auto& v : s.inputs) j["inputs"].push_back(value_json(v));
  j["outputs"] = nlohmann::json::array();
  for (const auto& v : s.outputs) j["outputs"].push_back(value_json(v));
  j["node_count"] = s.node_count;
  j["op_counts"] = s.op_counts;
  j["parameter_count"] = s.parameter_count;
  j["parameter_bytes"] = s.parameter_bytes;
  j["external_data_files"] = s.external_files;
  j["external_data_problems"] = problems;
  j["function_count"] = s.function_count;
  return j;
}

}  // namespace

void add_info_command(CLI::App& app, int& status) {
  auto* cmd =
      app.add_subcommand("info", "Show a model's IR version, opsets, inputs, outputs, operators and size");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("MODEL", *path, "ONNX model file")->required();
  cmd->add_flag("--json", *json, "Print JSON instead of text");
  cmd->callback([path, json, &status] {
    ir::Model model;
    Problems problems;
    try {
      onnx::LoadOptions opts;
      opts.load_external_data = false;  // info needs shapes and sizes, not the bytes
      opts.external_data_problems = &problems;
      model = onnx::load_model(*path, opts);
    } catch (const std::exception& e) {
      fmt::print(stderr, "tessera info: cannot read {}: {}\n", *path, e.what());
      status = kUnreadable;
      return;
    }
    ir::ModelSummary s = ir::summarize(model);
    if (*json) {
      std::cout << to_json(*path, s, problems).dump(2) << "\n";
    } else {
      print_text(*path, s, problems);
    }
    status = kOk;
  });
}

}  // namespace tessera::cli
