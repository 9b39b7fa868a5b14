#include "cli/transform_io.h"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "cli/commands.h"
#include "onnx/onnx_io.h"

namespace tessera::cli {

namespace fs = std::filesystem;

std::shared_ptr<TransformIo> add_transform_io(CLI::App* cmd, bool allow_in_place) {
  auto io = std::make_shared<TransformIo>();
  cmd->add_option("MODEL", io->model, "ONNX model file")->required();
  cmd->add_option("--output,-o", io->output, "Where to save the result (never the input, unless --in-place)");
  if (allow_in_place) cmd->add_flag("--in-place", io->in_place, "Overwrite MODEL with the result");
  cmd->add_flag("--verbose,-v", io->verbose, "List every change");
  return io;
}

namespace {

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec)) return true;
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

// Tensor bytes the saved model would hold, to decide whether it must use external data.
int64_t tensor_bytes(const ir::Graph& g) {
  int64_t total = 0;
  for (const auto& t : g.initializers) total += t.expected_bytes().value_or(0);
  for (const auto& n : g.nodes) {
    for (const auto& a : n.attributes) {
      for (const auto& t : a.tensors) total += t.expected_bytes().value_or(0);
      for (const auto& sub : a.graphs) total += tensor_bytes(*sub);
    }
  }
  return total;
}

onnx::SaveOptions save_options(const ir::Model& m) {
  onnx::SaveOptions o;
  // Protobuf refuses messages past 2 GiB; leave room for the graph itself.
  constexpr int64_t kInlineLimit = int64_t{1800} << 20;
  if (tensor_bytes(m.graph) > kInlineLimit) o.external_data = onnx::SaveOptions::ExternalData::kExternal;
  return o;
}

}  // namespace

void run_transform(const std::string& name, const TransformIo& io, int& status,
                   const std::function<transforms::Report(ir::Model&)>& transform) {
  auto fail = [&](int code, const std::string& msg) {
    fmt::print(stderr, "tessera {}: {}\n", name, msg);
    status = code;
  };
  std::string out = io.output;
  if (io.in_place) {
    if (!out.empty() && !same_file(out, io.model))
      return fail(kUnreadable, "give either --output or --in-place");
    out = io.model;
  } else if (out.empty()) {
    return fail(kUnreadable, "give --output FILE (or --in-place to overwrite the model)");
  } else if (same_file(out, io.model)) {
    return fail(kUnreadable,
                fmt::format("--output '{}' is the input model; add --in-place to overwrite it", out));
  }
  ir::Model m;
  try {
    m = onnx::load_model(io.model);
  } catch (const std::exception& e) {
    return fail(kUnreadable, fmt::format("cannot read {}: {}", io.model, e.what()));
  }
  transforms::Report report;
  try {
    report = transform(m);
  } catch (const std::exception& e) {  // TransformError, or a run of the model failing (amp)
    return fail(kFindings, fmt::format("{}: {}", io.model, e.what()));
  }
  try {
    onnx::save_model(m, out, save_options(m));
  } catch (const std::exception& e) {
    return fail(kFindings, fmt::format("cannot save {}: {}", out, e.what()));
  }
  print_report(report, io.verbose);
  fmt::print("saved {}\n", out);
}

void print_report(const transforms::Report& r, bool verbose) {
  for (const auto& w : r.warnings) fmt::print(stderr, "warning: {}\n", w);
  for (const auto& [what, n] : r.counts) {
    if (n != 0 || what.starts_with("nodes") || what.starts_with("initializers"))
      fmt::print("  {:<34} {}\n", what, n);
  }
  if (!verbose) return;
  for (const auto& d : r.details) fmt::print("  {}\n", d);
}

}  // namespace tessera::cli
