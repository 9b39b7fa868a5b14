#include "check/incremental.h"

#include <chrono>

namespace tessera::check {

void IncrementalChecker::update(const ir::Model& m, const std::vector<ir::Change>& /*changes*/) {
  auto start = std::chrono::steady_clock::now();
  check_model_in_place(m, result_);
  last_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tessera::check
