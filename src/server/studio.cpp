#include "server/studio.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "ir/commands/command_json.h"
#include "onnx/external_data.h"
#include "server/diagnostics_push.h"
#include "server/graph_json.h"
#include "server/tool_runs.h"
#include "server/transform_api.h"
#include "server/transform_jobs.h"
#include "util/safe_open.h"

namespace tessera::server {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxBody = size_t{64} << 20;
constexpr size_t kDefaultPreview = 1024;

// The charset parameter is also what keeps cpp-httplib from compressing the answer: it compresses only
// bare "application/json", with brotli at its highest quality when the browser accepts it, which took
// 5.6 s for a 10,000-node graph on loopback (0.15 s sent as it is).
constexpr const char* kJson = "application/json; charset=utf-8";

void answer(httplib::Response& res, int status, const json& body) {
  res.status = status;
  // A tool's output need not be UTF-8: bytes that are not are sent as U+FFFD, not refused.
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), kJson);
}

// An edit's answer with where the server's time went as a Server-Timing header (the browser reads it
// from the request's resource timing): the parts the answer's "timing" gives, its serialisation, and
// the total from receiving the request. The benchmark tells the server's work from the wait for it.
void answer_edit(httplib::Response& res, const json& body, std::chrono::steady_clock::time_point received) {
  auto t0 = std::chrono::steady_clock::now();
  answer(res, 200, body);
  double dump_ms = ms_since(t0);
  std::string timing = fmt::format("dump;dur={:.3f}, total;dur={:.3f}", dump_ms, ms_since(received));
  if (body.contains("timing")) {
    for (const auto& [name, ms] : body["timing"].items())
      timing += fmt::format(", {};dur={:.3f}", name, ms.get<double>());
  }
  res.set_header("Server-Timing", timing);
}

void fail(httplib::Response& res, int status, const std::string& message) {
  answer(res, status, json{{"error", message}});
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string part; std::getline(ss, part, '/');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

json parse_body(const httplib::Request& req) {
  if (req.body.empty()) return json::object();
  json j = json::parse(req.body, nullptr, false);
  if (j.is_discarded()) throw HttpError{400, "the request body is not valid JSON"};
  if (!j.is_object()) throw HttpError{400, "the request body must be a JSON object"};
  return j;
}

// Constant-time comparison: the token must not leak through timing.
bool same_token(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string cookie_token(const httplib::Request& req) {
  std::string cookies = req.get_header_value("Cookie");
  std::stringstream ss(cookies);
  for (std::string item; std::getline(ss, item, ';');) {
    size_t start = item.find_first_not_of(' ');
    if (start == std::string::npos) continue;
    item = item.substr(start);
    if (item.starts_with("tessera_token=")) return item.substr(14);
  }
  return {};
}

ir::GraphPath path_param(const httplib::Request& req) {
  if (!req.has_param("path")) return ir::GraphPath::main_graph();
  json j = json::parse(req.get_param_value("path"), nullptr, false);
  if (j.is_discarded()) throw HttpError{400, "the 'path' parameter is not valid JSON"};
  return ir::graph_path_from_json(j);
}

const ir::Graph& resolve_or_404(const ir::Model& m, const ir::GraphPath& p) {
  try {
    return ir::resolve_graph(m, p);
  } catch (const ir::CommandError& e) {
    throw HttpError{404, e.what()};
  }
}

std::string content_type(const fs::path& file) {
  static const std::map<std::string, std::string> kTypes = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".map", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".ico", "image/x-icon"},
      {".woff", "font/woff"},
      {".woff2", "font/woff2"},
      {".ttf", "font/ttf"},
      {".wasm", "application/wasm"},
      {".txt", "text/plain; charset=utf-8"},
  };
  auto it = kTypes.find(file.extension().string());
  return it == kTypes.end() ? "application/octet-stream" : it->second;
}

bool read_whole(int fd, std::string& out) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) return false;
    if (n == 0) return true;
    out.append(buf, static_cast<size_t>(n));
  }
}

constexpr const char* kNotBuilt =
    "<!doctype html><meta charset=utf-8><title>Tessera studio</title>"
    "<p>The studio's web app is not built (no index.html under --web-root, ../share/tessera/web or "
    "web/dist). Build it with <code>npm run build</code> in <code>web/</code>. The HTTP API under "
    "<code>/api/</code> works without it.</p>";

}  // namespace

std::string random_token() {
  unsigned char bytes[16];
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::read(fd, bytes, sizeof bytes) != static_cast<ssize_t>(sizeof bytes)) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot read /dev/urandom for the studio's token");
  }
  ::close(fd);
  std::string hex;
  for (unsigned char b : bytes) hex += fmt::format("{:02x}", b);
  return hex;
}

Studio::Studio(StudioOptions options)
    : options_(std::move(options)),
      http_(std::make_unique<httplib::Server>()),
      tools_(std::make_unique<ToolRuns>(&events_)),
      jobs_(std::make_unique<TransformJobs>(events_)) {
  if (options_.token.empty()) options_.token = random_token();
  diagnostics_push_ = std::make_unique<DiagnosticsPush>(events_, [this](const std::string& id) {
    std::lock_guard lock(documents_mutex_);
    auto it = documents_.find(id);
    return it == documents_.end() ? nullptr : it->second;
  });
  if (options_.tools_file.empty()) options_.tools_file = transforms::default_tools_file();
  std::error_code ec;
  root_ = fs::canonical(options_.root.empty() ? fs::current_path() : options_.root, ec);
  if (ec) throw std::runtime_error(fmt::format("the root '{}' does not exist", options_.root.string()));
  for (const fs::path& f : options_.named_files) {
    fs::path c = fs::weakly_canonical(fs::absolute(f), ec);
    named_.push_back(ec ? fs::absolute(f) : c);
  }
}

