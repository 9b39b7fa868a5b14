// The layers' work, counted once over the session's optimised model when the report is made (never per
// run), and the model's roofline summary.
#include <set>
#include <unordered_map>

#include "check/checker.h"
#include "profiler/report.h"

namespace tessera::profiler {

namespace {

// Element types and shapes as the checker infers them over the optimised model.
ValueInfos inferred_values(const ir::Model& model) {
  ValueInfos values;
  const check::CheckResult checked = check::check_model(model);
  for (const auto& [name, type] : checked.value_types) {
    if (!type.is_tensor()) continue;
    TensorInfo t{type.elem, std::nullopt};
    if (type.shape && ir::shape_is_static(*type.shape)) {
      std::vector<int64_t> dims;
      for (const auto& d : *type.shape) dims.push_back(d.value);
      t.shape = std::move(dims);
    }
    values.emplace(name, std::move(t));
  }
  for (const auto& init : model.graph.initializers)
    values.insert_or_assign(init.name, TensorInfo{init.dtype, init.dims});
  return values;
}

// A copy the session inserted is named "MemcpyToDevice(value)": the value it copies.
std::string copied_value(const Layer& l) {
  const size_t open = l.name.find('('), close = l.name.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return {};
  return l.name.substr(open + 1, close - open - 1);
}

Work copy_work(const Layer& l, const ValueInfos& values) {
  ir::Node copy;
  copy.op_type = l.op_type;
  const std::string value = copied_value(l);
  auto it = values.find(value);
  ValueInfos own;
  if (it != values.end()) {
    TensorInfo t = it->second;
    if (!l.output_shapes.empty()) t.shape = l.output_shapes.front();
    own.emplace(value, std::move(t));
  }
  copy.inputs = {value};
  copy.outputs = {value};
  return node_work(copy, own);
}

void add_to(BoundClass& c, const Work& w, double time_ms, const Roofline& r) {
  c.layers++;
  c.time_ms += time_ms;
  c.flops += w.flops.value_or(0);
  c.bytes += w.bytes.value_or(0);
  c.bound_ms += r.bound_ms;
}

nlohmann::json class_json(const BoundClass& c, double layer_ms, double peak, bool compute) {
  const double rate = c.time_ms > 0 ? (compute ? c.flops / c.time_ms / 1e9 : c.bytes / c.time_ms / 1e6) : 0;
  nlohmann::json j{{"layers", c.layers},
                   {"time_ms", c.time_ms},
                   {"percent_of_layer_time", layer_ms > 0 ? 100.0 * c.time_ms / layer_ms : 0.0},
                   {"flops", c.flops},
                   {"bytes", c.bytes},
                   {"bound_ms", c.bound_ms}};
  j[compute ? "tflops_per_s" : "gbps"] = rate;
  j["percent_of_peak"] = peak > 0 ? 100.0 * rate / peak : 0.0;
  return j;
}

}  // namespace

Work Layer::work_per_run(int runs) const {
  Work w = work;
  const double per_run = runs > 0 ? static_cast<double>(calls) / runs : 0;
  if (w.flops) *w.flops *= per_run;
  if (w.bytes) *w.bytes *= per_run;
  return w;
}

void count_work(std::vector<Layer>& layers, const ir::Model& model,
                const std::vector<std::pair<std::string, rt::Value>>& feeds) {
  ValueInfos values = inferred_values(model);
  for (const auto& [name, v] : feeds)
    if (v.is_tensor()) values.insert_or_assign(name, TensorInfo{v.tensor().dtype(), v.tensor().shape()});
  std::unordered_map<uint64_t, const ir::Node*> nodes;
  for (const auto& n : model.graph.nodes) nodes.emplace(n.id, &n);
  auto node_of = [&](const Layer& l) -> const ir::Node* {
    if (l.graph != "main" || l.node_id == 0) return nullptr;
    auto it = nodes.find(l.node_id);
    return it == nodes.end() || it->second->op_type != l.op_type ? nullptr : it->second;
  };
  // The shapes the run saw: a tensor's shape in the last run beats the inferred one (a dimension the
  // checker could not resolve, a symbolic batch).
  for (const auto& l : layers) {
    const ir::Node* n = node_of(l);
    if (!n) continue;
    for (size_t k = 0; k < n->outputs.size() && k < l.output_shapes.size(); ++k) {
      auto it = values.find(n->outputs[k]);
      if (it != values.end()) it->second.shape = l.output_shapes[k];
    }
  }
  for (auto& l : layers) {
    if (l.op_type == "MemcpyToDevice" || l.op_type == "MemcpyToHost")
      l.work = copy_work(l, values);
    else if (const ir::Node* n = node_of(l))
      l.work = node_work(*n, values);
  }
}

RooflineSummary summarize_roofline(const std::vector<Layer>& layers, int runs, const Peaks& peaks,
                                   double latency_ms) {
  RooflineSummary s;
  s.peaks = peaks;
  s.latency_ms = latency_ms;
  std::set<std::string> not_counted;
  for (const auto& l : layers) {
    const double time_ms = runs > 0 ? l.total_us / 1000.0 / runs : 0;
    const Work w = l.work_per_run(runs);
    const Roofline r = layer_roofline(w, time_ms, peaks);
    s.layer_ms += time_ms;
    s.model_flops += w.flops.value_or(0);
    s.model_bytes += w.device_copy ? 0 : w.bytes.value_or(0);
    if (!w.flops && !w.device_copy && l.graph == "main") not_counted.insert(l.op_type);
    add_to(r.bound == "compute" ? s.compute : r.bound == "memory" ? s.memory : s.other, w, time_ms, r);
  }
  s.not_counted.assign(not_counted.begin(), not_counted.end());
  return s;
}

nlohmann::json roofline_json(const RooflineSummary& s) {
  return {
      {"peak_tflops", s.peaks.tflops},
      {"peak_gbps", s.peaks.gbps},
      {"peak_source", s.peaks.source},
      {"model_flops", s.model_flops},
      {"model_bytes", s.model_bytes},
      {"model_tflops_per_s", s.model_tflops_per_s()},
      {"model_percent_of_peak", s.peaks.tflops > 0 ? 100.0 * s.model_tflops_per_s() / s.peaks.tflops : 0.0},
      {"compute_bound", class_json(s.compute, s.layer_ms, s.peaks.tflops, true)},
      {"memory_bound", class_json(s.memory, s.layer_ms, s.peaks.gbps, false)},
      {"unbounded",
       {{"layers", s.other.layers},
        {"time_ms", s.other.time_ms},
        {"percent_of_layer_time", s.layer_ms > 0 ? 100.0 * s.other.time_ms / s.layer_ms : 0.0}}},
      {"flops_not_counted", s.not_counted}};
}

}  // namespace tessera::profiler
