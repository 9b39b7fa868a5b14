#include "server/transform_jobs.h"

#include <fmt/format.h>

#include <algorithm>

#include "runtime/session.h"

namespace tessera::server {

namespace {
using Clock = std::chrono::steady_clock;
// Progress events of one job at most this often (the last one before the end may be skipped: the end's
// event says it all).
constexpr auto kProgressEvery = std::chrono::milliseconds(100);
// Finished jobs kept for their answers to be fetched; past it the oldest finished go.
constexpr size_t kKeptJobs = 32;
}  // namespace

struct TransformJobs::Job : JobControl {
  TransformJobs* owner = nullptr;
  std::string id, doc, transform;
  Clock::time_point started = Clock::now();
  std::atomic<bool> cancel{false};
  std::thread thread;
  std::mutex run_mutex;        // guards `run`
  rt::Session* run = nullptr;  // the engine run in progress on the job's thread, if any
  // Under owner->mutex_:
  std::string state = "running";
  double fraction = 0;
  std::string stage;
  Clock::time_point last_push{};
  double seconds = 0;
  json result = json::object();

  void progress(double f, const std::string& what) override {
    check();
    bool push = false;
    {
      std::lock_guard lock(owner->mutex_);
      fraction = std::clamp(f, 0.0, 1.0);
      stage = what;
      Clock::time_point now = Clock::now();
      if (now - last_push >= kProgressEvery) {
        last_push = now;
        push = true;
      }
    }
    if (push) owner->events_.publish("job", owner->get(id));
  }
  void check() override {
    if (cancel.load()) throw JobCancelled{};
  }
  const std::atomic<bool>* cancel_flag() const override { return &cancel; }
  void running(rt::Session* session) override {
    std::lock_guard lock(run_mutex);
    run = session;
    if (run && cancel.load()) run->cancel();
  }
  // Stops the engine run in progress, if any (after its current node).
  void stop_run() {
    std::lock_guard lock(run_mutex);
    if (run) run->cancel();
  }

  // Called with owner->mutex_ held.
  json to_json() const {
    json j{{"id", id},
           {"doc", doc},
           {"transform", transform},
           {"state", state},
           {"progress", fraction},
           {"stage", stage},
           {"cancel_requested", cancel.load()},
           {"seconds",
            state == "running" ? std::chrono::duration<double>(Clock::now() - started).count() : seconds}};
    for (auto& [k, v] : result.items()) j[k] = v;
    return j;
  }
};

TransformJobs::~TransformJobs() {
  std::map<std::string, std::shared_ptr<Job>> jobs;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, job] : jobs_) job->cancel = true;
    jobs = jobs_;
  }
  for (auto& [id, job] : jobs) {
    job->stop_run();  // a server closing does not wait for an engine run to end
    if (job->thread.joinable()) job->thread.join();
  }
}

json TransformJobs::start(const std::string& doc, const std::string& transform, Work work) {
  auto job = std::make_shared<Job>();
  job->owner = this;
  job->doc = doc;
  job->transform = transform;
  json first;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, other] : jobs_) {
      if (other->doc == doc && other->state == "running")
        throw HttpError{409, fmt::format("transformation '{}' (job {}) is already running on this model: "
                                         "wait for it or cancel it",
                                         other->transform, other->id)};
    }
    forget_finished();
    job->id = fmt::format("j{}", next_++);
    jobs_[job->id] = job;
    first = job->to_json();
    // The thread starts with the lock held, so that it cannot finish (and be joined) before it is stored.
    job->thread = std::thread([this, job, work = std::move(work)] {
      try {
        json result = work(*job);
        finish(*job, "succeeded", std::move(result));
      } catch (const JobCancelled&) {
        finish(*job, "cancelled", json::object());
      } catch (const HttpError& e) {
        finish(*job, "failed", {{"error", e.message}, {"status", e.status}});
      } catch (const std::exception& e) {
        finish(*job, "failed", {{"error", e.what()}, {"status", 500}});
      }
    });
  }
  events_.publish("job", first);
  return first;
}

void TransformJobs::finish(Job& job, const char* state, json result) {
  json j;
  {
    std::lock_guard lock(mutex_);
    job.state = state;
    job.seconds = std::chrono::duration<double>(Clock::now() - job.started).count();
    if (job.state == "succeeded") job.fraction = 1;
    job.result = std::move(result);
    j = job.to_json();
  }
  // The event names the end; the answer (edit answer or new document, possibly large) is fetched with
  // GET /api/jobs/{id}.
  j.erase("answer");
  events_.publish("job", j);
}

// Called with mutex_ held. A finished job's thread has set its state and only publishes its last event
// after: joining it waits for no lock of ours.
void TransformJobs::forget_finished() {
  for (auto it = jobs_.begin(); it != jobs_.end() && jobs_.size() >= kKeptJobs;) {
    if (it->second->state == "running") {
      ++it;
      continue;
    }
    if (it->second->thread.joinable()) it->second->thread.join();
    it = jobs_.erase(it);
  }
}

std::shared_ptr<TransformJobs::Job> TransformJobs::find(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) throw HttpError{404, fmt::format("no job '{}'", id)};
  return it->second;
}

json TransformJobs::get(const std::string& id) {
  std::shared_ptr<Job> job = find(id);
  std::lock_guard lock(mutex_);
  return job->to_json();
}

json TransformJobs::cancel(const std::string& id) {
  std::shared_ptr<Job> job = find(id);
  json j;
  {
    std::lock_guard lock(mutex_);
    if (job->state == "running") job->cancel = true;
    j = job->to_json();
  }
  if (j["state"] != "running") return j;
  // After the flag: a run about to start reads the flag once it has cleared its own (Session::run), a
  // session being built stops between its steps, and the run in progress stops after its node.
  job->stop_run();
  events_.publish("job", j);
  return j;
}

json TransformJobs::list() {
  json jobs = json::array();
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<Job>> all;
  for (auto& [id, job] : jobs_) all.push_back(job);
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a->started < b->started; });
  for (const auto& job : all) {
    json j = job->to_json();
    if (j.contains("answer") && j["answer"].contains("log")) j["log"] = j["answer"]["log"];
    j.erase("answer");
    j.erase("document");
    jobs.push_back(std::move(j));
  }
  return {{"jobs", std::move(jobs)}};
}

std::optional<std::string> TransformJobs::busy(const std::string& doc) {
  std::lock_guard lock(mutex_);
  for (auto& [id, job] : jobs_) {
    if (job->doc == doc && job->state == "running")
      return fmt::format(
          "transformation '{}' (job {}) is running on this model: edits wait until it ends "
          "(or cancel it)",
          job->transform, job->id);
  }
  return std::nullopt;
}

}  // namespace tessera::server
