#include "transforms/observer.h"

#include <algorithm>

namespace tessera::transforms {

namespace {
thread_local Observer* current = nullptr;
thread_local int quiet = 0;
constexpr auto kReportEvery = std::chrono::milliseconds(20);
}  // namespace

ObserverScope::ObserverScope(Observer* observer) : previous_(current) {
  current = observer;
}
ObserverScope::~ObserverScope() {
  current = previous_;
}

QuietProgress::QuietProgress() {
  ++quiet;
}
QuietProgress::~QuietProgress() {
  --quiet;
}

void report_progress(double fraction, const std::string& stage) {
  if (!current) return;
  if (quiet) {
    current->check();
    return;
  }
  current->progress(fraction, stage);
}

void check_cancel() {
  if (current) current->check();
}

bool observed() {
  return current != nullptr;
}

Observer* current_observer() {
  return current;
}

Steps::Steps(std::string stage, size_t count, double from, double to)
    : stage_(std::move(stage)), count_(count), from_(from), to_(to), on_(current != nullptr) {}

void Steps::at(size_t i) {
  if (!on_) return;
  auto now = std::chrono::steady_clock::now();
  if (now < next_) return;
  next_ = now + kReportEvery;
  double share = count_ ? static_cast<double>(std::min(i, count_)) / static_cast<double>(count_) : 0;
  report_progress(from_ + (to_ - from_) * share, stage_);
}

}  // namespace tessera::transforms
