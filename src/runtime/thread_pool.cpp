#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>

namespace tessera::rt {

namespace {
thread_local bool t_in_worker = false;
}

int hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = hardware_threads();
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::worker_loop() {
  t_in_worker = true;
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_ && queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t chunks = std::min<int64_t>(size(), (n + grain - 1) / grain);
  if (chunks <= 1 || t_in_worker) {
    fn(0, n);
    return;
  }
  // Work is handed out in chunk indices through an atomic counter, so a slow thread does not hold up
  // the others beyond its own chunk. The state is shared with the queued jobs: a job that starts only
  // after every chunk is done finds nothing left and never touches `fn`, which may be gone by then.
  struct State {
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> done{0};
    std::exception_ptr error;
    std::mutex mu;
    std::condition_variable cv;
  };
  auto st = std::make_shared<State>();
  int64_t step = (n + chunks - 1) / chunks;
  const auto* body = &fn;
  auto run = [st, body, chunks, step, n] {
    for (;;) {
      int64_t c = st->next.fetch_add(1);
      if (c >= chunks) break;
      try {
        (*body)(c * step, std::min(n, (c + 1) * step));
      } catch (...) {
        std::lock_guard lock(st->mu);
        if (!st->error) st->error = std::current_exception();
      }
      if (st->done.fetch_add(1) + 1 == chunks) {
        std::lock_guard lock(st->mu);
        st->cv.notify_all();
      }
    }
  };
  int helpers = static_cast<int>(std::min<int64_t>(chunks - 1, static_cast<int64_t>(workers_.size())));
  {
    std::lock_guard lock(mu_);
    for (int i = 0; i < helpers; ++i) queue_.emplace_back(run);
  }
  cv_.notify_all();
  run();
  std::unique_lock lock(st->mu);
  st->cv.wait(lock, [&] { return st->done.load() == chunks; });
  if (st->error) std::rethrow_exception(st->error);
}

}  // namespace tessera::rt
