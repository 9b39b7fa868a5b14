#include "runtime/thread_pool.h"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>

#include "runtime/kernel.h"

namespace tessera::rt {

namespace {

constexpr int64_t kSerialChunks = 8;

}  // namespace

int hardware_threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

ThreadPool::ThreadPool(int threads) : threads_(threads <= 0 ? hardware_threads() : threads) {}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t chunks = std::min<int64_t>(threads_, (n + grain - 1) / grain);
  if (omp_in_parallel()) {  // nested: the outer loop checks the flag
    fn(0, n);
    return;
  }
  if (chunks <= 1) {
    if (!cancel_) {
      fn(0, n);
      return;
    }
    // One thread: a few chunks in turn, so that a cancel lands within an eighth of the loop.
    const int64_t step = std::max(grain, (n + kSerialChunks - 1) / kSerialChunks);
    for (int64_t b = 0; b < n; b += step) {
      if (cancelled()) throw KernelError("run cancelled");
      fn(b, std::min(n, b + step));
    }
    return;
  }
  // A few chunks per thread evens out uneven work; exceptions must not leave an OpenMP region, so the
  // first is kept and rethrown after it.
  chunks = std::min<int64_t>(n / grain, chunks * 4);
  int64_t step = (n + chunks - 1) / chunks;
  // Rounding the step up can leave the last chunks empty (n = 13 in 12 chunks: steps of 2 cover it in
  // 7): never hand fn a range that starts past n.
  chunks = (n + step - 1) / step;
  std::exception_ptr error;
  std::mutex error_mu;
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    try {
      if (cancelled()) throw KernelError("run cancelled");
      fn(c * step, std::min(n, (c + 1) * step));
    } catch (...) {
      std::lock_guard lock(error_mu);
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace tessera::rt