Studio::~Studio() = default;

std::string Studio::url() const {
  return fmt::format("http://127.0.0.1:{}/?token={}", port_, options_.token);
}

fs::path Studio::find_web_root(const fs::path& explicit_root, const fs::path& exe) {
  std::vector<fs::path> candidates;
  if (!explicit_root.empty()) {
    candidates.push_back(explicit_root);
  } else {
    if (!exe.empty()) candidates.push_back(exe.parent_path() / ".." / "share" / "tessera" / "web");
#ifdef TESSERA_WEB_DIST
    candidates.push_back(TESSERA_WEB_DIST);
#endif
  }
  for (const fs::path& c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(c / "index.html", ec)) return fs::canonical(c, ec);
  }
  return {};
}

void Studio::bind() {
  http_->set_payload_max_length(kMaxBody);
  // Each open event stream (one per page) holds a worker for as long as the page is open: more workers
  // than httplib's default (8 on a small machine); idle ones cost nothing.
  http_->new_task_queue = [] { return new httplib::ThreadPool(32); };
  http_->set_keep_alive_timeout(2);
  // cpp-httplib writes an answer's headers and body in two sends: with Nagle's algorithm on, the body
  // waited for the browser's delayed ACK of the headers, ~40 ms of many edits' answers on loopback.
  http_->set_tcp_nodelay(true);
  http_->set_read_timeout(10);
  auto h = [this](const httplib::Request& req, httplib::Response& res) { handle(req, res); };
  for (const char* pattern : {"/.*", "/"}) {
    http_->Get(pattern, h);
    http_->Post(pattern, h);
    http_->Put(pattern, h);
    http_->Delete(pattern, h);
  }
  // What httplib refuses itself (a body over the limit: 413, a malformed request line: 400) still
  // answers in the API's form.
  http_->set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string msg = res.status == 413 ? "the request body is larger than 64 MiB"
                                        : fmt::format("the request was refused (HTTP {})", res.status);
    res.set_content(json{{"error", msg}}.dump(), kJson);
  });
  http_->set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    fail(res, 500, "internal error");
  });
  if (options_.port == 0) {
    port_ = http_->bind_to_any_port("127.0.0.1");
  } else {
    port_ = http_->bind_to_port("127.0.0.1", options_.port) ? options_.port : -1;
  }
  if (port_ < 0) {
    throw std::runtime_error(
        fmt::format("cannot listen on 127.0.0.1:{}: {}", options_.port, std::strerror(errno)));
  }
  for (const fs::path& f : named_) {
    try {
      open_file(f);
    } catch (const HttpError& e) {
      throw std::runtime_error(e.message);
    }
  }
}

void Studio::run() {
  http_->listen_after_bind();
}

void Studio::stop() {
  diagnostics_push_->stop();
  events_.close();  // event streams end, so that the server's threads can be joined
  http_->stop();
}

void Studio::handle(const httplib::Request& req, httplib::Response& res) {
  try {
    if (!authorized(req, res)) return;
    route(req, res);
  } catch (const HttpError& e) {
    fail(res, e.status, e.message);
  } catch (const ir::JsonError& e) {
    fail(res, 400, e.what());
  } catch (const ir::CommandError& e) {
    fail(res, 409, e.what());
  } catch (const std::exception& e) {
    fail(res, 500, fmt::format("internal error: {}", e.what()));
  }
}

bool Studio::authorized(const httplib::Request& req, httplib::Response& res) {
  std::string host = req.get_header_value("Host");
  if (host != fmt::format("127.0.0.1:{}", port_) && host != fmt::format("localhost:{}", port_)) {
    fail(res, 403, fmt::format("foreign Host header '{}'", host));
    return false;
  }
  if (req.has_header("Origin")) {
    std::string origin = req.get_header_value("Origin");
    if (origin != fmt::format("http://127.0.0.1:{}", port_) &&
        origin != fmt::format("http://localhost:{}", port_)) {
      fail(res, 403, fmt::format("foreign Origin '{}'", origin));
      return false;
    }
  }
  const std::string& token = options_.token;
  bool query = req.has_param("token") && same_token(req.get_param_value("token"), token);
  bool ok = query || same_token(req.get_header_value("X-Tessera-Token"), token) ||
            same_token(cookie_token(req), token);
  if (!ok) {
    fail(res, 401, "missing or wrong token");
    return false;
  }
  if (query && req.path == "/") {
    res.set_header("Set-Cookie", fmt::format("tessera_token={}; HttpOnly; SameSite=Strict; Path=/", token));
  }
  return true;
}

void Studio::route(const httplib::Request& req, httplib::Response& res) {
  std::vector<std::string> parts = split_path(req.path);
  if (parts.empty() || parts[0] != "api") {
    if (req.method != "GET") throw HttpError{404, fmt::format("no such page: {} {}", req.method, req.path)};
    serve_static(req, res);
    return;
  }
  const std::string& m = req.method;
  if (parts.size() == 2 && parts[1] == "files" && m == "GET") {
    answer(res, 200, list_files(req.has_param("dir") ? req.get_param_value("dir") : ""));
    return;
  }
  if (parts.size() == 2 && parts[1] == "registry" && m == "GET") {
    std::shared_ptr<Document> doc = find_document(req.get_param_value("doc"));
    std::lock_guard lock(doc->mutex());
    answer(res, 200, registry_json(doc->model()));
    return;
  }
  if (parts.size() >= 2 && parts[1] == "documents") {
    route_documents(req, res, parts);
    return;
  }
  if (parts.size() >= 2 && parts[1] == "tools") {
    route_tools(req, res, parts);
    return;
  }
  if (parts.size() >= 2 && parts[1] == "jobs") {
    route_jobs(req, res, parts);
    return;
  }
  if (parts.size() == 2 && parts[1] == "events" && m == "GET") {
    stream_events(req, res);
    return;
  }
  throw HttpError{404, fmt::format("no such API endpoint: {} {}", m, req.path)};
}

