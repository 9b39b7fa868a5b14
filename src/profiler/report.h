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

#include "profiler/roofline.h"
#include "runtime/session.h"

namespace tessera::profiler {

inline constexpr int kReportVersion = 2;

// One node of the model over all profiled runs.
struct Layer {
  std::string graph, name, op_type, kernel, path, backend, device;
  uint64_t node_id = 0;
  int64_t calls = 0;
  double total_us = 0;
  double span_us = 0;  // traced runs: from its first device work to the next layer's (NodeEvent::span_us)
  // A stamped run (RunStats::stamped): its span from stamped replays, untraced; -1 where there is none.
  double stamped_us = -1;
  std::vector<rt::Shape> output_shapes;
  std::vector<std::string> fused_from;
  std::vector<std::string> device_kernels;  // what the device ran for it (traced runs), by name
  Work work;  // of one call (count_work), counted from the model; empty until counted
  // Its work per run: one call's times the calls per run.
  Work work_per_run(int runs) const;
};

// Sums the events of each run by (graph, node id): ties times to nodes by id, never by time.
class LayerTable {
 public:
  void add(const rt::RunStats& run);
  // A stamped run's spans (RunStats::stamped) onto the layers added before, by the same key.
  void add_stamped(const rt::RunStats& run);
  double stamped_total_us() const { return stamped_total_us_; }
  double stamped_device_us() const { return stamped_device_us_; }
  int stamped_replays() const { return stamped_replays_; }
  const std::string& stamp_note() const { return stamp_note_; }
  // The layers, most expensive first.
  std::vector<Layer> layers() const;
  // The summed layer time over all runs added, in microseconds.
  double total_us() const { return total_us_; }
  // Traced runs: their summed spans and device end-to-end times (RunStats::device_us), how many there
  // were, and how many took their layers from a traced replay of the captured device graph.
  double span_total_us() const { return span_total_us_; }
  double device_total_us() const { return device_total_us_; }
  int traced_runs() const { return traced_runs_; }
  int replayed_runs() const { return replayed_runs_; }
  const std::string& replay_method() const { return replay_method_; }  // of the last traced replay

 private:
  std::map<std::pair<std::string, uint64_t>, Layer> by_node_;
  double total_us_ = 0, span_total_us_ = 0, device_total_us_ = 0;
  int traced_runs_ = 0, replayed_runs_ = 0;
  std::string replay_method_;
  double stamped_total_us_ = 0, stamped_device_us_ = 0;
  int stamped_replays_ = 0;
  std::string stamp_note_;
};

// How the layer times relate to the run they came from (a GPU profile: traced runs after untraced ones).
struct TraceSummary {
  std::string layers_source;  // "replayed graph", "node by node" (traced), "host" (timed inline)
  std::string method;         // replayed: how records were tied to nodes ("graph node ids", "launch order")
  double untraced_run_ms = 0, traced_run_ms = 0;  // medians of the runs' own time (RunStats::total_us)
  // Medians of the replayed graph's device time (RunStats::replay_device_us) of untraced runs timed so
  // and of the traced runs: the profiling overhead where the layers are measured. 0 where not replayed.
  double untraced_device_ms = 0, traced_device_ms = 0;
  double device_ms = 0;                      // mean device end-to-end time of a traced run
  double layer_sum_ms = 0, span_sum_ms = 0;  // per traced run
  std::string note;                          // why a replayed model was profiled node by node
  // Stamped replays (runtime/replay_trace.h): the layers' spans measured untraced, one stamp kernel per
  // replay. Their sum, the median device time of a stamped replay, how many replays; or why none.
  double stamped_sum_ms = 0, stamped_device_ms = 0;
  int stamped_replays = 0;
  std::string stamp_note;
  // On the device, the stamped replays against untraced ones: what the stamped layer times cost.
  double stamp_overhead_percent() const {
    return untraced_device_ms > 0 && stamped_device_ms > 0
               ? 100.0 * (stamped_device_ms - untraced_device_ms) / untraced_device_ms
               : 0;
  }
  // On the host: each run's own time, traced against untraced.
  double overhead_percent() const {
    return untraced_run_ms > 0 ? 100.0 * (traced_run_ms - untraced_run_ms) / untraced_run_ms : 0;
  }
  // On the device: the replayed graph's time, traced against untraced (0 where not measured).
  double device_overhead_percent() const {
    return untraced_device_ms > 0 && traced_device_ms > 0
               ? 100.0 * (traced_device_ms - untraced_device_ms) / untraced_device_ms
               : 0;
  }
};
// The times, in ms, of a GPU profile's runs: each run's own time (RunStats::total_us) and the replayed
// graph's device time (RunStats::replay_device_us), untraced and traced.
struct RunTimes {
  std::vector<double> untraced_run_ms, traced_run_ms, untraced_device_ms, traced_device_ms;
};
TraceSummary summarize_trace(const LayerTable& table, const RunTimes& times, const std::string& note);
nlohmann::json trace_json(const TraceSummary& t);

// Counts each layer's work (Layer::work) over the session's optimised model `model`: element types as the
// checker infers them, shapes as the run saw them (graph inputs as fed, node outputs as the layers
// report them), inferred shapes where the run saw none. Layers of subgraphs are not counted (their work
// stays empty); copies between devices count the bytes of the value they copy.
void count_work(std::vector<Layer>& layers, const ir::Model& model,
                const std::vector<std::pair<std::string, rt::Value>>& feeds);

// The layers of one kind of bound, per run.
struct BoundClass {
  size_t layers = 0;
  double time_ms = 0, flops = 0, bytes = 0, bound_ms = 0;
};
// The whole model against the roofline: where its time goes by bound, and how close it gets.
struct RooflineSummary {
  Peaks peaks;
  double model_flops = 0, model_bytes = 0;  // per run, layers whose work is counted
  double layer_ms = 0;                      // sum of the layers' times per run
  double latency_ms = 0;                    // end-to-end (median)
  BoundClass compute, memory;
  BoundClass other;  // no bound: FLOPs not counted, copies between devices, views, or no peaks
  std::vector<std::string> not_counted;  // operators whose FLOPs the rules do not count
  double model_tflops_per_s() const { return latency_ms > 0 ? model_flops / latency_ms / 1e9 : 0; }
};
RooflineSummary summarize_roofline(const std::vector<Layer>& layers, int runs, const Peaks& peaks,
                                   double latency_ms);
nlohmann::json roofline_json(const RooflineSummary& s);

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
  Peaks peaks;                                            // for the layers' roofline bounds
};

// The "memory" object: host peak, planner bound, arena, weights, prepared and released weights, and
// each device's planned memory.
nlohmann::json memory_json(const rt::RunStats& st);

nlohmann::json report_json(const ReportInfo& info, const rt::Session& session, const Latency& latency,
                           const std::vector<Layer>& layers, double layer_sum_us_per_run, int runs);

}  // namespace tessera::profiler
