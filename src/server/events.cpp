#include "server/events.h"

#include <fmt/format.h>

#include <algorithm>

namespace tessera::server {

uint64_t EventLog::publish(const std::string& type, const json& data) {
  std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  uint64_t seq;
  {
    std::lock_guard lock(mutex_);
    seq = next_++;
    events_.push_back({seq, type, std::move(text)});
    while (events_.size() > capacity_) events_.pop_front();
  }
  cv_.notify_all();
  return seq;
}

std::vector<Event> EventLog::after(uint64_t seq, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  // A number past the last event (a stream of an earlier server run): from now on.
  seq = std::min(seq, next_ - 1);
  cv_.wait_for(lock, timeout, [&] { return closed_ || next_ > seq + 1; });
  std::vector<Event> out;
  if (closed_) return out;
  for (const Event& e : events_) {
    if (e.seq > seq) out.push_back(e);
  }
  return out;
}

uint64_t EventLog::last() const {
  std::lock_guard lock(mutex_);
  return next_ - 1;
}

void EventLog::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  cv_.notify_all();
}

bool EventLog::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

std::string sse_frame(const Event& e) {
  // The JSON is one line (dump without indent escapes newlines inside strings), as a data field must be.
  return fmt::format("id: {}\nevent: {}\ndata: {}\n\n", e.seq, e.type, e.data);
}

}  // namespace tessera::server