void Studio::serve_static(const httplib::Request& req, httplib::Response& res) {
  std::string rel = req.path == "/" ? "index.html" : req.path.substr(1);
  if (options_.web_root.empty()) {
    if (rel != "index.html") throw HttpError{404, fmt::format("no such file: {}", req.path)};
    res.set_content(kNotBuilt, "text/html; charset=utf-8");
    return;
  }
  util::RelativePath p = util::split_relative_path(rel);
  if (!p.problem.empty()) throw HttpError{404, fmt::format("no such file: {}", req.path)};
  std::string body;
  try {
    util::UniqueFd dir = util::open_dir(options_.web_root.string());
    util::UniqueFd fd = util::open_file_beneath(dir.get(), p);
    if (!read_whole(fd.get(), body)) throw std::runtime_error("read failed");
  } catch (const std::exception&) {
    throw HttpError{404, fmt::format("no such file: {}", req.path)};
  }
  // Sent as it is, through a content provider of known length: cpp-httplib compresses a body set with
  // set_content when the browser accepts it, with brotli at its highest quality, which took 0.48 s for
  // the app's 135 KB script on every page load (identity 5 ms on loopback).
  auto shared = std::make_shared<std::string>(std::move(body));
  res.set_content_provider(shared->size(), content_type(rel),
                           [shared](size_t offset, size_t length, httplib::DataSink& sink) {
                             return sink.write(shared->data() + offset, length);
                           });
}

// ---- files and paths ----------------------------------------------------------------------------

fs::path Studio::allowed_path(const std::string& path, bool must_exist) const {
  if (path.empty()) throw HttpError{400, "'path' is empty"};
  fs::path p = fs::path(path).is_absolute() ? fs::path(path) : root_ / path;
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  if (ec) throw HttpError{400, fmt::format("path '{}' cannot be resolved: {}", path, ec.message())};
  bool named = std::find(named_.begin(), named_.end(), c) != named_.end();
  auto [r, _] = std::mismatch(root_.begin(), root_.end(), c.begin(), c.end());
  bool under_root = r == root_.end() && c != root_;
  if (!named && !under_root) {
    throw HttpError{403, fmt::format("path '{}' is outside the studio's root '{}'", path, root_.string())};
  }
  if (must_exist && !fs::is_regular_file(c, ec))
    throw HttpError{404, fmt::format("no such file: '{}'", path)};
  return c;
}

json Studio::list_files(const std::string& dir) {
  fs::path d = dir.empty() ? root_ : allowed_path(dir, false);
  std::error_code ec;
  if (!fs::is_directory(d, ec)) throw HttpError{404, fmt::format("no such folder: '{}'", dir)};
  json entries = json::array();
  std::vector<fs::directory_entry> list;
  for (const fs::directory_entry& e : fs::directory_iterator(d, ec)) list.push_back(e);
  std::sort(list.begin(), list.end(),
            [](const auto& a, const auto& b) { return a.path().filename() < b.path().filename(); });
  for (const fs::directory_entry& e : list) {
    std::string name = e.path().filename().string();
    if (name.starts_with(".")) continue;
    if (e.is_directory(ec)) {
      entries.push_back({{"name", name}, {"kind", "dir"}, {"size", 0}});
    } else if (e.is_regular_file(ec) && e.path().extension() == ".onnx") {
      entries.push_back({{"name", name}, {"kind", "file"}, {"size", e.file_size(ec)}});
    }
  }
  std::string rel = fs::relative(d, root_, ec).string();
  return {{"root", root_.string()}, {"dir", rel == "." ? "" : rel}, {"entries", std::move(entries)}};
}

json Studio::open_file(const fs::path& file) {
  std::lock_guard lock(documents_mutex_);
  std::string id = fmt::format("d{}", next_document_++);
  std::shared_ptr<Document> doc = open_document(id, file);
  json j = doc->to_json();
  documents_.emplace(id, std::move(doc));
  return j;
}

std::shared_ptr<Document> Studio::find_document(const std::string& id) {
  std::lock_guard lock(documents_mutex_);
  auto it = documents_.find(id);
  if (it == documents_.end()) throw HttpError{404, fmt::format("no document '{}'", id)};
  return it->second;
}

void Studio::push_finished_diagnostics(const Document& doc, const json& a) {
  if (!a.value("diagnostics_partial", false)) return;
  diagnostics_push_->request(doc.id(), a.at("diagnostics_version").get<uint64_t>());
}

// ---- documents ----------------------------------------------------------------------------------

