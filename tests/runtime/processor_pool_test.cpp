// Guarantees and bad inputs of the processor pool, on the manual clock (deterministic).
#include <scenert/runtime/processor_pool.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "pool_test_support.hpp"

namespace scenert {
namespace {

using namespace std::chrono_literals;
using namespace testing;  // scenert::testing: the probe service and the manual pool

TEST(ProcessorPool, RejectsAPhaseOutsideOnePeriod) {
  manual_pool m;
  for (nanoseconds phase : {nanoseconds(-1), nanoseconds(100ms), nanoseconds(150ms)}) {
    auto s = std::make_shared<probe>("p");
    auto r = m.pool.add(s, 10, phase);
    ASSERT_FALSE(r) << phase.count();
    EXPECT_EQ(r.error().code, pool_errc::invalid_phase);
    EXPECT_NE(r.error().message.find("phase must be in [0, 100000000 ns) at 10 Hz"), std::string::npos)
        << r.error().message;
    EXPECT_EQ(s->actives, 0);
  }
}

// With a phase the grid is the pool's, not the add's: services added at different times with one
// phase tick together, and different phases spread over the period.
TEST(ProcessorPool, TicksOnThePoolsGridAtTheGivenPhase) {
  manual_pool m;
  const std::int64_t origin = ns_of(m.clk.now());  // the manual clock starts on a whole millisecond
  auto a = std::make_shared<probe>("a"), b = std::make_shared<probe>("b"), c = std::make_shared<probe>("c");
  ASSERT_TRUE(m.pool.add(a, 10, 30ms));
  ASSERT_TRUE(m.pool.add(c, 10, 0ms));  // the first at least 1 ms ahead: origin + 100 ms
  m.pool.advance(55ms);
  ASSERT_TRUE(m.pool.add(b, 10, 30ms));  // joins a's grid: origin + 130 ms, not 55 + 100 ms
  m.pool.advance(200ms);
  auto starts = [&](const probe& p) {
    std::vector<std::int64_t> v;
    for (auto& t : p.ticks) v.push_back((ns_of(t.now) - origin) / 1'000'000);
    return v;
  };
  EXPECT_EQ(starts(*a), (std::vector<std::int64_t>{30, 130, 230}));
  EXPECT_EQ(starts(*b), (std::vector<std::int64_t>{130, 230}));
  EXPECT_EQ(starts(*c), (std::vector<std::int64_t>{100, 200}));
}

TEST(ProcessorPool, RejectsFrameRatesOutsideZeroToAThousand) {
  manual_pool m;
  for (double hz : {0.0, -1.0, 1000.5, std::nan(""), std::numeric_limits<double>::infinity()}) {
    auto r = m.pool.add(std::make_shared<probe>("bad"), hz);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.code(), pool_errc::invalid_rate);
    EXPECT_NE(r.error().message.find("'bad'"), std::string::npos) << r.error().message;
  }
  EXPECT_TRUE(m.pool.add(std::make_shared<probe>("fast"), 1000.0));
}

TEST(ProcessorPool, RejectsAddingAServiceTwice) {
  manual_pool m, other;
  auto s = std::make_shared<probe>("twice");
  ASSERT_TRUE(m.pool.add(s, 10));
  auto again = m.pool.add(s, 10);
  EXPECT_EQ(again.code(), pool_errc::already_added);
  EXPECT_NE(again.error().message.find("twice"), std::string::npos);
  EXPECT_EQ(other.pool.add(s, 10).code(), pool_errc::already_added);
  EXPECT_EQ(s->actives, 1);
}

TEST(ProcessorPool, RejectsRemovingAnUnknownService) {
  manual_pool m, other;
  probe stranger("stranger");
  auto r = m.pool.remove(stranger);
  EXPECT_EQ(r.code(), pool_errc::not_found);
  EXPECT_NE(r.error().message.find("stranger"), std::string::npos);
  auto s = std::make_shared<probe>("elsewhere");
  ASSERT_TRUE(other.pool.add(s, 10));
  EXPECT_EQ(m.pool.remove(*s).code(), pool_errc::not_found);
  ASSERT_TRUE(other.pool.remove(*s));
  EXPECT_EQ(other.pool.remove(*s).code(), pool_errc::not_found);  // removal under way
}

TEST(ProcessorPool, RejectsStartingTwiceAndAfterStop) {
  manual_pool m;
  ASSERT_TRUE(m.pool.start());
  EXPECT_EQ(m.pool.start().code(), pool_errc::already_started);
  ASSERT_TRUE(m.pool.stop());
  EXPECT_TRUE(m.pool.stop());  // idempotent
  EXPECT_EQ(m.pool.start().code(), pool_errc::stopped);
}

TEST(ProcessorPool, RejectsAddingAfterStop) {
  manual_pool m;
  ASSERT_TRUE(m.pool.stop());
  auto s = std::make_shared<probe>("late");
  auto r = m.pool.add(s, 10);
  EXPECT_EQ(r.code(), pool_errc::stopped);
  EXPECT_EQ(s->inits, 0);
  EXPECT_TRUE(m.pool.add(s, 10).code() == pool_errc::stopped);
}

TEST(ProcessorPool, RejectsZeroWorkers) {
  pool_options o;
  o.workers = 0;
  processor_pool pool(o);
  auto r = pool.start();
  EXPECT_EQ(r.code(), pool_errc::invalid_options);
  EXPECT_NE(r.error().message.find("workers"), std::string::npos);
}

TEST(ProcessorPool, ReportsAThrowingActivationAsAnError) {
  struct bad_init final : service {
    bad_init() : service("bad_init") {}
    void on_init() override { throw std::runtime_error("no map"); }
    void on_tick(const tick_context&) override {}
  };
  manual_pool m;
  auto s = std::make_shared<bad_init>();
  EXPECT_EQ(m.pool.add(s, 10).code(), pool_errc::activation_failed);
  EXPECT_EQ(m.pool.metrics().services, 0u);
}

TEST(ProcessorPool, HoldsAFixedRateWithoutDriftOver10000Ticks) {
  manual_pool m;
  auto s = std::make_shared<probe>("steady60");
  std::int64_t base = ns_of(m.clk.now());
  ASSERT_TRUE(m.pool.add(s, 60.0));
  std::uint64_t seed = 12345;
  while (s->ticks.size() < 10000) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    m.pool.advance(std::chrono::microseconds(100 + (seed >> 33) % 20000));
  }
  for (std::size_t k = 0; k < 10000; ++k) {
    auto want = base + std::llround(static_cast<double>(k + 1) * 1e9 / 60.0);
    ASSERT_EQ(ns_of(s->ticks[k].now), want) << "tick " << k;
    ASSERT_EQ(s->ticks[k].index, k);
  }
  EXPECT_EQ(s->ticks[1].interval, nanoseconds(ns_of(s->ticks[1].now) - ns_of(s->ticks[0].now)));
  EXPECT_EQ(m.pool.metrics().overruns, 0u);
}

