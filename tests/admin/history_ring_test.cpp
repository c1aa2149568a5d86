// The dashboard's history: per-interval p99s from cumulative histograms, and a ring of samples.
#include <scenert/admin/history_ring.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <random>

namespace scenert::admin {
namespace {

using std::chrono::nanoseconds;
using namespace std::chrono_literals;

// A cumulative histogram over `bounds`, as the pool keeps one.
struct histogram {
  std::vector<nanoseconds> bounds;
  histogram_snapshot snap;
  explicit histogram(std::vector<nanoseconds> b) : bounds(std::move(b)) {
    snap.upper_bounds = bounds;
    snap.counts.assign(bounds.size() + 1, 0);
  }
  void add(nanoseconds v) {
    const auto i =
        static_cast<std::size_t>(std::lower_bound(bounds.begin(), bounds.end(), v) - bounds.begin());
    ++snap.counts[i];
    ++snap.count;
    snap.max = std::max(snap.max, v);
  }
};

// What a bucketed p99 of exactly these values is: the bound of the bucket holding the value of rank
// ceil(0.99 n), or the max past the last bound.
nanoseconds oracle(std::vector<nanoseconds> values, const std::vector<nanoseconds>& bounds, nanoseconds max) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const nanoseconds v = values[(values.size() * 99 + 99) / 100 - 1];
  auto it = std::lower_bound(bounds.begin(), bounds.end(), v);
  return it == bounds.end() ? max : *it;
}

TEST(HistoryRing, AnIntervalsP99IsThatOfItsOwnValuesOnRandomTraces) {
  const std::vector<nanoseconds> bounds{100us, 250us, 500us, 1ms, 2500us, 5ms, 10ms, 25ms};
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    histogram h(bounds);
    std::uniform_int_distribution<std::int64_t> fast(1'000, 900'000), slow(1'000, 40'000'000);
    const int old = static_cast<int>(rng() % 500), recent = static_cast<int>(rng() % 300);
    for (int i = 0; i < old; ++i) h.add(nanoseconds(slow(rng)));
    const histogram_snapshot before = h.snap;
    std::vector<nanoseconds> interval;
    for (int i = 0; i < recent; ++i) {
      interval.push_back(nanoseconds(trial % 2 ? fast(rng) : slow(rng)));
      h.add(interval.back());
    }
    EXPECT_EQ(interval_p99(h.snap, before), oracle(interval, bounds, h.snap.max)) << "trial " << trial;
  }
}

TEST(HistoryRing, AQuietSecondAfterASlowOneShowsNoTail) {
  histogram h({1ms, 10ms});
  for (int i = 0; i < 50; ++i) h.add(8ms);
  const auto slow = h.snap;
  for (int i = 0; i < 100; ++i) h.add(500us);
  EXPECT_EQ(interval_p99(h.snap, slow), 1ms) << "the whole run's p99 would say 10 ms";
  EXPECT_EQ(interval_p99(h.snap, h.snap), 0ns) << "no tick in the interval";
}

TEST(HistoryRing, KeepsTheLastSamplesOldestFirstWithRates) {
  history_ring ring(3);
  histogram ticks({1ms, 10ms}), late({1ms, 10ms});
  pool_metrics pool;
  auto record = [&](std::int64_t t_ms, std::uint64_t players, std::uint64_t requests) {
    pool.tick_duration = ticks.snap;
    pool.lateness = late.snap;
    ring.record(t_ms, players, players / 2, requests, pool);
  };
  record(1000, 0, 0);  // the first look only sets the baseline
  EXPECT_EQ(ring.size(), 0U);
  for (int s = 2; s <= 6; ++s) {
    ticks.add(s == 6 ? 5ms : 200us);
    record(s * 1000, static_cast<std::uint64_t>(s * 10), static_cast<std::uint64_t>(s * s * 100));
  }
  EXPECT_EQ(ring.size(), 3U);
  const auto j = nlohmann::json::parse(ring.json());
  EXPECT_EQ(j["interval_ms"], 1000);
  EXPECT_EQ(j["capacity"], 3);
  ASSERT_EQ(j["samples"].size(), 3U);
  EXPECT_EQ(j["samples"][0]["t_ms"], 4000);
  EXPECT_EQ(j["samples"][2]["t_ms"], 6000);
  EXPECT_EQ(j["samples"][2]["players"], 60);
  EXPECT_EQ(j["samples"][2]["connections"], 30);
  EXPECT_DOUBLE_EQ(j["samples"][2]["requests_per_s"].get<double>(), 3600.0 - 2500.0);
  EXPECT_DOUBLE_EQ(j["samples"][1]["tick_p99_ms"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["samples"][2]["tick_p99_ms"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(j["samples"][2]["lateness_p99_ms"].get<double>(), 0.0);
  EXPECT_EQ(j["samples"][2]["admitting"], true) << "without a front: the default headroom";
}

TEST(HistoryRing, KeepsTheFrontsHeadroomAndTheRateOfLoginsRefused) {
  history_ring ring;
  pool_metrics pool;
  ring.record(1000, 0, 0, 0, pool, {0.2, 0, true, "none", 10});
  ring.record(3000, 0, 0, 0, pool, {0.9, 8, false, "io_busy", 30, 12.5});
  const auto j = nlohmann::json::parse(ring.json());
  ASSERT_EQ(j["samples"].size(), 1U);
  const auto& s = j["samples"][0];
  EXPECT_DOUBLE_EQ(s["io_busy"].get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(s["write_queue_kib"].get<double>(), 8.0);
  EXPECT_EQ(s["admitting"], false);
  EXPECT_EQ(s["over"], "io_busy");
  EXPECT_DOUBLE_EQ(s["io_lag_ms"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(s["busy_refused_per_s"].get<double>(), 10.0);
}

}  // namespace
}  // namespace scenert::admin
