#include "server/document.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "onnx/onnx_io.h"
#include "util/atomic_file.h"

namespace tessera::server {

namespace fs = std::filesystem;

FileStamp stamp_of(const fs::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return {};
  return {true, int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec,
          static_cast<uint64_t>(st.st_size)};
}

fs::path layout_path(const fs::path& model_file) {
  return model_file.string() + ".tessera.json";
}

Document::Document(std::string id, ir::Model model, std::optional<fs::path> path, std::string name)
    : id_(std::move(id)), name_(std::move(name)), path_(std::move(path)), model_(std::move(model)) {
  history_.set_listener([this](const std::vector<ir::Change>& c) {
    pending_.insert(pending_.end(), c.begin(), c.end());
    names_.update(model_, c);
  });
  if (path_) {
    stamp_ = stamp_of(*path_);
    load_layout();
  }
  checker_.reset(model_);
  // Room for the nodes the user will add: a model read from a file has its node list at capacity, so
  // the first add_node moved every node to a new buffer (40-50 ms of the first add's answer on 50,000
  // nodes under load; later adds 2-8 ms).
  std::vector<ir::Node>& nodes = model_.graph.nodes;
  nodes.reserve(nodes.size() + nodes.size() / 4 + 64);
  names_.rebuild(model_);  // at opening, not in the first edit's answer
}

json Document::to_json() const {
  bool changed = path_ && !(stamp_of(*path_) == stamp_);
  return {{"id", id_},
          {"path", path_ ? json(path_->string()) : json(nullptr)},
          {"name", name_},
          {"dirty", history_.is_dirty()},
          {"version", version_},
          {"can_undo", history_.can_undo()},
          {"can_redo", history_.can_redo()},
          {"undo", history_.undo_description()},
          {"redo", history_.redo_description()},
          {"changed_on_disk", changed}};
}

// The companion file: {"version": 1, "graphs": {"main": {"positions": {"conv_1": [x, y]},
// "inputs": {"x": [x, y]}, "outputs": {"y": [x, y]}}, "function custom.Gelu": {"path": {...},
// "positions": {...}}}}, positions keyed by node name, graph inputs and outputs by value name.
// A missing or unreadable companion file only loses positions, never the model.
namespace {
bool is_xy(const json& xy) {
  return xy.is_array() && xy.size() == 2 && xy[0].is_number() && xy[1].is_number();
}

bool has_value(const std::vector<ir::ValueInfo>& list, const std::string& name) {
  return std::any_of(list.begin(), list.end(), [&](const ir::ValueInfo& v) { return v.name == name; });
}

// entry[field] = {"NAME": [x, y]} for the graph inputs (or outputs) `list` still has, into `out` as
// PREFIX + NAME.
void load_io(const json& entry, const char* field, const char* prefix, const std::vector<ir::ValueInfo>& list,
             std::map<std::string, std::pair<double, double>>& out) {
  if (!entry.contains(field) || !entry[field].is_object()) return;
  for (auto& [name, xy] : entry[field].items()) {
    if (is_xy(xy) && has_value(list, name)) out[prefix + name] = {xy[0].get<double>(), xy[1].get<double>()};
  }
}
}  // namespace

namespace {
// The decimal id at the start of `s` (0 when none), and what follows it.
ir::NodeId leading_id(std::string_view s, std::string_view* rest) {
  size_t k = 0;
  ir::NodeId id = 0;
  for (; k < s.size() && k < 19 && s[k] >= '0' && s[k] <= '9'; ++k) id = id * 10 + (s[k] - '0');
  *rest = s.substr(k);
  return k ? id : 0;
}
}  // namespace

const ir::Node* call_body_node(const ir::Model& m, const ir::Graph& g, std::string_view key,
                               const ir::Node** call) {
  if (!key.starts_with("f:")) return nullptr;
  std::string_view rest;
  ir::NodeId call_id = leading_id(key.substr(2), &rest);
  if (!call_id || !rest.starts_with(":")) return nullptr;
  ir::NodeId body_id = leading_id(rest.substr(1), &rest);
  if (!body_id || !rest.empty()) return nullptr;
  const ir::Node* c = g.find_node(call_id);
  const ir::Function* fn = c ? m.find_function(c->domain, c->op_type, c->overload) : nullptr;
  if (!fn) return nullptr;
  if (call) *call = c;
  return fn->body.find_node(body_id);
}

// Positions of graph inputs, outputs and call body nodes `g` still has, from "i:NAME"/"o:NAME"/"f:.."
// keys.
json io_positions_json(const ir::Model& m, const ir::Graph& g,
                       const std::map<std::string, std::pair<double, double>>& io) {
  json out = json::object();
  for (const auto& [key, xy] : io) {
    std::string name = key.substr(2);
    bool exists = key.starts_with("f:")   ? call_body_node(m, g, key) != nullptr
                  : key.starts_with("i:") ? has_value(g.inputs, name)
                                          : has_value(g.outputs, name);
    if (exists) out[key] = {xy.first, xy.second};
  }
  return out;
}

namespace {
// entry["calls"] = {"CALL": {"BODY_NODE": [x, y]}} (by name: ids are the session's) into `out` as
// "f:CALL_ID:BODY_NODE_ID" for the calls and body nodes `g` (in `m`) still has.
const ir::Node* node_named(const ir::Graph& g, std::string_view name) {
  auto it = std::find_if(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) { return n.name == name; });
  return it == g.nodes.end() ? nullptr : &*it;
}

void load_calls(const json& entry, const ir::Model& m, const ir::Graph& g,
                std::map<std::string, std::pair<double, double>>& out) {
  if (!entry.contains("calls") || !entry["calls"].is_object()) return;
  for (auto& [call_name, nodes] : entry["calls"].items()) {
    const ir::Node* call = node_named(g, call_name);
    const ir::Function* fn = call ? m.find_function(call->domain, call->op_type, call->overload) : nullptr;
    if (!fn || !nodes.is_object()) continue;
    for (auto& [name, xy] : nodes.items()) {
      const ir::Node* n = node_named(fn->body, name);
      if (n && is_xy(xy))
        out[fmt::format("f:{}:{}", call->id, n->id)] = {xy[0].get<double>(), xy[1].get<double>()};
    }
  }
}
}  // namespace

