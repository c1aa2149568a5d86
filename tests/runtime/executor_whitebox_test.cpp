#include "executor.hpp"
#include "tick_clock.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace {

using scenert::detail::executor;
using scenert::detail::monotonic_ns;

std::unique_ptr<executor> make(scenert::executor_kind kind, unsigned workers) {
  return kind == scenert::executor_kind::tbb ? scenert::detail::make_tbb_executor(workers, 0)
                                             : scenert::detail::make_thread_executor(workers, 0);
}

class Executor : public ::testing::TestWithParam<scenert::executor_kind> {};

// A batch handed out ahead of its slot must not tick early: the bound is a lower one, so a slow
// machine cannot make this fail.
TEST_P(Executor, RunsATaskNoSoonerThanItsTime) {
  auto ex = make(GetParam(), 2);
  std::int64_t at = monotonic_ns() + 20'000'000;
  std::atomic<std::int64_t> ran{0};
  ex->submit([&](unsigned) { ran.store(monotonic_ns()); }, at);
  ex.reset();  // drains: waits for the task's time and runs it
  EXPECT_GE(ran.load(), at);
}

// One worker takes the tasks in order of their times, then of submission, whatever the order
// they came in: a late cohort submitted after the next slot's batches still goes first.
TEST_P(Executor, RunsTasksInOrderOfTheirTimes) {
  auto ex = make(GetParam(), 1);
  std::mutex mu;
  std::vector<int> order;
  auto note = [&](int i) {
    return [&, i](unsigned) {
      std::lock_guard lock(mu);
      order.push_back(i);
    };
  };
  // The one worker is held until every task is queued, so that no descheduling of this thread
  // between two submits can let an earlier-submitted task run first.
  std::atomic<bool> held{false}, release{false};
  ex->submit([&](unsigned) {
    held = true;
    while (!release) std::this_thread::yield();
  });
  while (!held) std::this_thread::yield();
  std::int64_t now = monotonic_ns();
  ex->submit(note(4), now + 30'000'000);
  ex->submit(note(2), now + 10'000'000);
  ex->submit(note(3), now + 10'000'000);
  ex->submit(note(1));
  release = true;
  ex.reset();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4}));
}

// Tasks due at once are spread over the workers: each of two tasks waits until both run.
TEST_P(Executor, RunsDueTasksOnEveryWorker) {
  auto ex = make(GetParam(), 2);
  std::atomic<int> arrived{0};
  auto meet = [&](unsigned) {
    arrived.fetch_add(1);
    while (arrived.load() < 2) std::this_thread::yield();
  };
  std::int64_t at = monotonic_ns() + 5'000'000;
  ex->submit(meet, at);
  ex->submit(meet, at);
  ex.reset();
  EXPECT_EQ(arrived.load(), 2);
}

#if defined(__SANITIZE_THREAD__)  // Debian's oneTBB is not built for ThreadSanitizer
#define SCENERT_BACKENDS ::testing::Values(scenert::executor_kind::threads)
#else
#define SCENERT_BACKENDS ::testing::Values(scenert::executor_kind::threads, scenert::executor_kind::tbb)
#endif
INSTANTIATE_TEST_SUITE_P(Backends, Executor, SCENERT_BACKENDS, [](const auto& p) {
  return p.param == scenert::executor_kind::tbb ? "Tbb" : "Threads";
});

}  // namespace
