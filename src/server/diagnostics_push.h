// The finished diagnostics list after a partial edit answer, pushed on /api/events.
//
// An edit at the head of a long chain is answered after Document::kAnswerBudget re-checked nodes, with a
// provisional list ("diagnostics_partial"). The rest of the re-check then runs here, on a thread of its
// own, under the document's mutex: every read and the next edit wait for it or find it done, so none sees
// a provisional list (an edit must finish the pass before it moves the model anyway; see
// IncrementalChecker::update). When done it publishes a "diagnostics" event:
//   {"document": ID, "version": document version, "base": the partial list's diagnostics version,
//    "diagnostics_version": the finished list's, "diagnostics_diff": {"base", "version", "removed", "added"}}
// Nothing is published when another list was sent first (a read, or the next edit's answer): that one
// is already finished.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "server/document.h"
#include "server/events.h"

namespace tessera::server {

class DiagnosticsPush {
 public:
  // `find`: the open document of an id (nullptr once it is closed).
  using Find = std::function<std::shared_ptr<Document>(const std::string&)>;
  DiagnosticsPush(EventLog& events, Find find);
  ~DiagnosticsPush();
  DiagnosticsPush(const DiagnosticsPush&) = delete;
  DiagnosticsPush& operator=(const DiagnosticsPush&) = delete;

  // After an answer that sent the partial list `partial_version` of `document`: finish and push it.
  void request(const std::string& document, uint64_t partial_version);
  // Finishes document `doc` (whose mutex the caller must not hold) if its last sent list is still
  // `partial_version`, and publishes the event; what the thread runs for each request.
  void finish(Document& doc, uint64_t partial_version);
  // Waits until every request made so far is done (tests).
  void drain();
  // Ends the thread (what is still queued is dropped: the lists finish on their next read).
  void stop();

 private:
  void run();

  EventLog& events_;
  Find find_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<std::string, uint64_t>> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tessera::server
