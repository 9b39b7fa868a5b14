// Measurements of the model core, driven by bench/model_core.sh:
//   model_core_bench make-large FILE MIB     write a single-file model with about MIB MiB of weights
//   model_core_bench read FILE RUNS          read the file into memory (the floor for loading it)
//   model_core_bench load FILE RUNS          tessera's load_model (weights stay memory-mapped)
//   model_core_bench load-touch FILE RUNS    load_model, then read every weight byte (pages them in)
//   model_core_bench check LAYERS RUNS       check a transformer of LAYERS blocks (about 38 nodes each)
// Each timing mode prints the median, minimum and maximum seconds over RUNS runs after one warm-up.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "check/checker.h"
#include "ir/builder.h"
#include "onnx/onnx_io.h"
#include "samples.h"
#include "server/document.h"

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Wall time, and the process's CPU time, which a machine shared with other work disturbs less.
void time_runs(const std::string& what, int runs, const std::function<void()>& fn) {
  fn();  // warm-up: page cache, allocator
  std::vector<double> secs, cpu;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    double c0 = cpu_seconds();
    fn();
    cpu.push_back(cpu_seconds() - c0);
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(secs.begin(), secs.end());
  std::sort(cpu.begin(), cpu.end());
  fmt::print("{} median {:.4f} s min {:.4f} s max {:.4f} s runs {} (cpu median {:.4f} s)\n", what,
             secs[secs.size() / 2], secs.front(), secs.back(), runs, cpu[cpu.size() / 2]);
}

int make_large(const std::string& file, int64_t mib) {
  using namespace tessera;
  ir::Model m;
  m.ir_version = 8;
  m.opset_imports.push_back({"", 17});
  m.graph.name = "large";
  ir::GraphBuilder b(m.graph);
  // A chain of MatMuls over 1024x1024 float weights (4 MiB each).
  auto x = b.input(
      "x", ir::Type::tensor(ir::DataType::kFloat, ir::Shape{ir::Dim::symbol("batch"), ir::Dim::of(1024)}));
  std::vector<float> w(1024 * 1024);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 977) * 1e-3f;
  for (int64_t k = 0; k < mib / 4; ++k) {
    auto name =
        b.initializer(ir::make_tensor("w" + std::to_string(k), ir::DataType::kFloat, {1024, 1024}, w));
    x = b.node("MatMul", {x, name});
  }
  b.output(x);
  onnx::SaveOptions opts;
  opts.external_data = onnx::SaveOptions::ExternalData::kInline;
  onnx::save_model(m, file, opts);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    fmt::print(stderr, "usage: {} make-large|read|load|check ARG RUNS_OR_MIB\n", argv[0]);
    return 2;
  }
  std::string mode = argv[1];
  std::string arg = argv[2];
  int n = std::stoi(argv[3]);
  try {
    if (mode == "make-large") return make_large(arg, n);
    if (mode == "read") {
      time_runs("read", n, [&] {
        // One read() into a buffer of the file's size: the floor any loader that reads the file has.
        std::ifstream in(arg, std::ios::binary | std::ios::ate);
        std::string bytes(static_cast<size_t>(in.tellg()), '\0');
        in.seekg(0);
        if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size())) || bytes.empty())
          throw std::runtime_error("cannot read " + arg);
      });
      return 0;
    }
    if (mode == "load") {
      time_runs("load", n, [&] { (void)tessera::onnx::load_model(arg); });
      return 0;
    }
    if (mode == "load-touch") {
      uint64_t sum = 0;
      time_runs("load-touch", n, [&] {
        tessera::ir::Model m = tessera::onnx::load_model(arg);
        for (const auto& t : m.graph.initializers) {
          auto b = t.bytes();
          // One byte per page is enough to make the kernel bring the whole page in.
          for (size_t i = 0; i < b.size(); i += 4096) sum += static_cast<uint8_t>(b[i]);
        }
      });
      fmt::print("checksum {}\n", sum);
      return 0;
    }
    if (mode == "studio-edit") {
      // One studio edit on the transformer: a command through the document's history, its diagnostics
      // brought up to date, and the answer's JSON (what POST .../commands does after parsing).
      auto doc = std::make_unique<tessera::server::Document>(
          "d1", tessera::samples::make_transformer(std::stoi(arg), false), std::nullopt, "bench.onnx");
      fmt::print("nodes {}\n", doc->model().graph.nodes.size());
      tessera::ir::NodeId id = doc->model().graph.nodes[doc->model().graph.nodes.size() / 2].id;
      int k = 0;
      time_runs("studio-edit", n, [&] {
        auto changes = doc->edit([&](tessera::ir::History& h) {
          h.execute(std::make_unique<tessera::ir::RenameNode>(tessera::ir::GraphPath::main_graph(), id,
                                                              fmt::format("renamed_{}", k++)));
        });
        (void)tessera::server::diagnostics_json(doc->model(), doc->checker().result().diagnostics).dump();
      });
      fmt::print("last edit: {}, {} nodes checked\n",
                 doc->checker().last_incremental() ? "incremental" : "full check",
                 doc->checker().last_checked_nodes());
      return 0;
    }
    if (mode == "check") {
      tessera::ir::Model m = tessera::samples::make_transformer(std::stoi(arg), false);
      fmt::print("nodes {}\n", m.graph.nodes.size());
      size_t errors = 0;
      time_runs("check", n, [&] {
        errors = tessera::check::check_model(m).diagnostics.count(tessera::check::Severity::kError);
      });
      fmt::print("errors {}\n", errors);
      return errors == 0 ? 0 : 1;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "model_core_bench: {}\n", e.what());
    return 1;
  }
  fmt::print(stderr, "unknown mode {}\n", mode);
  return 2;
}
