// Progress and cancel of a transformation that runs for someone else: the studio runs transformations as
// background jobs (src/server/transform_jobs.h) and shows how far each is, with a Cancel that must take
// effect within about half a second, also in the middle of an engine run that takes seconds.
//
// The job installs an Observer on the thread it runs the transformation on (ObserverScope); the
// transformations report through the free functions below, which do nothing when no observer is
// installed (the CLI), so their signatures stay as they are. An observer stops the work by throwing from
// progress() or check() an exception that is not a std::exception, so that no `catch (std::exception&)`
// of a transformation (amp's trials count a failed run as a failed trial) swallows it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>

namespace tessera::rt {
class Session;
}

namespace tessera::transforms {

class Observer {
 public:
  virtual ~Observer() = default;
  // How far the work is (0 to 1) and what it is doing; may throw to stop it.
  virtual void progress(double fraction, const std::string& stage) = 0;
  // Throws once the work was asked to stop.
  virtual void check() = 0;
  // The engine run starting on this thread (nullptr: it ended), for a cancel to stop it between nodes.
  virtual void running(rt::Session* session) = 0;
  // A flag set once the work was asked to stop, for sessions to read while they build
  // (rt::SessionOptions::cancel); nullptr: none.
  virtual const std::atomic<bool>* cancel_flag() const { return nullptr; }
};

// Installs `observer` on this thread for the scope's lifetime (the one before comes back after).
class ObserverScope {
 public:
  explicit ObserverScope(Observer* observer);
  ~ObserverScope();
  ObserverScope(const ObserverScope&) = delete;
  ObserverScope& operator=(const ObserverScope&) = delete;

 private:
  Observer* previous_;
};

// Within it, report_progress only checks for cancel: a transformation used as a step of another (amp
// converts a copy per trial) does not move the outer one's progress bar back and forth.
class QuietProgress {
 public:
  QuietProgress();
  ~QuietProgress();
  QuietProgress(const QuietProgress&) = delete;
  QuietProgress& operator=(const QuietProgress&) = delete;
};

// Reports to this thread's observer, if any.
void report_progress(double fraction, const std::string& stage);
// Lets this thread's observer stop the work here.
void check_cancel();
bool observed();

// This thread's observer (nullptr: none). Engine runs are made stoppable with observed_run
// (observed_run.h: header-only, as this library does not link the engine).
Observer* current_observer();

// Progress through `count` items of a stage, mapped to [from, to] of the whole; reports at most every
// 20 ms (items can be thousands of nodes), checking for cancel at each report.
class Steps {
 public:
  Steps(std::string stage, size_t count, double from = 0, double to = 1);
  // Item `i` (0-based) is about to be worked on.
  void at(size_t i);

 private:
  std::string stage_;
  size_t count_;
  double from_, to_;
  bool on_;  // an observer listens: else at() costs a branch
  std::chrono::steady_clock::time_point next_{};
};

}  // namespace tessera::transforms
