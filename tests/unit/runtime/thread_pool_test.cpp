#include "runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "runtime/kernel.h"

namespace rt = tessera::rt;

TEST(ThreadPool, CoversEveryIndexOnce) {
  rt::ThreadPool pool(4);
  for (int64_t n : {0, 1, 7, 1000, 100003}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, 10, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << n << " " << i;
  }
}

TEST(ThreadPool, RangesAreNonEmptyAndInBounds) {
  // Rounding the chunk size up once produced ranges starting past n (13 items on 12 chunks), and a
  // kernel copying [b, e) bytes read a negative length: every range must satisfy 0 <= b < e <= n.
  for (int threads : {2, 3, 5, 12, 16}) {
    rt::ThreadPool pool(threads);
    for (int64_t n = 1; n <= 200; ++n) {
      std::atomic<int64_t> covered{0}, bad{0};
      pool.parallel_for(n, 1, [&](int64_t b, int64_t e) {
        if (b < 0 || b >= e || e > n) bad++;
        covered += e - b;
      });
      ASSERT_EQ(bad.load(), 0) << threads << " threads, n " << n;
      ASSERT_EQ(covered.load(), n) << threads << " threads, n " << n;
    }
  }
}

TEST(ThreadPool, RethrowsTheFirstError) {
  rt::ThreadPool pool(3);
  EXPECT_THROW(pool.parallel_for(100, 1,
                                 [](int64_t b, int64_t) {
                                   if (b >= 50) throw std::runtime_error("bad chunk");
                                 }),
               std::runtime_error);
  // The pool still works afterwards.
  std::atomic<int64_t> sum{0};
  pool.parallel_for(100, 1, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 100);
}

TEST(ThreadPool, NestedCallsRunInline) {
  rt::ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  pool.parallel_for(8, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) pool.parallel_for(10, 1, [&](int64_t x, int64_t y) { sum += y - x; });
  });
  EXPECT_EQ(sum.load(), 80);
}

TEST(ThreadPool, OneThreadIsAPlainLoop) {
  rt::ThreadPool pool(1);
  EXPECT_EQ(pool.size(), 1);
  int64_t calls = 0;
  pool.parallel_for(1000, 1, [&](int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 1000);
  });
  EXPECT_EQ(calls, 1);
}

TEST(ThreadPool, CancelSkipsTheChunksNotStarted) {
  // The first chunk to run sets the flag: the chunks still waiting are skipped, and "run cancelled"
  // is thrown, on several threads and on one (where the loop is then run in a few chunks in turn).
  for (int threads : {1, 3}) {
    rt::ThreadPool pool(threads);
    std::atomic<bool> cancel{false};
    pool.set_cancel_flag(&cancel);
    std::atomic<int64_t> done{0};
    try {
      pool.parallel_for(1000, 1, [&](int64_t b, int64_t e) {
        cancel = true;
        done += e - b;
      });
      ADD_FAILURE() << threads << " threads: not cancelled";
    } catch (const tessera::rt::KernelError& e) {
      EXPECT_STREQ(e.what(), "run cancelled");
    }
    EXPECT_GT(done.load(), 0);
    EXPECT_LT(done.load(), 1000) << threads << " threads: every chunk ran";
    // Without the flag set the same pool covers everything.
    cancel = false;
    done = 0;
    pool.parallel_for(1000, 1, [&](int64_t b, int64_t e) { done += e - b; });
    EXPECT_EQ(done.load(), 1000);
  }
}