namespace {

json changes_json(const std::vector<ir::Change>& changes) {
  json out = json::array();
  for (const ir::Change& c : changes) {
    json j{{"kind", ir::change_kind_name(c.kind)}, {"path", ir::graph_path_to_json(c.path)}};
    if (c.node != 0) j["node"] = c.node;
    out.push_back(std::move(j));
  }
  return out;
}

// The nodes an edit added or changed, as GET nodes/{id} gives them ({"ID": node}), when there are few
// and all in one graph: the app patches its copy of that graph without a request per node. Null
// otherwise (or for a node gone again by the end of the edit): the app fetches what it needs.
// `indices`: each node's position in its graph's node list (an undone removal puts a node back where it
// was, add_node may insert), so the app keeps its copy of the list in the server's order.
json changed_nodes(Document& doc, const std::vector<ir::Change>& changes, json& indices) {
  constexpr size_t kMaxNodes = 64;
  const ir::Model& m = doc.model();
  json out = json::object();
  for (const ir::Change& c : changes) {
    bool node_change = c.kind == ir::Change::Kind::kNodeAdded || c.kind == ir::Change::Kind::kNodeChanged;
    if (!node_change) continue;
    if (c.path != changes.front().path || out.size() >= kMaxNodes) return nullptr;
    const ir::Graph* g = nullptr;
    try {
      g = &ir::resolve_graph(m, c.path);
    } catch (const ir::CommandError&) {
      return nullptr;
    }
    size_t index = g->node_index(c.node);
    if (index == SIZE_MAX) return nullptr;
    std::string graph = ir::path_string(m, c.path);
    json severity = nullptr;
    for (const check::Diagnostic& d : doc.answer_checker().result().diagnostics.items) {
      if (d.graph != graph || d.node_index != static_cast<int>(index)) continue;
      if (d.severity == check::Severity::kError) severity = "error";
      if (d.severity == check::Severity::kWarning && severity.is_null()) severity = "warning";
    }
    out[std::to_string(c.node)] = node_json(m, g->nodes[index], severity);
    indices[std::to_string(c.node)] = index;
  }
  return out;
}

// The answer's diagnostics: the whole list, or, when the client says it holds the list of the version
// the server last sent (`since`, the request's "diagnostics_since"), what changed from it:
// "diagnostics_diff": {"base": since, "version": now, "removed": [...], "added": [...]}. A list of a
// 50,000-node model with many findings is most of an answer, and an edit changes a few of them.
// "diagnostics_version": the version of the list the answer gives; "diagnostics_partial": the edit's
// re-check was cut at Document::kAnswerBudget nodes (GET diagnostics gives the finished list).
void add_diagnostics(Document& doc, std::optional<uint64_t> since, json& a) {
  const IncrementalChecker& checker = doc.answer_checker();
  json list = diagnostics_json(doc.model(), checker.result().diagnostics);
  if (since && *since == doc.sent_diagnostics_version()) {
    json diff = diagnostics_diff(doc.sent_diagnostics(), list);
    diff["base"] = *since;
    a["diagnostics_diff"] = std::move(diff);
  } else {
    a["diagnostics"] = list;
  }
  uint64_t version = doc.set_sent_diagnostics(std::move(list));
  a["diagnostics_version"] = version;
  if (a.contains("diagnostics_diff")) a["diagnostics_diff"]["version"] = version;
  a["diagnostics_partial"] = !checker.complete();
}

// The version of the diagnostics list the client holds, when the request says.
std::optional<uint64_t> diagnostics_since(const json& body) {
  if (!body.is_object() || !body.contains("diagnostics_since") || body["diagnostics_since"].is_null())
    return std::nullopt;
  int64_t v = ir::int_field(body, "diagnostics_since", "");
  if (v < 0) throw HttpError{400, fmt::format("diagnostics_since must not be negative (got {})", v)};
  return static_cast<uint64_t>(v);
}

// `parse_ms`: reading the command from the request (0 when the edit was not a command); `since`: the
// diagnostics version the client holds (add_diagnostics).
json edit_answer(Document& doc, const std::vector<ir::Change>& changes, double parse_ms = 0,
                 std::optional<uint64_t> since = std::nullopt) {
  auto t0 = std::chrono::steady_clock::now();
  json indices = json::object();
  json nodes = changed_nodes(doc, changes, indices);
  if (nodes.is_null() || indices.empty()) indices = nullptr;
  json ids = json::array();
  for (const ir::Change& c : changes) {
    if (c.kind == ir::Change::Kind::kNodeAdded) ids.push_back(c.node);
  }
  json a{{"document", doc.to_json()},
         {"changes", changes_json(changes)},
         {"node_ids", std::move(ids)},
         {"nodes", std::move(nodes)},
         {"node_indices", std::move(indices)}};
  add_diagnostics(doc, since, a);
  const EditTiming& t = doc.last_edit_timing();
  a["timing"] = {
      {"parse", parse_ms}, {"command", t.command_ms}, {"check", t.check_ms}, {"answer", ms_since(t0)}};
  return a;
}

// Initializers whose bytes stay in an external file name it relative to the model's folder: refused for
// a model never saved (no folder yet), and checked like a load checks them (the file beneath the folder,
// a regular file, the byte range inside it) before the command runs.
void check_external_tensors(const Document& doc, const json& cmd) {
  if (cmd.is_array()) {
    for (const json& c : cmd) check_external_tensors(doc, c);
    return;
  }
  if (!cmd.is_object()) return;
  if (cmd.contains("commands")) check_external_tensors(doc, cmd["commands"]);
  if (!cmd.contains("tensor") || !cmd["tensor"].is_object() || !cmd["tensor"].contains("external")) return;
  ir::Tensor t = ir::tensor_from_json(cmd["tensor"], "command: ");
  std::string label = fmt::format("initializer '{}'", t.name);
  if (!doc.path()) {
    throw HttpError{400, fmt::format("{}: external data needs a saved model (its location is relative to the "
                                     "model's folder): save the model first",
                                     label)};
  }
  std::optional<int64_t> need = t.expected_bytes();
  onnx::detail::ExternalFiles files(doc.path()->parent_path());
  std::string problem = files.problem(label, *t.external, need.value_or(0));
  if (!problem.empty()) throw HttpError{400, problem};
}

json run_commands(Document& doc, const json& body) {
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<ir::Command> cmd;
  if (body.contains("command")) {
    cmd = ir::command_from_json(body["command"], "command: ");
  } else if (body.contains("commands")) {
    std::string name = ir::optional_string_field(body, "batch", "");
    cmd = ir::batch_from_json(name.empty() ? "Edit" : name, body["commands"]);
  } else {
    throw HttpError{400, "the request needs 'command' or 'commands'"};
  }
  check_external_tensors(doc, body.contains("command") ? body["command"] : body["commands"]);
  if (body.contains("expect_version") && !body["expect_version"].is_null()) {
    int64_t expected = ir::int_field(body, "expect_version", "");
    if (static_cast<uint64_t>(expected) != doc.version()) {
      throw HttpError{409, fmt::format("the document is at version {}, not {}: reload it and try again",
                                       doc.version(), expected)};
    }
  }
  std::optional<uint64_t> since = diagnostics_since(body);
  double parse_ms = ms_since(t0);
  std::vector<ir::Change> changes = doc.edit([&](ir::History& h) { h.execute(std::move(cmd)); });
  return edit_answer(doc, changes, parse_ms, since);
}

// "io": {"i:NAME": [x, y], "o:NAME": [x, y], "f:CALL_ID:BODY_NODE_ID": [x, y]}: graph inputs and
// outputs, which are not nodes, and the body nodes of local function calls shown expanded. Replaces what
// the graph had (an input the user arranged away from its pin is dropped).
std::map<std::string, std::pair<double, double>> parse_io_positions(const ir::Model& m, const ir::Graph& g,
                                                                    const json& io) {
  if (!io.is_object())
    throw HttpError{400, "'io' must be an object of 'i:NAME', 'o:NAME' or 'f:CALL:NODE' to [x, y]"};
  std::map<std::string, std::pair<double, double>> parsed;
  for (auto& [key, xy] : io.items()) {
    bool input = key.starts_with("i:");
    bool body = key.starts_with("f:");
    if (!input && !body && !key.starts_with("o:"))
      throw HttpError{400, fmt::format("'io': '{}' is not 'i:NAME', 'o:NAME' or 'f:CALL:NODE'", key)};
    if (!xy.is_array() || xy.size() != 2 || !xy[0].is_number() || !xy[1].is_number())
      throw HttpError{400, fmt::format("'io'['{}'] must be [x, y]", key)};
    if (body) {
      if (!call_body_node(m, g, key))
        throw HttpError{404, fmt::format("'io': '{}' names no node of a local function call's body", key)};
      parsed[key] = {xy[0].get<double>(), xy[1].get<double>()};
      continue;
    }
    std::string name = key.substr(2);
    bool exists = input ? g.find_input(name) != nullptr : g.find_output(name) != nullptr;
    if (!exists)
      throw HttpError{404, fmt::format("graph {} '{}' does not exist", input ? "input" : "output", name)};
    parsed[key] = {xy[0].get<double>(), xy[1].get<double>()};
  }
  return parsed;
}

void set_positions(Document& doc, const json& body) {
  ir::GraphPath p = ir::graph_path_from_json(body.contains("path") ? body["path"] : json(nullptr));
  const ir::Graph& g = resolve_or_404(doc.model(), p);
  const json& pos = ir::require_field(body, "positions", "");
  if (!pos.is_object()) throw HttpError{400, "'positions' must be an object of node id to [x, y]"};
  std::vector<std::pair<ir::NodeId, std::pair<double, double>>> parsed;
  for (auto& [key, xy] : pos.items()) {
    char* end = nullptr;
    unsigned long long id = std::strtoull(key.c_str(), &end, 10);
    if (key.empty() || *end != '\0' || id == 0)
      throw HttpError{400, fmt::format("'positions': '{}' is not a node id", key)};
    if (!xy.is_array() || xy.size() != 2 || !xy[0].is_number() || !xy[1].is_number()) {
      throw HttpError{400, fmt::format("'positions'['{}'] must be [x, y]", key)};
    }
    if (!g.find_node(static_cast<ir::NodeId>(id)))
      throw HttpError{404, fmt::format("node #{} does not exist", key)};
    parsed.push_back({id, {xy[0].get<double>(), xy[1].get<double>()}});
  }
  std::map<std::string, std::pair<double, double>> io;
  if (body.contains("io")) io = parse_io_positions(doc.model(), g, body["io"]);
  std::string key = ir::graph_path_to_json(p).dump();
  auto& slot = doc.positions()[key];
  for (auto& [id, xy] : parsed) slot[id] = xy;
  if (body.contains("io")) doc.io_positions()[key] = std::move(io);
}

size_t size_param(const httplib::Request& req, const char* name, size_t fallback) {
  if (!req.has_param(name)) return fallback;
  char* end = nullptr;
  std::string s = req.get_param_value(name);
  size_t v = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || s[0] == '-')
    throw HttpError{400, fmt::format("'{}' must be a non-negative integer", name)};
  return v;
}

