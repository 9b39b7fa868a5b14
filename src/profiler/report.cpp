#include "profiler/report.h"

#include <algorithm>
#include <ctime>
#include <thread>

#include "ir/dtype.h"

namespace tessera::profiler {

namespace {

// A layer's key in the table: its graph and node id (its name's hash where the node has no id).
std::pair<std::string, uint64_t> layer_key(const std::string& graph, uint64_t id, const std::string& name) {
  return {graph, id == 0 ? std::hash<std::string>{}(name) : id};
}

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

nlohmann::json planner_json(const rt::MemoryStats& m) {
  return {{"peak_bytes", m.peak_bytes},
          {"planner_lower_bound_bytes", m.lower_bound_bytes},
          {"arena_bytes", m.arena_bytes}};
}

nlohmann::json inputs_json(const ReportInfo& info) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& [name, v] : info.inputs) {
    nlohmann::json in{{"name", name}};
    if (v.is_tensor()) {
      in["dtype"] = ir::dtype_name(v.tensor().dtype());
      in["shape"] = v.tensor().shape();
    }
    inputs.push_back(std::move(in));
  }
  return inputs;
}

// A count that may be unknown: null then.
nlohmann::json maybe(const std::optional<double>& x) {
  return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
}

nlohmann::json layer_json(const Layer& l, double layer_sum_us, int runs, const Peaks& peaks) {
  const Work w = l.work_per_run(runs);
  const Roofline r = layer_roofline(w, l.total_us / 1000.0 / runs, peaks);
  return {{"graph", l.graph},
          {"node_id", l.node_id},
          {"name", l.name},
          {"op_type", l.op_type},
          {"kernel", l.kernel},
          {"path", l.path},
          {"backend", l.backend},
          {"device", l.device},
          {"calls_per_run", static_cast<double>(l.calls) / runs},
          {"time_ms", l.total_us / 1000.0 / runs},
          {"span_ms", l.span_us / 1000.0 / runs},
          {"stamped_ms", l.stamped_us < 0 ? nlohmann::json() : nlohmann::json(l.stamped_us / 1000.0)},
          {"percent", layer_sum_us > 0 ? 100.0 * l.total_us / runs / layer_sum_us : 0.0},
          {"output_shapes", l.output_shapes},
          {"fused_from", l.fused_from},
          {"device_kernels", l.device_kernels},
          {"flops", maybe(w.flops)},
          {"bytes", maybe(w.bytes)},
          {"work_rule", w.rule},
          {"tflops_per_s", r.tflops_per_s},
          {"gbps", r.gbps},
          {"intensity", r.intensity},
          {"bound", r.bound},
          {"bound_ms", r.bound_ms},
          {"percent_of_bound", r.percent_of_bound}};
}

}  // namespace

void LayerTable::add(const rt::RunStats& run) {
  for (const auto& ev : run.events) {
    Layer& l = by_node_[layer_key(ev.graph_path, ev.node_id, ev.node_name)];
    l.graph = ev.graph_path;
    l.node_id = ev.node_id;
    l.name = ev.node_name;
    l.op_type = ev.op_type;
    l.kernel = ev.kernel;
    l.path = ev.path;
    l.backend = ev.backend;
    l.device = ev.device;
    l.calls++;
    l.total_us += ev.duration_us;
    l.span_us += ev.span_us;
    span_total_us_ += ev.span_us;
    l.output_shapes = ev.output_shapes;
    l.fused_from = ev.fused_from;
    for (const auto& k : ev.device_kernels)
      if (std::find(l.device_kernels.begin(), l.device_kernels.end(), k) == l.device_kernels.end())
        l.device_kernels.push_back(k);
    total_us_ += ev.duration_us;
  }
  if (run.device_us > 0) {
    traced_runs_++;
    device_total_us_ += run.device_us;
    if (run.layers_from_replay) {
      replayed_runs_++;
      replay_method_ = run.replay_trace_method;
    }
  }
}

void LayerTable::add_stamped(const rt::RunStats& run) {
  stamp_note_ = run.stamp_note;
  if (run.stamped.empty()) return;
  stamped_total_us_ = 0;
  for (const auto& s : run.stamped) {
    auto it = by_node_.find(layer_key(s.graph_path, s.node_id, s.node_name));
    if (it == by_node_.end()) continue;
    it->second.stamped_us = s.span_us;
    stamped_total_us_ += s.span_us;
  }
  stamped_device_us_ = run.stamped_device_us;
  stamped_replays_ = run.stamped_replays;
}

TraceSummary summarize_trace(const LayerTable& table, const RunTimes& times, const std::string& note) {
  TraceSummary t;
  int n = table.traced_runs();
  const int replayed = table.replayed_runs();
  t.layers_source = n == 0          ? "host"
                    : replayed == n ? "replayed graph"
                    : replayed == 0 ? "node by node"
                                    : "mixed";
  t.untraced_run_ms = summarize(times.untraced_run_ms).median_ms;
  t.traced_run_ms = summarize(times.traced_run_ms).median_ms;
  t.untraced_device_ms = summarize(times.untraced_device_ms).median_ms;
  t.traced_device_ms = summarize(times.traced_device_ms).median_ms;
  if (n > 0) {
    t.device_ms = table.device_total_us() / 1000.0 / n;
    t.layer_sum_ms = table.total_us() / 1000.0 / n;
    t.span_sum_ms = table.span_total_us() / 1000.0 / n;
  }
  t.note = note;
  if (replayed > 0) t.method = table.replay_method();
  t.stamped_sum_ms = table.stamped_total_us() / 1000.0;
  t.stamped_device_ms = table.stamped_device_us() / 1000.0;
  t.stamped_replays = table.stamped_replays();
  t.stamp_note = table.stamp_note();
  return t;
}

