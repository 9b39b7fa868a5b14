// The studio's Tools menu: the user tools of the tools file (src/transforms/user_tools.h) run on a saved
// document as child processes, their stdout and stderr pushed to the app as "tool" events as they come
// (events.h; also kept for GET .../runs/{id}?from=N, which fills a gap a stream missed), cancellable,
// with the exit status at the end (a last event).
//
// A run is the program and its argument list, no shell; its stdin is /dev/null, it runs in its own
// process group (cancel ends the group: a script's children too), with the default signal dispositions
// and an empty signal mask (the server's threads block SIGINT and SIGTERM; a child must not inherit that).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "server/document.h"
#include "server/events.h"
#include "transforms/user_tools.h"

namespace tessera::server {

class ToolRuns {
 public:
  // `events`: where output and ends are pushed; null: nowhere (polled only).
  explicit ToolRuns(EventLog* events = nullptr) : events_(events) {}
  ToolRuns(const ToolRuns&) = delete;
  ToolRuns& operator=(const ToolRuns&) = delete;
  // Ends every run still going (SIGKILL to its group) and waits for it.
  ~ToolRuns();

  // Starts `tool` with $Model and $Output expanded; returns the run's id. HttpError 400 when the
  // program cannot be started (not found, not executable), naming the tool and the program.
  std::string start(const transforms::UserTool& tool, const std::string& model, const std::string& output);
  // {"id", "tool", "output": text from byte `from` on, "next": the byte after it, "done",
  //  "exit_status" (when it exited), "signal" (when a signal ended it), "cancelled", "output_file"}.
  json poll(const std::string& id, size_t from);
  // SIGTERM to the run's process group; a run already done is left as it is.
  json cancel(const std::string& id);

  struct Run;  // one run: its process, output and status

 private:
  std::shared_ptr<Run> find(const std::string& id);
  void forget_finished();
  EventLog* events_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Run>> runs_;
  uint64_t next_ = 1;
};

}  // namespace tessera::server