TEST(ProcessorPool, AnOverrunMakesOneLateTickAndNoBurst) {
  manual_pool m;
  std::int64_t base = ns_of(m.clk.now());
  auto s = std::make_shared<probe>("slow");
  s->fn_ = [&](const tick_context& c) {
    if (c.index == 2) m.clk.advance(350ms);  // the third tick runs 350 ms: three periods and a half
  };
  ASSERT_TRUE(m.pool.add(s, 10));
  m.pool.advance(1s);
  std::vector<std::int64_t> at;
  for (auto& t : s->ticks) at.push_back((ns_of(t.now) - base) / 1'000'000);
  // 300 ran until 650; 400 and 500 are skipped, 600 runs once, late, at 650; then the grid again.
  EXPECT_EQ(at, (std::vector<std::int64_t>{100, 200, 300, 650, 700, 800, 900, 1000}));
  auto pm = m.pool.metrics(true);
  EXPECT_EQ(pm.overruns, 1u);
  EXPECT_EQ(pm.per_service.at(0).overruns, 1u);
  EXPECT_EQ(pm.lateness.max, 50ms);
}

TEST(ProcessorPool, CatchesATickExceptionLogsItAndKeepsTicking) {
  manual_pool m;
  auto s = std::make_shared<probe>("flaky", [](const tick_context& c) {
    if (c.index % 2 == 0) throw std::runtime_error("broken pathing");
  });
  ASSERT_TRUE(m.pool.add(s, 10));
  m.pool.advance(1s);
  EXPECT_EQ(s->ticks.size(), 10u);
  EXPECT_EQ(m.pool.metrics().exceptions, 5u);
  EXPECT_TRUE(m.logged("flaky"));
  EXPECT_TRUE(m.logged("broken pathing"));
  EXPECT_FALSE(s->quarantined());
}

