// One open model of the studio: the model, its undo history, the canvas positions of its nodes, the
// diagnostics of its current state, and what the file on disk looked like when it was opened or saved.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ir/commands/commands.h"
#include "ir/commands/ir_json.h"
#include "ir/commands/name_index.h"
#include "server/diagnostics.h"

namespace tessera::server {

using ir::json;

// A refused request: the HTTP status and the sentence of the {"error": ...} answer.
struct HttpError {
  int status;
  std::string message;
};

// mtime and size of a file, to notice that someone else changed it ("changed on disk").
struct FileStamp {
  bool exists = false;
  int64_t mtime_ns = 0;
  uint64_t size = 0;
  bool operator==(const FileStamp& o) const = default;
};
FileStamp stamp_of(const std::filesystem::path& file);

// Where the last edit's time went (ms): the command through the history, and the incremental check.
struct EditTiming {
  double command_ms = 0;
  double check_ms = 0;
};

// Milliseconds since `t0` on the steady clock.
inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Node id -> canvas coordinates, per graph (keyed by the graph path's JSON text).
using Positions = std::map<std::string, std::map<ir::NodeId, std::pair<double, double>>>;
// Graph inputs and outputs, which are not nodes: "i:NAME" / "o:NAME" -> coordinates, per graph.
using IoPositions = std::map<std::string, std::map<std::string, std::pair<double, double>>>;

class Document {
 public:
  // Nodes an edit's answer re-checks at most; past it, the answer carries the edited nodes' findings
  // and says "diagnostics_partial"; the rest is checked by DiagnosticsPush right after the answer, or
  // by the next read or edit if one comes first. An edit at the head of a 50,000-node chain re-checks every
  // node below it: 170-290 ms at load 8, against ~10 ms for these.
  static constexpr size_t kAnswerBudget = 4000;

  // `path`: the file it was read from (absolute), nullopt for a new model.
  Document(std::string id, ir::Model model, std::optional<std::filesystem::path> path, std::string name);
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;

  const std::string& id() const { return id_; }
  const std::optional<std::filesystem::path>& path() const { return path_; }
  ir::Model& model() { return model_; }
  ir::History& history() { return history_; }
  uint64_t version() const { return version_; }
  Positions& positions() { return positions_; }
  IoPositions& io_positions() { return io_positions_; }
  // The checker with its last update finished (a long re-check is cut at kAnswerBudget nodes for the
  // edit's answer): what every read of the document's diagnostics sees.
  IncrementalChecker& checker() {
    checker_.finish(model_);
    return checker_;
  }
  // The checker as the last edit left it, maybe provisional (IncrementalChecker::complete): the
  // edit's own answer, sent before the rest of a long re-check.
  const IncrementalChecker& answer_checker() const { return checker_; }
  const EditTiming& last_edit_timing() const { return timing_; }

  // Every request on the document holds this for its whole run.
  std::mutex& mutex() { return mutex_; }

  // Runs an edit (execute, undo or redo) through the history: the version grows, the diagnostics
  // follow, and the changes it made are returned. Refusals (CommandError) leave everything as it was.
  template <class F>
  std::vector<ir::Change> edit(F&& f) {
    checker_.finish(model_);  // the last edit's re-check, if its answer left some: before the model moves
    pending_.clear();
    auto t0 = std::chrono::steady_clock::now();
    {
      ir::NameIndex::Active names(names_, model_);  // add_node/rename check names with lookups
      f(history_);
    }
    ++version_;
    timing_.command_ms = ms_since(t0);
    t0 = std::chrono::steady_clock::now();
    checker_.update(model_, pending_, kAnswerBudget);
    timing_.check_ms = ms_since(t0);
    return std::move(pending_);
  }

  // The diagnostics list (diagnostics_json) as last sent to a client, and its version (a counter of the
  // lists sent: a provisional list and the final one of the same edit differ): what the next edit's
  // answer sends the difference from (docs/studio-api.md, "diagnostics_diff").
  const json& sent_diagnostics() const { return sent_diagnostics_; }
  uint64_t sent_diagnostics_version() const { return sent_diagnostics_version_; }
  // Records `list` as sent; returns its version, which changes only when the list does (a read of an
  // unchanged list leaves a client's version good for the next diff).
  uint64_t set_sent_diagnostics(json list) {
    if (sent_diagnostics_version_ && list == sent_diagnostics_) return sent_diagnostics_version_;
    sent_diagnostics_ = std::move(list);
    return ++sent_diagnostics_version_;
  }

  // Writes the model (atomically) and the layout companion file to `file` (absolute), which becomes the
  // document's path; the history is marked clean.
  void save(const std::filesystem::path& file);
  json to_json() const;

 private:
  void load_layout();
  std::string id_;
  std::string name_;
  std::optional<std::filesystem::path> path_;
  ir::Model model_;
  ir::History history_{model_};
  uint64_t version_ = 0;
  Positions positions_;
  IoPositions io_positions_;
  FileStamp stamp_;
  IncrementalChecker checker_;
  ir::NameIndex names_;  // kept by the history's listener
  std::vector<ir::Change> pending_;
  EditTiming timing_;
  json sent_diagnostics_ = json::array();
  uint64_t sent_diagnostics_version_ = 0;  // none sent yet
  std::mutex mutex_;
};

// Reads a model file; LoadError and I/O errors become HttpError 400.
std::unique_ptr<Document> open_document(std::string id, const std::filesystem::path& file);
// An empty model importing ai.onnx `opset` and the given domains.
std::unique_ptr<Document> new_document(std::string id, std::string name, int64_t opset,
                                       const std::vector<ir::OpsetImport>& domains);

// {"i:NAME": [x, y], "o:NAME": [x, y], "f:CALL:NODE": [x, y]} for the graph inputs, outputs and call
// body nodes g (in model m) still has.
json io_positions_json(const ir::Model& m, const ir::Graph& g,
                       const std::map<std::string, std::pair<double, double>>& io);

// A node of a local function's body as shown inside one call of it (the studio expands calls in place):
// key "f:CALL_ID:BODY_NODE_ID", the call a node of `g`, the node one of the called function's body.
// Null when the key is not of that form or names nothing; `call` gets the call node.
const ir::Node* call_body_node(const ir::Model& m, const ir::Graph& g, std::string_view key,
                               const ir::Node** call = nullptr);

// The companion file beside a model: MODEL.onnx.tessera.json.
std::filesystem::path layout_path(const std::filesystem::path& model_file);

}  // namespace tessera::server
