#include "transforms/set_shapes.h"

#include <fmt/format.h>

#include <charconv>
#include <unordered_map>

#include "check/checker.h"
#include "transforms/observer.h"

namespace tessera::transforms {

namespace {

std::string input_names(const ir::Graph& g) {
  std::string s;
  for (const auto& vi : g.inputs) {
    if (g.find_initializer(vi.name)) continue;
    s += (s.empty() ? "" : ", ") + vi.name;
  }
  return s;
}

ir::ValueInfo& find_input(ir::Graph& g, const std::string& name, const char* option) {
  for (auto& vi : g.inputs)
    if (vi.name == name) return vi;
  throw TransformError(fmt::format("{} names '{}', which is not an input of the model (inputs: {})", option,
                                   name, input_names(g)));
}

std::string first_error(const check::Diagnostics& d) {
  for (const auto& item : d.items)
    if (item.severity == check::Severity::kError) return item.to_string();
  return {};
}

}  // namespace

std::optional<ir::Shape> parse_shape(const std::string& s) {
  ir::Shape dims;
  if (s.empty() || s == "scalar") return dims;
  // A symbol may itself contain an 'x' ("max_len"): such shapes are written with commas.
  char sep = s.find(',') != std::string::npos ? ',' : 'x';
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    std::string tok = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (tok.empty()) return std::nullopt;
    int64_t v = 0;
    auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (ec == std::errc() && p == tok.data() + tok.size()) {
      if (v < 0) return std::nullopt;
      dims.push_back(ir::Dim::of(v));
    } else {
      dims.push_back(ir::Dim::symbol(tok));
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return dims;
}

ir::Model set_shapes_copy(const ir::Model& m, const SetShapesOptions& o, Report& report) {
  ir::Model out = m;
  ir::Graph& g = out.graph;
  for (const auto& s : o.shapes) {
    ir::ValueInfo& vi = find_input(g, s.input, "--shape");
    if (!vi.type.is_none() && !vi.type.is_tensor())
      throw TransformError(
          fmt::format("--shape: input '{}' is a {}, not a tensor", s.input, vi.type.type_string()));
    if (vi.type.is_none())
      throw TransformError(fmt::format("--shape: input '{}' has no element type", s.input));
    vi.type.shape = s.dims;
    report.add("input shapes set");
    report.details.push_back(fmt::format("input '{}': {}", s.input, vi.type.to_string()));
  }
  for (const auto& d : o.dim_params) {
    ir::ValueInfo& vi = find_input(g, d.input, "--dim-param");
    if (!vi.type.is_tensor() || !vi.type.shape)
      throw TransformError(
          fmt::format("--dim-param: input '{}' has no known rank; give --shape first", d.input));
    auto rank = static_cast<int64_t>(vi.type.shape->size());
    int64_t axis = d.axis < 0 ? d.axis + rank : d.axis;
    if (axis < 0 || axis >= rank)
      throw TransformError(fmt::format("--dim-param: axis {} is out of range for input '{}' of rank {}",
                                       d.axis, d.input, rank));
    if (d.name.empty())
      throw TransformError(fmt::format("--dim-param: no variable name for input '{}'", d.input));
    (*vi.type.shape)[static_cast<size_t>(axis)] = ir::Dim::symbol(d.name);
    report.add("dimension variables set");
    report.details.push_back(fmt::format("input '{}': {}", d.input, vi.type.to_string()));
  }
  report_progress(0.05, "inferring shapes");
  auto checked = check::check_model(out);
  if (checked.diagnostics.has_errors()) {
    throw TransformError(fmt::format("with these input shapes the model does not type-check: {}",
                                     first_error(checked.diagnostics)));
  }
  std::unordered_map<std::string, size_t> vi_index;
  for (size_t i = 0; i < g.value_info.size(); ++i) vi_index[g.value_info[i].name] = i;
  Steps steps("storing value types", g.nodes.size(), 0.6, 0.9);
  for (const auto& n : g.nodes) {
    steps.at(static_cast<size_t>(&n - g.nodes.data()));
    for (const auto& v : n.outputs) {
      auto it = checked.value_types.find(v);
      if (v.empty() || it == checked.value_types.end()) continue;
      bool is_output = false;
      for (auto& o2 : g.outputs) {
        if (o2.name != v) continue;
        is_output = true;
        if (o2.type != it->second) report.add("output types refined");
        o2.type = it->second;
      }
      if (is_output) continue;
      auto at = vi_index.find(v);
      if (at == vi_index.end()) {
        vi_index[v] = g.value_info.size();
        g.value_info.push_back({v, it->second, {}, {}});
        report.add("value types stored");
      } else if (g.value_info[at->second].type != it->second) {
        g.value_info[at->second].type = it->second;
        report.add("value types updated");
      }
    }
  }
  return out;
}

Report set_shapes(ir::History& h, const SetShapesOptions& options) {
  Report report;
  ir::Model out = set_shapes_copy(h.model(), options, report);
  report_progress(0.95, "recording the edit");
  commit(h, "Set input shapes", std::move(out));
  return report;
}

}  // namespace tessera::transforms
