// The Model menu's transformations as background jobs: started by one request, run on a thread of their
// own on a copy of the document's model, their progress pushed as "job" events (events.h), cancellable,
// and the document edited only when the job succeeds (one undo step). While a job runs on a document,
// edits of it are refused (HTTP 409, naming the job): the job works on the model as it was when it
// started, and its result is applied to that same model. docs/studio-api.md, "Jobs".
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "server/document.h"
#include "server/events.h"
#include "transforms/observer.h"

namespace tessera::server {

// Thrown by JobControl once the job was asked to stop; a job's work lets it pass.
struct JobCancelled {};

// What a job's work sees of its job: where to report progress, and whether it was cancelled. It is the
// transformations' observer (transforms/observer.h): installed on the job's thread, it gets their
// progress, and its cancel stops the engine run in progress (amp's runs) between nodes.
//   progress(): records how far the work is (0 to 1) and what it is doing, pushed as an event (at most
//     one per 100 ms but the first); throws JobCancelled once cancel was asked.
//   check(): throws JobCancelled once cancel was asked.
class JobControl : public transforms::Observer {};

class TransformJobs {
 public:
  // The work of a job: returns what its answer carries on success ({"answer": edit answer, "log"} or
  // {"document", "log"}); throws HttpError (refused: its status and message), another exception (failed:
  // its message) or lets JobCancelled through.
  using Work = std::function<json(JobControl&)>;

  explicit TransformJobs(EventLog& events) : events_(events) {}
  TransformJobs(const TransformJobs&) = delete;
  TransformJobs& operator=(const TransformJobs&) = delete;
  // Cancels every job still running and waits for its thread.
  ~TransformJobs();

  // Starts `work` for transformation `transform` on document `doc` on a thread of its own; returns the
  // job's JSON (state "running"). HttpError 409 when a job already runs on that document.
  json start(const std::string& doc, const std::string& transform, Work work);
  // {"id", "doc", "transform", "state": running|succeeded|failed|cancelled, "progress", "stage",
  //  "cancel_requested", "seconds", and on its end "error"/"status" or the work's answer}.
  json get(const std::string& id);
  // Asks the job to stop; it ends "cancelled" at its next check (a job past its last check, already
  // applying its result, ends "succeeded"). The answer is the job's JSON.
  json cancel(const std::string& id);
  // Every job kept (running ones and the last finished), oldest first, without their answers:
  // {"jobs": [job JSON with "log" when it has one]}.
  json list();
  // The sentence a refused edit of `doc` answers while a job runs on it; nullopt when none runs.
  std::optional<std::string> busy(const std::string& doc);

  struct Job;

 private:
  std::shared_ptr<Job> find(const std::string& id);
  void finish(Job& job, const char* state, json result);
  void forget_finished();
  EventLog& events_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Job>> jobs_;
  uint64_t next_ = 1;
};

}  // namespace tessera::server
