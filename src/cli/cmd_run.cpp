// tessera run MODEL [inputs] [--iterations N] [--output-dir DIR] ...: runs a model and reports latency,
// memory and a summary of each output.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/json_types.h"
#include "cli/run_inputs.h"
#include "io/npy.h"
#include "onnx/data_value.h"
#include "runtime/value_io.h"
#include "util/atomic_file.h"

namespace fs = std::filesystem;

namespace tessera::cli {
namespace {

// output_<k>.npy for tensors NumPy can hold, output_<k>.pb otherwise; outputs.json maps names to files.
void write_outputs(const rt::Session& session, const std::vector<rt::Value>& outs, const fs::path& dir) {
  fs::create_directories(dir);
  nlohmann::json index = nlohmann::json::object();
  for (size_t k = 0; k < outs.size(); ++k) {
    const std::string& name = session.outputs()[k].name;
    const rt::Value& v = outs[k];
    bool npy = v.is_tensor() && v.tensor().dtype() != ir::DataType::kString &&
               ir::dtype_bits(v.tensor().dtype()) >= 8 && v.tensor().dtype() != ir::DataType::kBFloat16 &&
               !(ir::dtype_is_float(v.tensor().dtype()) && ir::dtype_bits(v.tensor().dtype()) == 8);
    std::string file = fmt::format("output_{}.{}", k, npy ? "npy" : "pb");
    if (npy)
      io::write_npy(v.tensor().to_ir(name), dir / file);
    else
      onnx::write_data_value(rt::value_to_data(v, name), dir / file);
    index[name] = file;
  }
  std::string text = index.dump(2) + "\n";
  util::write_file_atomically(dir / "outputs.json", std::as_bytes(std::span(text)));
}

}  // namespace

void add_run_command(CLI::App& app, int& status) {
  auto* cmd =
      app.add_subcommand("run",
                         "Run a model and report latency, peak memory and its outputs.\n"
                         "Inputs not given are random (free dimensions 1 unless --shape says otherwise).");
  auto s = std::make_shared<RunSettings>();
  auto out_dir = std::make_shared<std::string>();
  add_run_options(cmd, *s);
  cmd->add_option("--output-dir,-o", *out_dir, "Write output_<k>.npy (or .pb) and outputs.json here");
  cmd->callback([s, out_dir, &status] {
    std::unique_ptr<rt::Session> session;
    std::vector<std::pair<std::string, rt::Value>> feeds;
    try {
      session = rt::Session::load(s->model, session_options(*s));
      feeds = gather_inputs(*session, *s);
    } catch (const std::exception& e) {
      fmt::print(stderr, "tessera run: {}: {}\n", s->model, e.what());
      status = kUnreadable;
      return;
    }
    std::vector<rt::Value> outs;
    std::vector<double> ms;
    try {
      ms = timed_runs(*session, feeds, *s, outs);
      if (!out_dir->empty()) write_outputs(*session, outs, *out_dir);
    } catch (const std::exception& e) {
      fmt::print(stderr, "tessera run: {}: {}\n", s->model, run_error_message(e));
      status = kFindings;
      return;
    }
    auto lat = summarize(ms);
    const auto& st = session->last_stats();
    if (s->json) {
      nlohmann::json j;
      j["model"] = s->model;
      j["iterations"] = s->iterations;
      j["threads"] = s->threads;
      j["optimization"] = s->optimization;
      j["latency_ms"] = {
          {"mean", lat.mean_ms}, {"median", lat.median_ms}, {"min", lat.min_ms}, {"max", lat.max_ms}};
      j["memory"] = profiler::memory_json(st);
      j["precision"] = passes::precision_name(session->precision().precision);
      j["device_graph_replays"] = st.device_graph_replays;
      if (!st.device_graph_note.empty()) j["device_graph_note"] = st.device_graph_note;
      j["backends"] = nlohmann::json::array();
      for (const auto& b : session->backends())
        j["backends"].push_back({{"backend", b.name}, {"device", b.device}, {"nodes", b.nodes}});
      j["outputs"] = nlohmann::json::array();
      for (size_t k = 0; k < outs.size(); ++k)
        j["outputs"].push_back({{"name", session->outputs()[k].name}, {"summary", describe_value(outs[k])}});
      std::cout << j.dump(2) << "\n";
      return;
    }
    fmt::print("{}: {} runs ({} warmup), {} optimisation\n", s->model, s->iterations, s->warmup,
               s->optimization);
    fmt::print("latency  mean {:.3f} ms  median {:.3f} ms  min {:.3f} ms\n", lat.mean_ms, lat.median_ms,
               lat.min_ms);
    fmt::print("memory   {}\n", memory_line(st));
    fmt::print("compute  {}\n", placement_line(*session));
    for (size_t k = 0; k < outs.size(); ++k)
      fmt::print("output {} '{}': {}\n", k, session->outputs()[k].name, describe_value(outs[k]));
    if (!out_dir->empty()) fmt::print("outputs written to {}\n", *out_dir);
  });
}

}  // namespace tessera::cli