// GET initializers/{name}?offset=K&limit=N&rows=R&stride=S: R runs of N values, the i-th from element
// K + i*S (flat, row-major); defaults: offset 0, limit 1024, one run. The tensor editor fetches the page
// of a large tensor it shows this way, never the whole tensor.
json initializer_window_json(const ir::Tensor& t, const httplib::Request& req) {
  size_t offset = size_param(req, "offset", 0);
  size_t limit = size_param(req, "limit", kDefaultPreview);
  size_t rows = size_param(req, "rows", 1);
  size_t stride = size_param(req, "stride", limit);
  size_t n = static_cast<size_t>(t.numel().value_or(0));
  if (rows > 1 && (limit > (size_t{1} << 20) / rows || stride > n))
    throw HttpError{400, "'rows' x 'limit' must be at most 1048576 and 'stride' at most the tensor's size"};
  json values = json::array();
  for (size_t i = 0; i < rows; ++i) {
    size_t at = offset + i * stride;
    if (at >= n) break;
    for (json& v : ir::tensor_values_json(t, limit, at)) values.push_back(std::move(v));
  }
  json j{{"dtype", ir::dtype_name(t.dtype)}, {"shape", t.dims}, {"values", std::move(values)}};
  if (offset || rows > 1) j["offset"] = offset;
  return j;
}