TEST(ProcessorPool, QuarantinesAfterKConsecutiveFailures) {
  manual_clock clk;
  pool_options o;
  o.manual = &clk;
  o.quarantine_after = 3;
  std::vector<std::string> logs;
  o.log = [&](log_level, std::string_view s) { logs.emplace_back(s); };
  processor_pool pool(o);
  auto s = std::make_shared<probe>("doomed", [](const tick_context&) { throw std::runtime_error("x"); });
  ASSERT_TRUE(pool.add(s, 10));
  pool.advance(2s);
  EXPECT_EQ(s->ticks.size(), 3u);  // no tick after the third failure
  auto pm = pool.metrics(true);
  EXPECT_EQ(pm.quarantined, 1u);
  EXPECT_TRUE(pm.per_service.at(0).quarantined);
  EXPECT_EQ(pm.exceptions, 3u);
  bool named = false;
  for (auto& l : logs)
    named |= l.find("doomed") != std::string::npos && l.find("quarantined") != std::string::npos;
  EXPECT_TRUE(named);
  ASSERT_TRUE(pool.stop());
  EXPECT_EQ(s->inactives, 1);
}

TEST(ProcessorPool, RunsDueTicksInDueTimeOrder) {
  std::vector<std::pair<std::int64_t, std::string>> seen;
  manual_pool m;
  std::vector<std::shared_ptr<probe>> all;
  for (double hz : {7.0, 33.0, 60.0, 250.0, 1000.0}) {
    auto s = std::make_shared<probe>(std::to_string(hz));
    s->fn_ = [&seen, s = s.get()](const tick_context& c) { seen.emplace_back(ns_of(c.now), s->name()); };
    all.push_back(s);
    ASSERT_TRUE(m.pool.add(s, hz));
  }
  m.pool.advance(1s);
  ASSERT_GT(seen.size(), 1000u);
  for (std::size_t i = 1; i < seen.size(); ++i) ASSERT_LE(seen[i - 1].first, seen[i].first) << i;
  EXPECT_EQ(all[4]->ticks.size(), 1000u);
  EXPECT_EQ(all[0]->ticks.size(), 7u);
}

TEST(ProcessorPool, AServiceCanRemoveItselfFromItsOwnTick) {
  std::vector<std::string> journal;  // outlives the pool, whose stop() still writes to it
  manual_pool m;
  auto s = std::make_shared<probe>("leaver");
  s->journal = &journal;
  s->fn_ = [&](const tick_context& c) {
    if (c.index == 2) {
      ASSERT_TRUE(m.pool.remove(*s, [&] { journal.push_back("removed"); }));
    }
  };
  ASSERT_TRUE(m.pool.add(s, 10));
  m.pool.advance(1s);
  EXPECT_EQ(journal, (std::vector<std::string>{"leaver:tick", "leaver:tick", "leaver:tick", "leaver:inactive",
                                               "removed"}));
  EXPECT_EQ(m.pool.metrics().services, 0u);
  EXPECT_TRUE(m.pool.add(s, 10));  // free to join again; re-activated, not re-initialised
  EXPECT_EQ(s->inits, 1);
  EXPECT_EQ(s->actives, 2);
}