void Document::load_layout() {
  std::ifstream in(layout_path(*path_));
  if (!in) return;
  json j = json::parse(in, nullptr, false);
  if (!j.is_object() || !j.contains("graphs") || !j["graphs"].is_object()) return;
  for (auto& [key, entry] : j["graphs"].items()) {
    if (!entry.is_object() || !entry.contains("positions") || !entry["positions"].is_object()) continue;
    try {
      ir::GraphPath p =
          entry.contains("path") ? ir::graph_path_from_json(entry["path"]) : ir::GraphPath::main_graph();
      ir::Graph& g = ir::resolve_graph(model_, p);
      std::string key = ir::graph_path_to_json(p).dump();
      auto& out = positions_[key];
      for (auto& [name, xy] : entry["positions"].items()) {
        ir::Node* n = g.find_node(name);
        if (!n || !is_xy(xy)) continue;
        out[n->id] = {xy[0].get<double>(), xy[1].get<double>()};
      }
      load_io(entry, "inputs", "i:", g.inputs, io_positions_[key]);
      load_io(entry, "outputs", "o:", g.outputs, io_positions_[key]);
      load_calls(entry, model_, g, io_positions_[key]);
    } catch (const std::exception&) {
      continue;  // a graph that no longer exists
    }
  }
}

