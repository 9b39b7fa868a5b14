// The profile report: the per-layer times of several profiled runs, aggregated by ONNX node id (fused
// nodes keep the names of the nodes they replaced), with the run's settings, the backends and devices
// that ran it and their memory. One versioned JSON format (docs/profile-report.md) that the CLI prints,
// the studio charts and the comparison reads.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "runtime/session.h"

namespace tessera::profiler {

inline constexpr int kReportVersion = 2;

// One node of the model over all profiled runs.
struct Layer {
  std::string graph, name, op_type, kernel, path, backend, device;
  uint64_t node_id = 0;
  int64_t calls = 0;
  double total_us = 0;
  std::vector<rt::Shape> output_shapes;
  std::vector<std::string> fused_from;
  std::vector<std::string> device_kernels;  // what the device ran for it (traced runs), by name
};

// Sums the events of each run by (graph, node id): ties times to nodes by id, never by time.
class LayerTable {
 public:
  void add(const rt::RunStats& run);
  // The layers, most expensive first.
  std::vector<Layer> layers() const;
  // The summed layer time over all runs added, in microseconds.
  double total_us() const { return total_us_; }

 private:
  std::map<std::pair<std::string, uint64_t>, Layer> by_node_;
  double total_us_ = 0;
};

struct Latency {
  double mean_ms = 0, median_ms = 0, min_ms = 0, max_ms = 0;
};
Latency summarize(std::vector<double> ms);

// What the report says besides the layers.
struct ReportInfo {
  std::string model_path;
  std::string backend;  // as asked: cpu, cuda, auto
  int threads = 0;
  std::string optimization;
  int iterations = 0, warmup = 0;
  std::vector<std::pair<std::string, rt::Value>> inputs;  // dtype and shape are reported, not values
};

// The "memory" object: host peak, planner bound, arena, weights, prepared and released weights, and
// each device's planned memory.
nlohmann::json memory_json(const rt::RunStats& st);

nlohmann::json report_json(const ReportInfo& info, const rt::Session& session, const Latency& latency,
                           const std::vector<Layer>& layers, double layer_sum_us_per_run, int runs);

}  // namespace tessera::profiler
