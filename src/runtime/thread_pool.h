// The intra-op thread pool: kernels split loops over it with parallel_for.
//
// It runs on OpenMP, the threading runtime oneDNN (Debian's build) uses too: one set of threads serves
// both our kernels and oneDNN's, instead of two pools spinning against each other on the same cores
// (measured: BERT-base on 2 cores ran 2x slower with a separate pool than with one thread). A
// parallel_for issued from inside another runs inline, so nesting never deadlocks and a pool of one
// thread is just a plain loop.
#pragma once

#include <atomic>
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
  // Once the cancel flag is set, the chunks not yet started are skipped and KernelError "run
  // cancelled" is thrown.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  // The flag Session::cancel() sets (nullptr: none). Checked between chunks, so that cancelling stops
  // inside one long kernel (a large Resize, a big convolution on the reference kernel) and not only
  // between nodes; with one thread the loop is then run in a few chunks in turn.
  void set_cancel_flag(const std::atomic<bool>* flag) { cancel_ = flag; }

 private:
  bool cancelled() const { return cancel_ && cancel_->load(std::memory_order_relaxed); }

  int threads_;
  const std::atomic<bool>* cancel_ = nullptr;
};

// The number of hardware threads (at least 1).
int hardware_threads();

}  // namespace tessera::rt