// GET initializers?path=P: the initializers of the graphs enclosing P, outermost first, each with the
// path of the graph holding it. A subgraph reads them like its own (ONNX scoping; the seed: a subgraph
// has the same initializers as its parent), so a subgraph's tab lists them to attach and switch to. A
// function body sees no outer scope: none. Names, types and shapes only, never values.
json outer_initializers_json(const ir::Model& m, const ir::GraphPath& p) {
  resolve_or_404(m, p);
  std::vector<ir::Graph*> scopes = ir::resolve_scopes(const_cast<ir::Model&>(m), p);
  json out = json::array();
  ir::GraphPath at = p;
  at.steps.clear();
  for (size_t i = 0; i + 1 < scopes.size(); ++i) {
    json where = ir::graph_path_to_json(at);
    for (const ir::Tensor& t : scopes[i]->initializers) {
      std::optional<int64_t> bytes = t.expected_bytes();
      out.push_back({{"name", t.name},
                     {"dtype", ir::dtype_name(t.dtype)},
                     {"shape", t.dims},
                     {"bytes", bytes ? json(*bytes) : json(nullptr)},
                     {"path", where}});
    }
    at.steps.push_back(p.steps[i]);
  }
  return {{"initializers", std::move(out)}};
}

}  // namespace

void Studio::route_documents(const httplib::Request& req, httplib::Response& res,
                             const std::vector<std::string>& parts) {
  const std::string& m = req.method;
  if (parts.size() == 2 && m == "GET") {
    std::vector<std::shared_ptr<Document>> docs;
    {
      std::lock_guard lock(documents_mutex_);
      for (auto& [id, d] : documents_) docs.push_back(d);
    }
    json list = json::array();
    for (auto& d : docs) {
      std::lock_guard lock(d->mutex());
      list.push_back(d->to_json());
    }
    answer(res, 200, {{"documents", std::move(list)}});
    return;
  }
  if (parts.size() == 3 && parts[2] == "open" && m == "POST") {
    json body = parse_body(req);
    answer(res, 200, open_file(allowed_path(ir::string_field(body, "path", ""), true)));
    return;
  }
  if (parts.size() == 3 && parts[2] == "new" && m == "POST") {
    json body = parse_body(req);
    int64_t opset = body.contains("opset") ? ir::int_field(body, "opset", "") : 21;
    if (opset < 1) throw HttpError{400, "'opset' must be a positive integer"};
    std::vector<ir::OpsetImport> domains;
    if (body.contains("domains")) {
      const json& d = body["domains"];
      if (!d.is_array()) throw HttpError{400, "'domains' must be an array"};
      for (size_t i = 0; i < d.size(); ++i) {
        std::string w = fmt::format("domains[{}]: ", i);
        domains.push_back({ir::string_field(d[i], "domain", w), ir::int_field(d[i], "version", w)});
      }
    }
    std::lock_guard lock(documents_mutex_);
    std::string id = fmt::format("d{}", next_document_++);
    std::shared_ptr<Document> doc = new_document(id, fmt::format("untitled-{}.onnx", id), opset, domains);
    answer(res, 200, doc->to_json());
    documents_.emplace(id, std::move(doc));
    return;
  }
  if (parts.size() < 3) throw HttpError{404, fmt::format("no such API endpoint: {} {}", m, req.path)};
  std::shared_ptr<Document> doc = find_document(parts[2]);
  std::string action = parts.size() >= 4 ? parts[3] : "";
  if (parts.size() == 4 && action == "jobs" && m == "POST") {
    answer(res, 202, start_job(doc, parse_body(req)));
    return;
  }
  std::lock_guard lock(doc->mutex());
  // A job works on the model as it was when it started: edits wait until it ends (transform_jobs.h).
  static const std::set<std::string> kEdits = {"commands", "transform", "undo", "redo", "close"};
  if (m == "POST" && kEdits.count(action)) {
    if (std::optional<std::string> busy = jobs_->busy(doc->id())) throw HttpError{409, *busy};
  }
  if (parts.size() == 3 && m == "GET") {
    answer(res, 200, doc->to_json());
  } else if (parts.size() == 4 && action == "save" && m == "POST") {
    json body = parse_body(req);
    std::string target = ir::optional_string_field(body, "path", "");
    if (target.empty() && !doc->path())
      throw HttpError{400, "'path' is missing: the document has never been saved"};
    fs::path file = target.empty() ? *doc->path() : allowed_path(target, false);
    std::error_code ec;
    if (!fs::is_directory(file.parent_path(), ec)) {
      throw HttpError{404, fmt::format("no such folder: '{}'", file.parent_path().string())};
    }
    doc->save(file);
    answer(res, 200, doc->to_json());
  } else if (parts.size() == 4 && action == "close" && m == "POST") {
    std::lock_guard docs_lock(documents_mutex_);
    documents_.erase(doc->id());
    answer(res, 200, json::object());
  } else if (parts.size() == 4 && action == "commands" && m == "POST") {
    auto received = std::chrono::steady_clock::now();
    json a = run_commands(*doc, parse_body(req));
    push_finished_diagnostics(*doc, a);
    answer_edit(res, a, received);
  } else if (parts.size() == 4 && action == "transform" && m == "POST") {
    json body = parse_body(req);
    std::vector<ir::Change> changes;
    auto readable = [this](const std::string& path) { return allowed_path(path, true); };
    json log = run_transform(*doc, ir::string_field(body, "transform", ""),
                             body.contains("options") ? body["options"] : json::object(), changes, readable);
    json a = edit_answer(*doc, changes);
    push_finished_diagnostics(*doc, a);
    a["log"] = std::move(log);
    answer(res, 200, a);
  } else if (parts.size() == 4 && (action == "undo" || action == "redo") && m == "POST") {
    bool undo = action == "undo";
    auto received = std::chrono::steady_clock::now();
    std::optional<uint64_t> since = diagnostics_since(parse_body(req));
    std::vector<ir::Change> changes = doc->edit([&](ir::History& h) { undo ? h.undo() : h.redo(); });
    json a = edit_answer(*doc, changes, 0, since);
    push_finished_diagnostics(*doc, a);
    answer_edit(res, a, received);
  } else if (parts.size() == 4 && action == "graph" && m == "GET") {
    ir::GraphPath p = path_param(req);
    resolve_or_404(doc->model(), p);
    answer(res, 200, graph_json(*doc, p));
  } else if (parts.size() == 5 && action == "functions" && m == "GET") {
    // One local function, whole (the k-th of the graph answer's "functions"): what replace_function takes.
    char* end = nullptr;
    unsigned long k = std::strtoul(parts[4].c_str(), &end, 10);
    const auto& fs = doc->model().functions;
    if (parts[4].empty() || *end != '\0' || k >= fs.size())
      throw HttpError{404, fmt::format("function #{} does not exist: the model has {} local function{}",
                                       parts[4], fs.size(), fs.size() == 1 ? "" : "s")};
    answer(res, 200, ir::function_to_json(fs[k]));
  } else if (parts.size() == 5 && action == "nodes" && m == "GET") {
    ir::GraphPath p = path_param(req);
    const ir::Graph& g = resolve_or_404(doc->model(), p);
    char* end = nullptr;
    ir::NodeId id = std::strtoull(parts[4].c_str(), &end, 10);
    const ir::Node* n = *end == '\0' ? g.find_node(id) : nullptr;
    if (!n)
      throw HttpError{404, fmt::format("node '{}' does not exist in graph '{}'", parts[4],
                                       ir::path_string(doc->model(), p))};
    std::vector<json> sev =
        node_severities(g, ir::path_string(doc->model(), p), doc->checker().result().diagnostics);
    answer(res, 200, node_json(doc->model(), *n, sev[g.node_index(id)]));
  } else if (parts.size() == 7 && action == "nodes" && parts[5] == "attributes" && m == "GET") {
    // A node's tensor attribute, windowed like an initializer: the tensor editor's values for a tensor
    // larger than the graph answer sends (64 values), NaN and infinities included as strings.
    ir::GraphPath p = path_param(req);
    const ir::Graph& g = resolve_or_404(doc->model(), p);
    char* end = nullptr;
    ir::NodeId id = std::strtoull(parts[4].c_str(), &end, 10);
    const ir::Node* n = *end == '\0' ? g.find_node(id) : nullptr;
    if (!n)
      throw HttpError{404, fmt::format("node '{}' does not exist in graph '{}'", parts[4],
                                       ir::path_string(doc->model(), p))};
    const ir::Attribute* a = n->attr(parts[6]);
    if (!a || a->type != ir::AttrType::kTensor || a->tensors.empty())
      throw HttpError{404, fmt::format("node '{}' has no tensor attribute '{}'", n->name, parts[6])};
    answer(res, 200, initializer_window_json(a->tensors[0], req));
  } else if (parts.size() == 4 && action == "initializers" && m == "GET") {
    answer(res, 200, outer_initializers_json(doc->model(), path_param(req)));
  } else if (parts.size() == 5 && action == "initializers" && m == "GET") {
    const ir::Graph& g = resolve_or_404(doc->model(), path_param(req));
    const ir::Tensor* t = g.find_initializer(parts[4]);
    if (!t) throw HttpError{404, fmt::format("initializer '{}' does not exist", parts[4])};
    answer(res, 200, initializer_window_json(*t, req));
  } else if (parts.size() == 4 && action == "positions" && m == "PUT") {
    set_positions(*doc, parse_body(req));
    answer(res, 200, json::object());
  } else if (parts.size() == 4 && action == "diagnostics" && m == "GET") {
    // "check": how the last edit's list was made (incremental or in full), for tests and benchmarks.
    // The list sent becomes the base of the next edit's diagnostics_diff.
    const IncrementalChecker& c = doc->checker();
    json list = diagnostics_json(doc->model(), c.result().diagnostics);
    uint64_t sent = doc->set_sent_diagnostics(list);
    answer(res, 200,
           {{"version", doc->version()},
            {"diagnostics_version", sent},
            {"check",
             {{"incremental", c.last_incremental()},
              {"checked_nodes", c.last_checked_nodes()},
              {"ms", c.last_seconds() * 1e3}}},
            {"diagnostics", std::move(list)}});
  } else {
    throw HttpError{404, fmt::format("no such API endpoint: {} {}", m, req.path)};
  }
}