nlohmann::json trace_json(const TraceSummary& t) {
  return {{"layers_source", t.layers_source},
          {"method", t.method},
          {"untraced_run_ms", t.untraced_run_ms},
          {"traced_run_ms", t.traced_run_ms},
          {"overhead_percent", t.overhead_percent()},
          {"untraced_device_ms", t.untraced_device_ms},
          {"traced_device_ms", t.traced_device_ms},
          {"device_overhead_percent", t.device_overhead_percent()},
          {"device_ms", t.device_ms},
          {"layer_sum_ms", t.layer_sum_ms},
          {"layer_sum_percent_of_device", t.device_ms > 0 ? 100.0 * t.layer_sum_ms / t.device_ms : 0.0},
          {"span_sum_ms", t.span_sum_ms},
          {"note", t.note},
          {"stamped_replays", t.stamped_replays},
          {"stamped_layer_sum_ms", t.stamped_sum_ms},
          {"stamped_device_ms", t.stamped_device_ms},
          {"stamp_overhead_percent", t.stamp_overhead_percent()},
          {"stamp_note", t.stamp_note}};
}

std::vector<Layer> LayerTable::layers() const {
  std::vector<Layer> out;
  for (const auto& [k, l] : by_node_) out.push_back(l);
  std::sort(out.begin(), out.end(), [](const Layer& a, const Layer& b) { return a.total_us > b.total_us; });
  return out;
}

Latency summarize(std::vector<double> ms) {
  Latency s;
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  double sum = 0;
  for (double x : ms) sum += x;
  s.mean_ms = sum / static_cast<double>(ms.size());
  size_t n = ms.size();
  s.median_ms = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  s.min_ms = ms.front();
  s.max_ms = ms.back();
  return s;
}

nlohmann::json memory_json(const rt::RunStats& st) {
  nlohmann::json j = planner_json(st.memory);
  j["weight_bytes"] = st.weight_bytes;
  j["prepared_weight_bytes"] = st.prepared_weight_bytes;
  j["released_weight_bytes"] = st.released_weight_bytes;
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : st.devices) {
    nlohmann::json dj = planner_json(d.memory);
    dj["backend"] = d.backend;
    dj["device"] = d.device;
    devices.push_back(std::move(dj));
  }
  j["devices"] = std::move(devices);
  return j;
}

nlohmann::json report_json(const ReportInfo& info, const rt::Session& session, const Latency& latency,
                           const std::vector<Layer>& layers, double layer_sum_us, int runs) {
  nlohmann::json j;
  j["schema"] = "tessera.profile";
  j["version"] = kReportVersion;
  j["created"] = now_iso();
  j["tool"] = {{"name", "tessera"}, {"version", "0.1.0"}};
  const auto& m = session.model();
  j["model"] = {{"path", info.model_path},
                {"producer", m.producer_name + (m.producer_version.empty() ? "" : " " + m.producer_version)},
                {"opset", m.opset_version("").value_or(0)},
                {"nodes_after_optimization", m.graph.nodes.size()}};
  j["settings"] = {
      {"backend", info.backend},       {"threads", info.threads}, {"optimization", info.optimization},
      {"iterations", info.iterations}, {"warmup", info.warmup},   {"inputs", inputs_json(info)}};
  const rt::PrecisionResult& prec = session.precision();
  j["settings"]["precision"] = passes::precision_name(prec.precision);
  j["precision"] = {{"compute", passes::precision_name(prec.precision)},
                    {"lowered_nodes", prec.lowered},
                    {"kept_float32", prec.kept},
                    {"casts_added", prec.casts},
                    {"note", prec.note}};
  // The backends that ran the model, in order of preference; the host (CPU) last. `device` (the first,
  // where most layers ran) is version 1's single device, kept for readers of that version.
  const std::vector<rt::BackendInfo> placed = session.backends();
  nlohmann::json backends = nlohmann::json::array();
  for (const auto& b : placed)
    backends.push_back(
        {{"backend", b.name}, {"device", b.device}, {"name", b.device_name}, {"nodes", b.nodes}});
  j["backends"] = backends;
  const rt::BackendInfo& first = placed.front();
  j["device"] = {{"kind", first.name == "cpu" ? "cpu" : first.name},
                 {"name", first.device_name},
                 {"hardware_threads", std::thread::hardware_concurrency()}};
  j["latency_ms"] = {{"mean", latency.mean_ms},
                     {"median", latency.median_ms},
                     {"min", latency.min_ms},
                     {"max", latency.max_ms}};
  j["layer_sum_ms"] = layer_sum_us / 1000.0;
  j["memory"] = memory_json(session.last_stats());
  j["layers"] = nlohmann::json::array();
  for (const auto& l : layers) j["layers"].push_back(layer_json(l, layer_sum_us, runs, info.peaks));
  j["roofline"] = roofline_json(summarize_roofline(layers, runs, info.peaks, latency.median_ms));
  return j;
}

}  // namespace tessera::profiler
