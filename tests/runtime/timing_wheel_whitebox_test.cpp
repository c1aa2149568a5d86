// The timing wheel against a brute-force oracle on random traces (reaches into runtime/src).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "histogram.hpp"
#include "pool_entry.hpp"  // cohort, the items it schedules
#include "timing_wheel.hpp"

namespace scenert::detail {
namespace {

TEST(TimingWheel, ExpiresExactlyTheDueItemsOfEachSlotOnRandomTraces) {
  for (unsigned seed = 1; seed <= 3; ++seed) {
    std::mt19937_64 rng(seed);
    const std::int64_t start = 3'600'000'000'000;
    timing_wheel wheel(start);
    std::vector<std::unique_ptr<cohort>> pool;
    std::map<cohort*, std::int64_t> live;  // oracle: every item in the wheel, with its due time
    auto add = [&](std::int64_t now) {
      pool.push_back(std::make_unique<cohort>());
      auto* c = pool.back().get();
      // Mostly within a revolution; some several revolutions out; some already late.
      std::int64_t span = rng() % 4 == 0 ? 3 * timing_wheel::slots * slot_ns : 200 * slot_ns;
      std::int64_t due =
          now - 2 * slot_ns + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(span));
      wheel.insert(due, c);
      live[c] = due;
    };
    for (int i = 0; i < 1000; ++i) add(start);
    for (int step = 0; step < 9000; ++step) {
      std::int64_t slot_time = wheel.cursor_ns();
      std::vector<cohort*> got;
      wheel.take_due(slot_time, [&](const timing_wheel::item& it) {
        ASSERT_EQ(it.due, live[it.c]);
        got.push_back(it.c);
      });
      std::vector<cohort*> want;
      for (auto [c, due] : live)
        if (due <= slot_time) want.push_back(c);
      std::sort(got.begin(), got.end());
      ASSERT_EQ(got, want) << "seed " << seed << " step " << step;
      for (auto* c : got) live.erase(c);
      wheel.step();
      if (rng() % 3 == 0) add(wheel.cursor_ns());
      if (rng() % 7 == 0 && !live.empty()) {  // unlink one at random
        auto it = live.begin();
        std::advance(it, static_cast<long>(rng() % live.size()));
        wheel.unlink(it->second, it->first);
        live.erase(it);
      }
      ASSERT_EQ(wheel.size(), live.size());
    }
  }
}

// 10,000 items at 10 Hz spread over the period, run through three revolutions of the wheel
// (about 12 s): the storage follows the items held, not the slots ever used.
TEST(TimingWheel, HoldsStorageForAboutTheItemsItHolds) {
  const std::int64_t period = 100 * slot_ns, n = 10'000;
  timing_wheel wheel(0);
  cohort c;
  for (std::int64_t i = 0; i < n; ++i) wheel.insert(slot_ns + i * period / n, &c);
  std::vector<timing_wheel::item> due;
  for (std::int64_t step = 0; step < 3 * timing_wheel::slots; ++step) {
    wheel.take_due(wheel.cursor_ns(), [&](const timing_wheel::item& it) { due.push_back(it); });
    wheel.step();
    for (auto& it : due) wheel.insert(it.due + period, it.c);
    due.clear();
  }
  EXPECT_EQ(wheel.size(), static_cast<std::size_t>(n));
  EXPECT_LT(wheel.reserved(), static_cast<std::size_t>(3 * n)) << "a vector per slot would hold about 41 x n";
}

// Services added in one slot at one rate share a cohort's due times, but each keeps its own
// next grid index: a member that overran skips the points it missed, the others keep theirs.
TEST(Cohort, FindsTheLastGridIndexByATimeOnExactAndInexactRates) {
  for (double hz : {10.0, 3.0, 60.0, 1000.0, 0.5}) {
    cohort c;
    c.set_grid(hz, 7 * slot_ns);
    for (std::int64_t from = 1; from < 50; from += 7) {
      for (std::int64_t t = c.due_of(from); t < c.due_of(from + 40); t += c.period_ns() / 3 + 1) {
        std::int64_t k = c.last_index_by(t, from);
        ASSERT_LE(c.due_of(k), t) << hz;
        ASSERT_GT(c.due_of(k + 1), t) << hz;
      }
    }
  }
}

TEST(CompactHistogram, KeepsTheMaximumWithinATenthOfAPercentAndNeverBelow) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 2000; ++round) {
    compact_histogram h;
    std::int64_t top = 0;
    for (int i = 0; i < 50; ++i) {
      auto v = static_cast<std::int64_t>(rng() >> (rng() % 60));  // every magnitude
      top = std::max(top, v);
      h.record(v);
    }
    ASSERT_GE(h.max(), top);
    ASSERT_LE(static_cast<double>(h.max()), static_cast<double>(top) * 1.001 + 1);
  }
}

TEST(CompactHistogram, HalvingKeepsRareSlowTicksAndTheQuantiles) {
  compact_histogram h;
  h.record(3'000'000);  // one slow tick: bucket [2 ms, 4 ms)
  for (int i = 0; i < 100'000; ++i) h.record(i % 100 < 98 ? 1'500 : 40'000);
  EXPECT_EQ(h.quantile(0.5), 2'048);          // the bucket [1 us, 2 us)
  EXPECT_EQ(h.quantile(0.99), 65'536);        // [32 us, 64 us): 2% of the ticks
  EXPECT_GE(h.quantile(0.99999), 3'000'000);  // still there after hundreds of halvings
  EXPECT_GE(h.max(), 3'000'000);
}

TEST(LogHistogram, BucketsBoundValuesAndQuantilesStayWithinABucket) {
  fine_histogram h;
  std::mt19937_64 rng(7);
  std::vector<std::int64_t> values;
  for (int i = 0; i < 20000; ++i) {
    auto v = static_cast<std::int64_t>(rng() % 10'000'000);
    values.push_back(v);
    h.record(v);
    unsigned b = fine_histogram::index(v);
    if (b + 1 < fine_histogram::bucket_count) {
      ASSERT_LT(v, fine_histogram::upper_bound(b));
    }
    if (b > 0) {
      ASSERT_GE(v, fine_histogram::upper_bound(b - 1));
    }
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.5, 0.99}) {
    auto exact = values[nearest_rank(q, values.size()) - 1];  // the ceil(q*n)-th smallest
    auto est = h.quantile(q);
    EXPECT_GE(est, exact);
    EXPECT_LE(static_cast<double>(est), static_cast<double>(exact) * 1.26);  // 4 buckets per octave
  }
  EXPECT_EQ(h.max(), values.back());
}

}  // namespace
}  // namespace scenert::detail