// A removed service whose last reference the pool held is destroyed outside the pool's lock: its
// destructor may call the pool (here metrics(), which takes that lock).
TEST(ProcessorPool, DestroysAServiceItHeldLastOutsideItsLock) {
  struct asks_on_destruction final : service {
    explicit asks_on_destruction(processor_pool& p, std::size_t& seen)
        : service("asker"), pool(p), out(seen) {}
    ~asks_on_destruction() override { out = pool.metrics().services + 1; }
    void on_tick(const tick_context&) override {}
    processor_pool& pool;
    std::size_t& out;
  };
  manual_pool m;
  std::size_t seen = 0;
  auto s = std::make_shared<asks_on_destruction>(m.pool, seen);
  service& ref = *s;
  ASSERT_TRUE(m.pool.add(std::move(s), 10));
  ASSERT_TRUE(m.pool.remove(ref));
  m.pool.advance(0ns);
  EXPECT_EQ(seen, 1u);  // destroyed, and it saw the pool with no service left
}

TEST(ProcessorPool, StopCallsOnInactiveOfEveryActiveServiceExactlyOnce) {
  manual_pool m;
  std::vector<std::shared_ptr<probe>> all;
  for (int i = 0; i < 5; ++i) {
    all.push_back(std::make_shared<probe>("s" + std::to_string(i)));
    ASSERT_TRUE(m.pool.add(all.back(), 10));
  }
  ASSERT_TRUE(m.pool.start());
  m.pool.advance(300ms);
  bool removed = false, pending = false;
  ASSERT_TRUE(m.pool.remove(*all[0], [&] { removed = true; }));
  m.pool.advance(0ns);
  ASSERT_TRUE(m.pool.remove(*all[1], [&] { pending = true; }));  // not applied before stop
  ASSERT_TRUE(m.pool.stop());
  ASSERT_TRUE(m.pool.stop());
  for (auto& s : all) EXPECT_EQ(s->inactives, 1) << s->name();
  EXPECT_TRUE(removed);
  EXPECT_TRUE(pending);
  auto ticks = all[2]->ticks.size();
  m.pool.advance(1s);
  EXPECT_EQ(all[2]->ticks.size(), ticks);
}

TEST(ProcessorPool, AMessageToAServiceBeingRemovedIsRunOrReportedDropped) {
  manual_pool m;
  auto s = std::make_shared<probe>("closing");
  ASSERT_TRUE(m.pool.add(s, 10));
  m.pool.advance(150ms);
  int ran = 0;
  ASSERT_TRUE(m.pool.remove(*s));
  EXPECT_TRUE(s->post([&] { ++ran; }));  // removal not applied yet: runs in the final drain
  m.pool.advance(0ns);
  EXPECT_EQ(ran, 1);
  EXPECT_FALSE(s->post([&] { ++ran; }));  // removed: reported, and counted
  EXPECT_EQ(s->dropped_messages(), 1u);
  EXPECT_EQ(ran, 1);
}

TEST(ProcessorPool, RunsMessagesOnTheServiceThreadBeforeItsTick) {
  std::vector<std::string> journal;  // outlives the pool, whose stop() still writes to it
  manual_pool m;
  auto s = std::make_shared<probe>("inbox");
  s->journal = &journal;
  ASSERT_TRUE(m.pool.add(s, 10));
  ASSERT_TRUE(s->post([&] { journal.push_back("message"); }));
  EXPECT_EQ(m.pool.metrics().mailbox_depth, 1u);
  m.pool.advance(100ms);
  EXPECT_EQ(journal, (std::vector<std::string>{"message", "inbox:tick"}));
}

