// Engine runs that the observer of a transformation's thread (observer.h) can stop between nodes: amp's
// reference, instrumented and trial runs take seconds each on a model like BERT, and the studio's Cancel
// must not wait for them to end.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "runtime/session.h"
#include "transforms/observer.h"

namespace tessera::transforms {

// session.run(feeds, fetch); while it runs, the observer's cancel calls Session::cancel. Once the
// observer was asked to stop, its own exception comes out, whether the run failed ("run cancelled") or
// finished, so callers that count a failed run as a failed trial never see a cancelled one.
inline std::vector<rt::Value> observed_run(rt::Session& session,
                                           const std::vector<std::pair<std::string, rt::Value>>& feeds,
                                           const std::vector<std::string>& fetch = {}) {
  Observer* o = current_observer();
  if (!o) return session.run(feeds, fetch);
  o->check();
  struct Running {  // cleared however the run ends, so that a cancel never reaches a session that is gone
    Observer* o;
    ~Running() { o->running(nullptr); }
  } running{o};
  o->running(&session);
  std::vector<rt::Value> out;
  try {
    out = session.run(feeds, fetch);
  } catch (...) {
    o->check();
    throw;
  }
  o->check();
  return out;
}

}  // namespace tessera::transforms
