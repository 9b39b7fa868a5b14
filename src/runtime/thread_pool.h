// The intra-op thread pool: kernels split loops over it with parallel_for. The calling thread takes a
// share of the work itself, and a parallel_for issued from inside a worker runs inline, so nesting never
// deadlocks and a pool of one thread is just a plain loop.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::rt {

class ThreadPool {
 public:
  // threads <= 0: one per hardware thread.
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) over [0, n) in chunks of at least `grain` items, on up to size() threads,
  // and returns when all are done. An exception thrown by fn is rethrown here (the first one).
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  void worker_loop();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stop_ = false;
};

// The number of hardware threads (at least 1).
int hardware_threads();

}  // namespace tessera::rt
