// The studio's pushed events: what the server tells the app without being asked (a transformation job's
// progress and end, a user tool's output and exit status), kept in order with a sequence number and sent
// as Server-Sent Events on GET /api/events (docs/studio-api.md, "Events"). A browser that reconnects
// sends the last number it saw (Last-Event-ID) and gets what it missed, as far as the log still holds it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "server/document.h"

namespace tessera::server {

struct Event {
  uint64_t seq = 0;
  std::string type;  // "job", "tool"
  std::string data;  // one line of JSON
};

class EventLog {
 public:
  // Keeps the last `capacity` events for streams that fall behind or reconnect.
  explicit EventLog(size_t capacity = 4096) : capacity_(capacity) {}

  // Appends an event (its JSON written on one line, bytes that are not UTF-8 as U+FFFD) and wakes the
  // streams; returns its sequence number (1, 2, ...).
  uint64_t publish(const std::string& type, const json& data);
  // The events after `seq`, waiting up to `timeout` for one when there are none; empty after close().
  // When the log no longer holds the event after `seq`, the first returned is the oldest it holds.
  std::vector<Event> after(uint64_t seq, std::chrono::milliseconds timeout);
  // The last sequence number given (0: none yet).
  uint64_t last() const;
  // Wakes every waiting stream and makes after() return at once from then on (the server stops).
  void close();
  bool closed() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Event> events_;
  size_t capacity_;
  uint64_t next_ = 1;
  bool closed_ = false;
};

// An event in the text/event-stream format: "id: N\nevent: TYPE\ndata: JSON\n\n".
std::string sse_frame(const Event& e);

}  // namespace tessera::server