// ---- user tools ---------------------------------------------------------------------------------

namespace {

json tool_json(const transforms::UserTool& t) {
  return {{"name", t.name},
          {"application", t.application},
          {"arguments", t.arguments},
          {"prompt_for_output", t.prompt_for_output},
          {"open_output", t.open_output}};
}

}  // namespace

void Studio::route_tools(const httplib::Request& req, httplib::Response& res,
                         const std::vector<std::string>& parts) {
  const std::string& m = req.method;
  if (parts.size() == 2 && m == "GET") {
    // A tools file that cannot be read is not an error of the request: the menu shows why it is empty.
    json j{{"file", options_.tools_file.string()}, {"tools", json::array()}};
    try {
      for (const transforms::UserTool& t : transforms::load_tools(options_.tools_file))
        j["tools"].push_back(tool_json(t));
    } catch (const transforms::TransformError& e) {
      j["problem"] = e.what();
    }
    answer(res, 200, j);
  } else if (parts.size() == 3 && parts[2] == "run" && m == "POST") {
    answer(res, 200, start_tool(parse_body(req)));
  } else if (parts.size() == 4 && parts[2] == "runs" && m == "GET") {
    answer(res, 200, tools_->poll(parts[3], size_param(req, "from", 0)));
  } else if (parts.size() == 5 && parts[2] == "runs" && parts[4] == "cancel" && m == "POST") {
    answer(res, 200, tools_->cancel(parts[3]));
  } else {
    throw HttpError{404, fmt::format("no such API endpoint: {} {}", m, req.path)};
  }
}

