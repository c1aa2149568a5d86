// The timing wheel against a brute-force oracle on random traces (reaches into runtime/src).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "histogram.hpp"
#include "pool_entry.hpp"

namespace scenert::detail {
namespace {

TEST(TimingWheel, ExpiresExactlyTheDueEntriesOfEachSlotOnRandomTraces) {
  for (unsigned seed = 1; seed <= 3; ++seed) {
    std::mt19937_64 rng(seed);
    const std::int64_t start = 3'600'000'000'000;
    timing_wheel wheel(start);
    std::vector<std::unique_ptr<pool_entry>> pool;
    std::set<pool_entry*> live;  // oracle: every entry in the wheel, with its due time
    auto add = [&](std::int64_t now) {
      pool.push_back(std::make_unique<pool_entry>());
      auto* e = pool.back().get();
      // Mostly within a revolution; some several revolutions out; some already late.
      std::int64_t span = rng() % 4 == 0 ? 3 * timing_wheel::slots * slot_ns : 200 * slot_ns;
      e->due_ns = now - 2 * slot_ns + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(span));
      wheel.insert(e);
      live.insert(e);
    };
    for (int i = 0; i < 1000; ++i) add(start);
    for (int step = 0; step < 9000; ++step) {
      std::int64_t slot_time = wheel.cursor_ns();
      std::vector<pool_entry*> got;
      wheel.take_due(slot_time, [&](const scenert::detail::ticket& t) {
        ASSERT_EQ(t.due, t.e->due_ns);
        got.push_back(t.e);
      });
      std::vector<pool_entry*> want;
      for (auto* e : live)
        if (e->due_ns <= slot_time) want.push_back(e);
      std::sort(got.begin(), got.end());
      std::sort(want.begin(), want.end());
      ASSERT_EQ(got, want) << "seed " << seed << " step " << step;
      for (auto* e : got) live.erase(e);
      wheel.step();
      if (rng() % 3 == 0) add(wheel.cursor_ns());
      if (rng() % 7 == 0 && !live.empty()) {  // unlink one at random
        auto it = live.begin();
        std::advance(it, static_cast<long>(rng() % live.size()));
        wheel.unlink(*it);
        live.erase(it);
      }
      ASSERT_EQ(wheel.size(), live.size());
    }
  }
}

// A batch whose next due times share a slot goes back whole, also when that slot is overdue
// (it then runs at the next expiry) and next to tickets inserted one by one.
TEST(TimingWheel, InsertsABatchOfOneSlotWhole) {
  const std::int64_t start = 5 * slot_ns;
  timing_wheel wheel(start);
  std::vector<pool_entry> entries(4);
  std::vector<ticket> batch;
  for (std::uint32_t i = 0; i < 3; ++i)
    batch.push_back({&entries[i], nullptr, 7 * slot_ns - static_cast<std::int64_t>(i) * 1000, i, false});
  wheel.insert_same_slot(batch);
  wheel.insert(ticket{&entries[3], nullptr, 7 * slot_ns, 3, false});
  ASSERT_EQ(wheel.size(), 4u);
  std::vector<std::uint32_t> got;
  for (int step = 0; step < 3; ++step, wheel.step())
    wheel.take_due(wheel.cursor_ns(), [&](const ticket& t) {
      EXPECT_EQ(wheel.cursor_ns(), 7 * slot_ns) << "ticket " << t.id;
      got.push_back(t.id);
    });
  EXPECT_EQ(got, (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(wheel.size(), 0u);

  for (auto& t : batch) t.due = 2 * slot_ns;  // overdue: lands in the cursor's slot
  wheel.insert_same_slot(batch);
  std::size_t n = wheel.take_due(wheel.cursor_ns(), [](const ticket&) {});
  EXPECT_EQ(n, 3u);
}

// 10,000 entries at 10 Hz spread over the period, run through three revolutions of the wheel
// (about 12 s): the storage follows the tickets held, not the slots ever used.
TEST(TimingWheel, HoldsStorageForAboutTheTicketsItHolds) {
  const std::int64_t period = 100 * slot_ns, n = 10'000;
  timing_wheel wheel(0);
  std::vector<pool_entry> entries(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    wheel.insert(ticket{&entries[static_cast<std::size_t>(i)], nullptr, slot_ns + i * period / n,
                        static_cast<std::uint32_t>(i), false});
  std::vector<ticket> due;
  for (std::int64_t step = 0; step < 3 * timing_wheel::slots; ++step) {
    wheel.take_due(wheel.cursor_ns(), [&](const ticket& t) { due.push_back(t); });
    wheel.step();
    for (auto& t : due) t.due += period;
    wheel.insert_same_slot(due);
    due.clear();
  }
  EXPECT_EQ(wheel.size(), static_cast<std::size_t>(n));
  EXPECT_LT(wheel.reserved(), static_cast<std::size_t>(3 * n)) << "a vector per slot would hold about 41 x n";
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
    auto exact = values[static_cast<std::size_t>(q * static_cast<double>(values.size()))];
    auto est = h.quantile(q);
    EXPECT_GE(est, exact);
    EXPECT_LE(static_cast<double>(est), static_cast<double>(exact) * 1.26);  // 4 buckets per octave
  }
  EXPECT_EQ(h.max(), values.back());
}

}  // namespace
}  // namespace scenert::detail
