// Services of one rate added together share a cohort (one due time, one wheel item), yet each
// keeps the pool's guarantees of its own: order, removal, quarantine, overruns, fresh metrics.
#include <scenert/runtime/processor_pool.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "pool_test_support.hpp"

namespace scenert {
namespace {

using namespace std::chrono_literals;
using namespace testing;  // scenert::testing: the probe service and the manual pool

// More than one cohort holds (128), added at one instant: each tick of the period runs them all,
// in the order they were added; removing some leaves the others' order and grid alone.
TEST(PoolCohorts, ServicesAddedTogetherTickTogetherInTheOrderAdded) {
  std::vector<std::string> journal;  // outlives the pool, whose stop() still writes to it
  manual_pool m;
  std::vector<std::shared_ptr<probe>> all;
  for (int i = 0; i < 300; ++i) {
    all.push_back(std::make_shared<probe>("s" + std::to_string(i)));
    all.back()->journal = &journal;
    ASSERT_TRUE(m.pool.add(all.back(), 10));
  }
  m.pool.advance(100ms);
  ASSERT_EQ(journal.size(), 300u);
  for (int i = 0; i < 300; ++i)
    ASSERT_EQ(journal[static_cast<std::size_t>(i)], "s" + std::to_string(i) + ":tick");
  for (int i = 0; i < 300; i += 3) ASSERT_TRUE(m.pool.remove(*all[static_cast<std::size_t>(i)]));
  journal.clear();
  m.pool.advance(100ms);
  std::vector<std::string> want;
  for (int i = 0; i < 300; i += 3) want.push_back("s" + std::to_string(i) + ":inactive");
  for (int i = 0; i < 300; ++i)
    if (i % 3 != 0) want.push_back("s" + std::to_string(i) + ":tick");
  EXPECT_EQ(journal, want);
  EXPECT_EQ(ns_of(all[299]->ticks.back().now) - ns_of(all[299]->ticks.front().now), 100'000'000);
  EXPECT_EQ(m.pool.metrics().services, 200u);
}

TEST(PoolCohorts, AQuarantinedMemberLeavesTheOthersTicking) {
  manual_clock clk;
  pool_options o;
  o.manual = &clk;
  o.quarantine_after = 2;
  o.log = [](log_level, std::string_view) {};
  processor_pool pool(o);
  auto a = std::make_shared<probe>("a"), bad = std::make_shared<probe>("bad"),
       c = std::make_shared<probe>("c");
  bad->fn_ = [](const tick_context&) { throw std::runtime_error("x"); };
  for (auto& s : {a, bad, c}) ASSERT_TRUE(pool.add(s, 10));
  pool.advance(1s);
  EXPECT_EQ(a->ticks.size(), 10u);
  EXPECT_EQ(bad->ticks.size(), 2u);
  EXPECT_EQ(c->ticks.size(), 10u);
  EXPECT_EQ(pool.metrics().quarantined, 1u);
  ASSERT_TRUE(pool.remove(*a));
  ASSERT_TRUE(pool.remove(*c));
  pool.advance(1s);  // only a quarantined member is left: nothing ticks
  EXPECT_EQ(bad->ticks.size(), 2u);
  ASSERT_TRUE(pool.stop());
  EXPECT_EQ(bad->inactives, 1);
}

// b's third tick runs 350 ms. b skips the grid points it missed and runs the last one late, once.
// a, added with b, runs its next tick late too (the clock moved on) but only once: that late tick
// covers the points it missed, and it counts as no overrun of a's.
TEST(PoolCohorts, AMemberThatOverranSkipsWhatItMissedAndItsMateTicksLateOnce) {
  manual_pool m;
  std::int64_t base = ns_of(m.clk.now());
  auto a = std::make_shared<probe>("a"), b = std::make_shared<probe>("b");
  b->fn_ = [&](const tick_context& c) {
    if (c.index == 2) m.clk.advance(350ms);
  };
  ASSERT_TRUE(m.pool.add(a, 10));
  ASSERT_TRUE(m.pool.add(b, 10));
  m.pool.advance(1s);
  auto ms = [&](const probe& p) {
    std::vector<std::int64_t> at;
    for (auto& t : p.ticks) at.push_back((ns_of(t.now) - base) / 1'000'000);
    return at;
  };
  EXPECT_EQ(ms(*b), (std::vector<std::int64_t>{100, 200, 300, 650, 700, 800, 900, 1000}));
  EXPECT_EQ(ms(*a), (std::vector<std::int64_t>{100, 200, 300, 650, 700, 800, 900, 1000}));
  auto pm = m.pool.metrics(true);
  EXPECT_EQ(pm.overruns, 1u);
  EXPECT_EQ(pm.per_service.at(0).overruns + pm.per_service.at(1).overruns, 1u);
}

// Members come and go; a record is reused only once its entry is gone, so every service's
// metrics are its own from its first tick.
TEST(PoolCohorts, ChurnReusesCohortsAndEachServiceSeesOnlyItsOwnTicks) {
  manual_pool m;
  std::vector<std::shared_ptr<probe>> live;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 40; ++i) {
      live.push_back(std::make_shared<probe>("r" + std::to_string(round)));
      ASSERT_TRUE(m.pool.add(live.back(), 20));
    }
    m.pool.advance(120ms);
    for (std::size_t i = 0; i + 20 < live.size(); ++i) ASSERT_TRUE(m.pool.remove(*live[i]));
    live.erase(live.begin(), live.end() - 20);
    m.pool.advance(0ms);
  }
  auto pm = m.pool.metrics(true);
  ASSERT_EQ(pm.per_service.size(), 20u);
  for (auto& row : pm.per_service) {
    auto it = std::find_if(live.begin(), live.end(), [&](auto& p) { return p->name() == row.name; });
    ASSERT_NE(it, live.end());
  }
  for (auto& p : live) EXPECT_EQ(p->ticks.size(), 2u);  // the last round's: 120 ms at 20 Hz
  for (auto& row : pm.per_service) EXPECT_EQ(row.ticks, 2u) << row.name;
}

}  // namespace
}  // namespace scenert
