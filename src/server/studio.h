// `tessera studio`'s HTTP server: the API of docs/studio-api.md and the web app's static files, on
// 127.0.0.1 only, every request checked for the token, the Host and the Origin.
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/document.h"
#include "server/events.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace tessera::server {

struct StudioOptions {
  int port = 0;                                    // 0: a free port
  std::filesystem::path root;                      // files under it may be opened and saved
  std::vector<std::filesystem::path> named_files;  // files the user named: open at start, always allowed
  std::filesystem::path web_root;                  // the web app's files; empty: none
  std::string token;                               // empty: 32 random hex characters
  std::filesystem::path tools_file;                // the user tools; empty: the user's tools.json
};

class ToolRuns;
class TransformJobs;
class DiagnosticsPush;

class Studio {
 public:
  explicit Studio(StudioOptions options);
  ~Studio();
  Studio(const Studio&) = delete;
  Studio& operator=(const Studio&) = delete;

  // Binds 127.0.0.1:port and opens the named files; throws std::runtime_error saying why not.
  void bind();
  // Serves until stop() (from another thread or a signal handler's helper thread).
  void run();
  void stop();
  int port() const { return port_; }
  const std::string& token() const { return options_.token; }
  std::string url() const;

  // The web app's folder: `explicit_root` when given, else <exe dir>/../share/tessera/web, else the
  // build tree's web/dist; the first that has index.html ("" when none has).
  static std::filesystem::path find_web_root(const std::filesystem::path& explicit_root,
                                             const std::filesystem::path& exe);

 private:
  void handle(const httplib::Request& req, httplib::Response& res);
  void route(const httplib::Request& req, httplib::Response& res);
  bool authorized(const httplib::Request& req, httplib::Response& res);
  void serve_static(const httplib::Request& req, httplib::Response& res);
  void route_documents(const httplib::Request& req, httplib::Response& res,
                       const std::vector<std::string>& parts);
  json open_file(const std::filesystem::path& file);
  json list_files(const std::string& dir);
  std::filesystem::path allowed_path(const std::string& path, bool must_exist) const;
  std::shared_ptr<Document> find_document(const std::string& id);
  void route_tools(const httplib::Request& req, httplib::Response& res,
                   const std::vector<std::string>& parts);
  json start_tool(const json& body);
  void route_jobs(const httplib::Request& req, httplib::Response& res, const std::vector<std::string>& parts);
  json start_job(const std::shared_ptr<Document>& doc, const json& body);
  json adopt_model(ir::Model model, const std::string& name);
  void stream_events(const httplib::Request& req, httplib::Response& res);
  // After an edit's answer `a`: when its list was partial, the finished one is pushed (diagnostics_push.h).
  void push_finished_diagnostics(const Document& doc, const json& a);

  StudioOptions options_;
  std::filesystem::path root_;                // canonical
  std::vector<std::filesystem::path> named_;  // canonical
  std::unique_ptr<httplib::Server> http_;
  int port_ = 0;
  std::mutex documents_mutex_;
  std::map<std::string, std::shared_ptr<Document>> documents_;
  uint64_t next_document_ = 1;
  // Declared last, so destroyed first: tool runs and jobs publish events and jobs use the documents.
  EventLog events_;
  std::unique_ptr<ToolRuns> tools_;
  std::unique_ptr<TransformJobs> jobs_;
  std::unique_ptr<DiagnosticsPush> diagnostics_push_;  // first destroyed: its thread uses the documents
};

// 32 hex characters from /dev/urandom.
std::string random_token();

}  // namespace tessera::server
