#include "server/diagnostics_push.h"

namespace tessera::server {

DiagnosticsPush::DiagnosticsPush(EventLog& events, Find find)
    : events_(events), find_(std::move(find)), thread_([this] { run(); }) {}

DiagnosticsPush::~DiagnosticsPush() {
  stop();
}

void DiagnosticsPush::request(const std::string& document, uint64_t partial_version) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    queue_.emplace_back(document, partial_version);
  }
  cv_.notify_all();
}

void DiagnosticsPush::finish(Document& doc, uint64_t partial_version) {
  std::lock_guard lock(doc.mutex());
  // A read or another edit's answer sent a list after the partial one: finished, and the client has it.
  if (doc.sent_diagnostics_version() != partial_version) return;
  const IncrementalChecker& checker = doc.checker();  // the rest of the re-check
  json list = diagnostics_json(doc.model(), checker.result().diagnostics);
  json diff = diagnostics_diff(doc.sent_diagnostics(), list);
  const uint64_t version = doc.set_sent_diagnostics(std::move(list));
  diff["base"] = partial_version;
  diff["version"] = version;
  events_.publish("diagnostics", {{"document", doc.id()},
                                  {"version", doc.version()},
                                  {"base", partial_version},
                                  {"diagnostics_version", version},
                                  {"diagnostics_diff", std::move(diff)}});
}

void DiagnosticsPush::drain() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return stopping_ || (queue_.empty() && !busy_); });
}

void DiagnosticsPush::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DiagnosticsPush::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    auto [id, version] = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    // Looked up now, not held in the queue: a document closed meanwhile is not kept alive.
    if (std::shared_ptr<Document> doc = find_(id)) finish(*doc, version);
    lock.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace tessera::server
