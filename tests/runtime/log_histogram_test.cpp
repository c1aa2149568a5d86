// scenert's one histogram at the bots' resolution (64 buckets per power of two): quantiles against
// the exact nearest-rank answer on random data, merging, the edges.
#include <scenert/runtime/log_histogram.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace scenert {
namespace {

using latency_histogram = log_histogram<6, 6, 62, std::uint64_t>;

using std::chrono::nanoseconds;

// The exact answer the histogram approximates: the ceil(q*n)-th smallest value.
std::int64_t oracle(const std::vector<std::int64_t>& sorted, double q) {
  const auto n = sorted.size();
  const auto rank =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(q * static_cast<double>(n))), 1, n);
  return sorted[rank - 1];
}

template <class Draw>
std::vector<std::int64_t> sample(std::uint64_t seed, std::size_t n, Draw draw) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> values(n);
  for (auto& v : values) v = std::max<std::int64_t>(0, static_cast<std::int64_t>(draw(rng)));
  return values;
}

void expect_close_to_oracle(std::vector<std::int64_t> values) {
  latency_histogram h;
  for (auto v : values) h.record(nanoseconds(v));
  std::sort(values.begin(), values.end());
  ASSERT_EQ(h.total(), values.size());
  EXPECT_EQ(h.max(), values.back());
  for (double q : {0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999, 1.0}) {
    const auto want = static_cast<double>(oracle(values, q));
    const auto got = static_cast<double>(h.quantile(q));
    EXPECT_GE(got, want) << "q " << q;  // the bucket's upper bound never undershoots
    // Within 1/64 of the value above 64 ns; below it, one bucket answers 64 ns (or the maximum).
    EXPECT_LE(got, std::max(want + want / 64, 64.0)) << "q " << q << " want " << want << " got " << got;
  }
}

TEST(LogHistogram, QuantilesOfUniformDataAreWithinOneSixtyFourth) {
  std::uniform_int_distribution<std::int64_t> d(0, 50'000'000);
  expect_close_to_oracle(sample(1, 100'000, d));
}

TEST(LogHistogram, QuantilesOfLogNormalDataAreWithinOneSixtyFourth) {
  std::lognormal_distribution<double> d(std::log(2e6), 1.5);  // around 2 ms, a long tail
  expect_close_to_oracle(sample(2, 100'000, d));
}

TEST(LogHistogram, QuantilesOfExponentialDataAreWithinOneSixtyFourth) {
  std::exponential_distribution<double> d(1.0 / 300'000);
  expect_close_to_oracle(sample(3, 50'000, d));
}

TEST(LogHistogram, QuantilesOfSmallAndBimodalDataAreWithinOneSixtyFourth) {
  std::uniform_int_distribution<std::int64_t> tiny(0, 200);  // mostly exact buckets
  expect_close_to_oracle(sample(4, 10'000, tiny));
  std::bernoulli_distribution slow(0.02);
  std::normal_distribution<double> fast(1e5, 1e4), stall(5e8, 1e8);
  expect_close_to_oracle(sample(5, 50'000, [&](auto& rng) { return slow(rng) ? stall(rng) : fast(rng); }));
}

TEST(LogHistogram, ValuesBelowSixtyFourNanosecondsShareOneBucket) {
  for (std::int64_t v = 0; v < 64; ++v) {
    latency_histogram h;
    h.record(nanoseconds(v));
    h.record(nanoseconds(1000));
    EXPECT_EQ(h.quantile(0.5), 64);  // the bucket's bound: no finer below 64 ns
    h = latency_histogram{};
    h.record(nanoseconds(v));
    EXPECT_EQ(h.quantile(0.5), v);  // never above the maximum
  }
}

TEST(LogHistogram, ExtremeValuesStayInRange) {
  latency_histogram h;
  h.record(nanoseconds(-5));  // a clock that stepped back counts as zero
  h.record(nanoseconds(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(h.total(), 2u);
  EXPECT_EQ(h.quantile(0), 64);  // the zero's bucket
  EXPECT_EQ(h.quantile(1), std::numeric_limits<std::int64_t>::max());
}

TEST(LogHistogram, MergeEqualsRecordingEverythingIntoOne) {
  const auto values = sample(6, 30'000, std::lognormal_distribution<double>(12, 2));
  latency_histogram all, parts[3];
  for (std::size_t i = 0; i < values.size(); ++i) {
    all.record(nanoseconds(values[i]));
    parts[i % 3].record(nanoseconds(values[i]));
  }
  latency_histogram merged;
  for (const auto& p : parts) merged.merge(p);
  EXPECT_EQ(merged.total(), all.total());
  EXPECT_EQ(merged.max(), all.max());
  for (double q = 0; q <= 1.0; q += 0.01) EXPECT_EQ(merged.quantile(q), all.quantile(q)) << q;
}

TEST(LogHistogram, EmptyAnswersZero) {
  const latency_histogram h;
  EXPECT_EQ(h.total(), 0u);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.quantile(0.5), 0);
  EXPECT_EQ(h.quantile(1), 0);
}

TEST(LogHistogram, QuantileIsClampedToTheExactMax) {
  latency_histogram h;
  h.record(nanoseconds(1'000'001));  // its bucket's upper bound lies above it
  EXPECT_EQ(h.max(), 1'000'001);
  EXPECT_EQ(h.quantile(0.99), 1'000'001);
}

}  // namespace
}  // namespace scenert