namespace {
// {"inputs": {"x": [x, y]}, "outputs": {...}, "calls": {"CALL": {"BODY_NODE": [x, y]}}} into a companion
// file's graph entry (unnamed calls and body nodes are not saved, as unnamed nodes are not).
void add_io(json& entry, const ir::Model& m, const ir::Graph& g,
            const std::map<std::string, std::pair<double, double>>& io) {
  json positions = io_positions_json(m, g, io);
  for (const auto& [key, xy] : positions.items()) {
    const ir::Node* call = nullptr;
    if (const ir::Node* n = call_body_node(m, g, key, &call)) {
      if (!call->name.empty() && !n->name.empty()) entry["calls"][call->name][n->name] = xy;
      continue;
    }
    entry[key.starts_with("i:") ? "inputs" : "outputs"][key.substr(2)] = xy;
  }
}
}  // namespace

void Document::save(const fs::path& file) {
  json graphs = json::object();
  std::set<std::string> keys;
  for (const auto& [key, by_id] : positions_) keys.insert(key);
  for (const auto& [key, io] : io_positions_) keys.insert(key);
  for (const std::string& key : keys) {
    const auto& by_id = positions_[key];
    ir::GraphPath p = ir::graph_path_from_json(json::parse(key));
    const ir::Graph* g = nullptr;
    try {
      g = &ir::resolve_graph(std::as_const(model_), p);
    } catch (const ir::CommandError&) {
      continue;
    }
    json pos = json::object();
    for (const auto& [id, xy] : by_id) {
      const ir::Node* n = g->find_node(id);
      if (n && !n->name.empty()) pos[n->name] = {xy.first, xy.second};
    }
    json entry{{"positions", std::move(pos)}};
    add_io(entry, model_, *g, io_positions_[key]);
    if (p != ir::GraphPath::main_graph()) entry["path"] = ir::graph_path_to_json(p);
    graphs[ir::path_string(model_, p)] = std::move(entry);
  }
  try {
    onnx::save_model(model_, file);
    std::string layout = json{{"version", 1}, {"graphs", std::move(graphs)}}.dump(1);
    util::write_file_atomically(layout_path(file), std::as_bytes(std::span(layout.data(), layout.size())));
  } catch (const std::exception& e) {
    throw HttpError{500, fmt::format("saving '{}' failed: {}", file.string(), e.what())};
  }
  if (path_ != file) name_ = file.filename().string();
  path_ = file;
  model_.base_dir = file.parent_path();
  stamp_ = stamp_of(file);
  history_.mark_clean();
}

std::unique_ptr<Document> open_document(std::string id, const fs::path& file) {
  ir::Model m;
  try {
    m = onnx::load_model(file);
  } catch (const std::exception& e) {
    throw HttpError{400, fmt::format("cannot read '{}': {}", file.string(), e.what())};
  }
  return std::make_unique<Document>(std::move(id), std::move(m), file, file.filename().string());
}

namespace {
// The IR version that goes with an ai.onnx opset (the ONNX release table, as `tessera new` uses).
int64_t ir_version_for_opset(int64_t opset) {
  constexpr std::pair<int64_t, int64_t> kTable[] = {{8, 3},  {9, 4},  {10, 5},  {11, 6},  {14, 7},
                                                    {18, 8}, {20, 9}, {22, 10}, {23, 11}, {25, 12}};
  for (auto [last_opset, ir] : kTable) {
    if (opset <= last_opset) return ir;
  }
  return 13;
}
}  // namespace

std::unique_ptr<Document> new_document(std::string id, std::string name, int64_t opset,
                                       const std::vector<ir::OpsetImport>& domains) {
  ir::Model m;
  m.ir_version = ir_version_for_opset(opset);
  m.producer_name = "tessera";
  m.opset_imports.push_back({"", opset});
  for (const ir::OpsetImport& d : domains) m.opset_imports.push_back(d);
  m.graph.name = "main";
  return std::make_unique<Document>(std::move(id), std::move(m), std::nullopt, std::move(name));
}

}  // namespace tessera::server
