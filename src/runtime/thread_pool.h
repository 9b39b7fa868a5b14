// The intra-op thread pool: kernels split loops over it with parallel_for.
//
// It runs on OpenMP, the threading runtime oneDNN (Debian's build) uses too: one set of threads serves
// both our kernels and oneDNN's, instead of two pools spinning against each other on the same cores
// (measured: BERT-base on 2 cores ran 2x slower with a separate pool than with one thread). A
// parallel_for issued from inside another runs inline, so nesting never deadlocks and a pool of one
// thread is just a plain loop.
#pragma once

#include <cstdint>
#include <functional>

namespace tessera::rt {

class ThreadPool {
 public:
  // threads <= 0: one per hardware thread.
  explicit ThreadPool(int threads = 0);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return threads_; }

  // Calls fn(begin, end) over [0, n) in chunks of at least `grain` items, on up to size() threads,
  // and returns when all are done. An exception thrown by fn is rethrown here (the first one).
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  int threads_;
};

// The number of hardware threads (at least 1).
int hardware_threads();

}  // namespace tessera::rt