// {"doc", "tool", "output"?}: the tool runs on the document's file, so the document must be saved and
// unmodified; "output" (inside the root, not the model itself) is asked for when the tool writes a model.
json Studio::start_tool(const json& body) {
  std::shared_ptr<Document> doc = find_document(ir::string_field(body, "doc", ""));
  std::string name = ir::string_field(body, "tool", "");
  std::vector<transforms::UserTool> tools;
  try {
    tools = transforms::load_tools(options_.tools_file);
  } catch (const transforms::TransformError& e) {
    throw HttpError{400, e.what()};
  }
  auto tool = std::find_if(tools.begin(), tools.end(), [&](const auto& t) { return t.name == name; });
  if (tool == tools.end())
    throw HttpError{404, fmt::format("no tool '{}' in {}", name, options_.tools_file.string())};
  fs::path model;
  {
    std::lock_guard lock(doc->mutex());
    if (!doc->path())
      throw HttpError{409, fmt::format("save the model first: tool '{}' runs on the saved file", name)};
    if (doc->history().is_dirty()) {
      throw HttpError{
          409,
          fmt::format("the model has unsaved changes: save it first (tool '{}' runs on the file)", name)};
    }
    model = *doc->path();
  }
  std::string output = ir::optional_string_field(body, "output", "");
  if (tool->prompt_for_output && output.empty())
    throw HttpError{400, fmt::format("'output' is missing: tool '{}' writes a model; choose where", name)};
  if (!output.empty()) {
    fs::path out = allowed_path(output, false);
    std::error_code ec;
    if (out == model) throw HttpError{400, "the output would overwrite the model: choose another file"};
    if (!fs::is_directory(out.parent_path(), ec))
      throw HttpError{404, fmt::format("no such folder: '{}'", out.parent_path().string())};
    output = out.string();
  }
  std::string id = tools_->start(*tool, model.string(), output);
  json j = tools_->poll(id, 0);
  j["open_output"] = tool->open_output;
  return j;
}

// ---- transformation jobs and pushed events ------------------------------------------------------

// {"transform", "options"}: the job's work is made (and its options partly checked) here, so that an
// unknown transformation or a malformed extraction is refused at once, before any job exists.
json Studio::start_job(const std::shared_ptr<Document>& doc, const json& body) {
  std::string name = ir::string_field(body, "transform", "");
  auto readable = [this](const std::string& path) { return allowed_path(path, true); };
  auto adopt = [this](ir::Model model, const std::string& file) {
    return adopt_model(std::move(model), file);
  };
  TransformJobs::Work work = transform_work(
      doc, name, body.contains("options") ? body["options"] : json::object(), readable,
      [this](Document& d, const std::vector<ir::Change>& changes) {
        json a = edit_answer(d, changes);
        push_finished_diagnostics(d, a);
        return a;
      },
      adopt);
  return jobs_->start(doc->id(), name, std::move(work));
}

json Studio::adopt_model(ir::Model model, const std::string& name) {
  std::lock_guard lock(documents_mutex_);
  std::string id = fmt::format("d{}", next_document_++);
  auto doc = std::make_shared<Document>(id, std::move(model), std::nullopt, name);
  json j = doc->to_json();
  documents_.emplace(id, std::move(doc));
  return j;
}

void Studio::route_jobs(const httplib::Request& req, httplib::Response& res,
                        const std::vector<std::string>& parts) {
  const std::string& m = req.method;
  if (parts.size() == 2 && m == "GET") {
    answer(res, 200, jobs_->list());
  } else if (parts.size() == 3 && m == "GET") {
    answer(res, 200, jobs_->get(parts[2]));
  } else if (parts.size() == 4 && parts[3] == "cancel" && m == "POST") {
    answer(res, 200, jobs_->cancel(parts[2]));
  } else {
    throw HttpError{404, fmt::format("no such API endpoint: {} {}", m, req.path)};
  }
}

// GET /api/events[?from=N]: Server-Sent Events from after event N (or Last-Event-ID, which a browser's
// EventSource sends when it reconnects; without either, from now on). A comment line every 15 s keeps
// proxies from closing an idle stream and notices a browser gone.
void Studio::stream_events(const httplib::Request& req, httplib::Response& res) {
  uint64_t from = events_.last();
  if (req.has_header("Last-Event-ID")) {
    from = std::strtoull(req.get_header_value("Last-Event-ID").c_str(), nullptr, 10);
  } else if (req.has_param("from")) {
    from = size_param(req, "from", 0);
  }
  res.status = 200;
  res.set_header("Cache-Control", "no-store");
  auto seen = std::make_shared<uint64_t>(from);
  auto idle = std::make_shared<int>(0);
  res.set_chunked_content_provider("text/event-stream", [this, seen, idle](size_t, httplib::DataSink& sink) {
    if (events_.closed()) return false;
    // Waits briefly, so that a server stopping (which ends the provider's loop) is not held up.
    std::vector<Event> events = events_.after(*seen, std::chrono::milliseconds(250));
    std::string text;
    for (const Event& e : events) {
      text += sse_frame(e);
      *seen = e.seq;
    }
    if (text.empty() && ++*idle >= 60) text = ": keep-alive\n\n";
    if (text.empty()) return true;
    *idle = 0;
    return sink.write(text.data(), text.size());
  });
}

}  // namespace tessera::server