TEST(ProcessorPool, MetricsCountEachServiceOnceWhileOthersComeAndGo) {
  // metrics() walks the services a slice at a time and lets go of the pool's lock in between.
  // Steady services, each with one queued message, sit between passing ones that leave and come
  // back meanwhile: every walk counts each steady service exactly once.
  manual_pool m;
  std::vector<std::shared_ptr<probe>> steady, passing;
  for (int i = 0; i < 10'000; ++i) {  // a few slices
    steady.push_back(std::make_shared<probe>("steady"));
    ASSERT_TRUE(m.pool.add(steady.back(), 10));
    ASSERT_TRUE(steady.back()->post([] {}));
    passing.push_back(std::make_shared<probe>("passing"));
    ASSERT_TRUE(m.pool.add(passing.back(), 10));
  }
  m.pool.advance(0ns);
  std::atomic<bool> done{false};
  std::atomic<int> rounds{0};
  std::thread churn([&] {
    for (std::size_t next = 0; !done.load(); next = (next + 97) % passing.size()) {
      for (std::size_t i = next; i < next + 97 && i < passing.size(); ++i)
        EXPECT_TRUE(m.pool.remove(*passing[i]));
      m.pool.advance(0ns);  // the removals complete: their entries leave the walk's list
      for (std::size_t i = next; i < next + 97 && i < passing.size(); ++i)
        EXPECT_TRUE(m.pool.add(passing[i], 10));
      m.pool.advance(0ns);
      ++rounds;
    }
  });
  for (int walk = 0; walk < 50 || rounds.load() < 100; ++walk) {
    auto pm = m.pool.metrics(walk % 10 == 0);
    ASSERT_EQ(pm.mailbox_depth, 10'000u) << "walk " << walk;
    if (walk % 10 == 0) {
      auto n = std::count_if(pm.per_service.begin(), pm.per_service.end(),
                             [](const service_metrics& r) { return r.name == "steady"; });
      ASSERT_EQ(n, 10'000) << "walk " << walk;
    }
  }
  done = true;
  churn.join();
  EXPECT_EQ(m.pool.metrics().services, 20'000u);
}

TEST(ProcessorPool, CountsAndNamesAStalledTick) {
  manual_clock clk;
  pool_options o;
  o.manual = &clk;
  o.stall_threshold = 500ms;
  std::vector<std::string> logs;
  o.log = [&](log_level, std::string_view s) { logs.emplace_back(s); };
  processor_pool pool(o);
  auto s = std::make_shared<probe>("stuck", [&](const tick_context& c) {
    if (c.index == 1) clk.advance(2s);
  });
  ASSERT_TRUE(pool.add(s, 10));
  pool.advance(500ms);
  auto pm = pool.metrics(true);
  EXPECT_EQ(pm.stalls, 1u);
  EXPECT_EQ(pm.per_service.at(0).stalls, 1u);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_NE(logs[0].find("stuck"), std::string::npos);
}

TEST(ProcessorPool, ReportsTicksLatenessAndPerServiceRows) {
  manual_pool m;
  auto a = std::make_shared<probe>("a"), b = std::make_shared<probe>("b");
  ASSERT_TRUE(m.pool.add(a, 10));
  ASSERT_TRUE(m.pool.add(b, 20));
  m.pool.advance(1s);
  auto pm = m.pool.metrics(true);
  EXPECT_EQ(pm.services, 2u);
  EXPECT_EQ(pm.ticks, 30u);
  EXPECT_EQ(pm.tick_duration.count, 30u);
  EXPECT_EQ(pm.lateness.max, 0ns);
  ASSERT_EQ(pm.per_service.size(), 2u);
  std::uint64_t sum = 0;
  for (auto& r : pm.per_service) sum += r.ticks;
  EXPECT_EQ(sum, 30u);
  EXPECT_TRUE(pm.stalled_now.empty());
  EXPECT_EQ(pm.tick_duration.counts.size(), pm.tick_duration.upper_bounds.size() + 1);
}

TEST(ProcessorPool, TellsEachTickItsIntervalAndIndex) {
  manual_pool m;
  auto s = std::make_shared<probe>("ctx");
  ASSERT_TRUE(m.pool.add(s, 4));
  m.pool.advance(1s);
  ASSERT_EQ(s->ticks.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s->ticks[i].interval, 250ms);
    EXPECT_EQ(s->ticks[i].index, i);
  }
}

}  // namespace
}  // namespace scenert
