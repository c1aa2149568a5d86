// The processor pool on the steady clock with real workers: executors, races, stalls.
// Waits are on conditions with generous timeouts, never sleeps that time the pool.
#include <scenert/runtime/processor_pool.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../eventually.hpp"

namespace scenert {
namespace {

using namespace std::chrono_literals;

#if defined(__SANITIZE_THREAD__)
constexpr bool under_tsan = true;  // Debian's oneTBB is not built for TSan
#else
constexpr bool under_tsan = false;
#endif

using scenert::test::eventually;
constexpr auto patience = 20s;  // generous: a loaded machine may be slow to tick every service

// Whether every service ticked `n` times or more.
template <class Services>
bool each_ticked(const Services& all, int n) {
  return std::all_of(all.begin(), all.end(), [n](const auto& s) { return s->ticks.load() >= n; });
}

struct counter final : service {
  explicit counter(std::string name) : service(std::move(name)) {}
  std::atomic<int> ticks{0}, inactives{0}, concurrent{0};
  std::atomic<bool> overlap{false};
  void on_inactive() override { inactives.fetch_add(1); }
  void on_tick(const tick_context&) override {
    if (concurrent.fetch_add(1) != 0) overlap.store(true);
    ticks.fetch_add(1);
    concurrent.fetch_sub(1);
  }
};

void ticks_on(executor_kind kind, unsigned workers = 2, int realtime_priority = 0) {
  pool_options o;
  o.workers = workers;
  o.executor = kind;
  o.realtime_priority = realtime_priority;
  processor_pool pool(o);
  std::vector<std::shared_ptr<counter>> all;
  for (int i = 0; i < 3; ++i) {
    all.push_back(std::make_shared<counter>("c" + std::to_string(i)));
    ASSERT_TRUE(pool.add(all.back(), 200));
  }
  ASSERT_TRUE(pool.start());
  EXPECT_TRUE(eventually([&] { return each_ticked(all, 10); }, patience));
  auto pm = pool.metrics(true);
  EXPECT_GE(pm.ticks, 30u);
  EXPECT_EQ(pm.workers, workers);
  ASSERT_TRUE(pool.stop());
  for (auto& s : all) EXPECT_EQ(s->inactives.load(), 1);
}

TEST(ProcessorPoolThreads, TicksOnTheTbbExecutor) {
  if (under_tsan) GTEST_SKIP() << "oneTBB is not built for ThreadSanitizer";
  ticks_on(executor_kind::tbb);
}

TEST(ProcessorPoolThreads, TicksOnTheThreadExecutor) { ticks_on(executor_kind::threads); }

// One worker is a valid pool: every worker index the executor hands out stays in range.
TEST(ProcessorPoolThreads, TicksOnASingleWorkerOfEitherExecutor) {
  if (!under_tsan) ticks_on(executor_kind::tbb, 1);
  ticks_on(executor_kind::threads, 1);
}

// At 1000 Hz a cohort comes back after the dispatcher has handed its next slot out, so each
// tick goes out on its own; it still waits for its grid point. The grid starts on the first
// whole millisecond of the steady clock at or after the add, and tick k (from 0) is due (k + 1)
// ms after that.
struct punctual final : service {
  explicit punctual(std::string name, std::int64_t added) : service(std::move(name)), added_ns(added) {}
  std::int64_t added_ns;
  std::atomic<int> ticks{0}, early{0};
  void on_tick(const tick_context& c) override {
    std::int64_t base = (added_ns + 999'999) / 1'000'000 * 1'000'000;
    auto floor = base + static_cast<std::int64_t>(c.index + 1) * 1'000'000;
    if (c.now.time_since_epoch().count() < floor) early.fetch_add(1);
    ticks.fetch_add(1);
  }
};

TEST(ProcessorPoolThreads, NeverTicksBeforeItsGridPointAtAThousandHertz) {
  processor_pool pool;
  ASSERT_TRUE(pool.start());
  std::vector<std::shared_ptr<punctual>> all;
  for (int i = 0; i < 8; ++i) {
    auto added = std::chrono::steady_clock::now().time_since_epoch();
    all.push_back(
        std::make_shared<punctual>("p" + std::to_string(i), std::chrono::nanoseconds(added).count()));
    ASSERT_TRUE(pool.add(all.back(), 1000));
  }
  EXPECT_TRUE(eventually([&] { return each_ticked(all, 200); }, patience));
  ASSERT_TRUE(pool.stop());
  for (auto& s : all) EXPECT_EQ(s->early.load(), 0) << s->name();
}

TEST(ProcessorPoolThreads, RefusesARealtimePriorityOutOfRange) {
  for (int bad : {-1, 100}) {
    pool_options o;
    o.realtime_priority = bad;
    processor_pool pool(o);
    auto r = pool.start();
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, pool_errc::invalid_options);
    EXPECT_NE(
        r.error().message.find("realtime_priority must be 0 (off) or 1..99, got " + std::to_string(bad)),
        std::string::npos)
        << r.error().message;
  }
}

// Where the system grants SCHED_FIFO the pool ticks on it; where it does not, start() says why.
TEST(ProcessorPoolThreads, TicksOnRealtimePriorityOrSaysWhyNot) {
  pool_options o;
  o.realtime_priority = 1;
  o.executor = executor_kind::threads;
  {
    processor_pool probe(o);
    if (auto r = probe.start(); !r) {
      EXPECT_EQ(r.error().code, pool_errc::invalid_options);
      EXPECT_NE(r.error().message.find("SCHED_FIFO priority 1 refused"), std::string::npos)
          << r.error().message;
      return;
    }
  }
  ticks_on(executor_kind::threads, 2, 1);
  if (!under_tsan) ticks_on(executor_kind::tbb, 2, 1);
}

TEST(ProcessorPoolThreads, AServiceRemovesItselfFromItsTickAndLearnsWhenItIsDone) {
  struct leaver final : service {
    leaver(processor_pool& p) : service("leaver"), pool(p) {}
    processor_pool& pool;
    std::atomic<int> ticks{0}, inactives{0}, after_removal{0};
    std::atomic<bool> done{false};
    void on_inactive() override { inactives.fetch_add(1); }
    void on_tick(const tick_context&) override {
      if (done.load()) after_removal.fetch_add(1);
      if (ticks.fetch_add(1) == 3) {
        auto r = pool.remove(*this, [this] { done.store(true); });
        EXPECT_TRUE(r);
      }
    }
  };
  processor_pool pool;
  auto s = std::make_shared<leaver>(pool);
  ASSERT_TRUE(pool.add(s, 500));
  ASSERT_TRUE(pool.start());
  ASSERT_TRUE(eventually([&] { return s->done.load(); }, patience));
  EXPECT_EQ(s->ticks.load(), 4);
  EXPECT_EQ(s->inactives.load(), 1);
  EXPECT_EQ(s->after_removal.load(), 0);
  EXPECT_EQ(pool.metrics().services, 0u);
}

TEST(ProcessorPoolThreads, NamesAndCountsAStalledTickWhileItRuns) {
  std::mutex mu;
  std::vector<std::string> logs;
  pool_options o;
  o.stall_threshold = 30ms;
  o.log = [&](log_level, std::string_view s) {
    std::lock_guard lock(mu);
    logs.emplace_back(s);
  };
  processor_pool pool(o);
  std::atomic<bool> release{false};
  struct blocker final : service {
    explicit blocker(std::atomic<bool>& r) : service("blocker"), release(r) {}
    std::atomic<bool>& release;
    void on_tick(const tick_context&) override {
      while (!release.load()) std::this_thread::sleep_for(1ms);
    }
  };
  auto s = std::make_shared<blocker>(release);
  ASSERT_TRUE(pool.add(s, 100));
  ASSERT_TRUE(pool.start());
  bool seen = eventually(
      [&] {
        auto pm = pool.metrics();
        return !pm.stalled_now.empty() && pm.stalled_now[0].find("blocker") != std::string::npos;
      },
      patience);
  release.store(true);
  EXPECT_TRUE(seen);
  ASSERT_TRUE(pool.stop());
  auto pm = pool.metrics(false);
  EXPECT_EQ(pm.stalls, 1u);  // counted once, though watched many times
  std::lock_guard lock(mu);
  ASSERT_FALSE(logs.empty());
  EXPECT_NE(logs[0].find("blocker"), std::string::npos);
}

TEST(ProcessorPoolThreads, StopFromInsideATickCompletesAfterIt) {
  processor_pool pool;
  struct stopper final : service {
    explicit stopper(processor_pool& p) : service("stopper"), pool(p) {}
    processor_pool& pool;
    std::atomic<int> inactives{0};
    void on_inactive() override { inactives.fetch_add(1); }
    void on_tick(const tick_context&) override { EXPECT_TRUE(pool.stop()); }
  };
  auto s = std::make_shared<stopper>(pool);
  ASSERT_TRUE(pool.add(s, 500));
  ASSERT_TRUE(pool.start());
  ASSERT_TRUE(eventually([&] { return s->inactives.load() == 1; }, patience));
  ASSERT_TRUE(pool.stop());
  EXPECT_EQ(s->inactives.load(), 1);
  EXPECT_EQ(pool.add(std::make_shared<counter>("late"), 10).code(), pool_errc::stopped);
}

// 12 workers on 2 cores; four threads add, remove and post at random while the pool runs.
// No service ever ticks on two threads at once, every accepted message runs, every other is
// reported dropped, and stop() deactivates each active service exactly once.
TEST(ProcessorPoolThreads, StressNeverTicksAServiceOnTwoThreadsAtOnce) {
  pool_options o;
  o.workers = 12;
  processor_pool pool(o);
  ASSERT_TRUE(pool.start());
  constexpr int n = 64;
  std::vector<std::shared_ptr<counter>> all;
  for (int i = 0; i < n; ++i) all.push_back(std::make_shared<counter>("s" + std::to_string(i)));
  std::atomic<long> accepted{0}, rejected{0}, ran{0}, removed_cb{0}, removals{0};
  auto end = std::chrono::steady_clock::now() + 1500ms;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t) + 7);
      while (std::chrono::steady_clock::now() < end) {
        auto& s = all[rng() % n];
        switch (rng() % 4) {
          case 0:
            (void)pool.add(s, static_cast<double>(100 + rng() % 900));
            break;
          case 1:
            if (pool.remove(*s, [&] { removed_cb.fetch_add(1); })) removals.fetch_add(1);
            break;
          default:
            if (s->post([&] { ran.fetch_add(1); }))
              accepted.fetch_add(1);
            else
              rejected.fetch_add(1);
        }
        if (rng() % 16 == 0) std::this_thread::yield();
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE(pool.stop());
  for (auto& s : all) {
    EXPECT_FALSE(s->overlap.load()) << s->name();
    EXPECT_FALSE(s->active()) << s->name();
  }
  // Services never added keep their messages queued; count those as not run yet.
  long queued = 0, dropped = 0;
  for (auto& s : all) {
    queued += static_cast<long>(s->mailbox_depth());
    dropped += static_cast<long>(s->dropped_messages());
  }
  EXPECT_EQ(ran.load() + queued, accepted.load());
  EXPECT_EQ(dropped, rejected.load());
  EXPECT_EQ(removed_cb.load(), removals.load());
  EXPECT_GT(pool.metrics().ticks, 0u);
}

}  // namespace
}  // namespace scenert
