#include <scenert/bots/latency_histogram.hpp>

#include <algorithm>
#include <bit>
#include <cmath>

namespace scenert::bots {

// Values below 64 ns have a bucket each; above, each power of two [2^e, 2^(e+1)) is split into 64
// buckets of width 2^(e-6), so a bucket's width is at most 1/64 of any value in it.
std::size_t latency_histogram::bucket_of(std::uint64_t ns) noexcept {
  constexpr std::uint64_t sub_count = std::uint64_t{1} << sub_bits;
  if (ns < sub_count) return static_cast<std::size_t>(ns);
  const int shift = static_cast<int>(std::bit_width(ns)) - 1 - sub_bits;
  return static_cast<std::size_t>((shift + 1) * sub_count + ((ns >> shift) - sub_count));
}

std::uint64_t latency_histogram::upper_bound_of(std::size_t bucket) noexcept {
  constexpr std::uint64_t sub_count = std::uint64_t{1} << sub_bits;
  if (bucket < sub_count) return bucket;
  const auto shift = bucket / sub_count - 1;
  const auto lower = (sub_count + bucket % sub_count) << shift;
  return lower + ((std::uint64_t{1} << shift) - 1);
}

void latency_histogram::record(std::chrono::nanoseconds d) noexcept {
  // The largest int64 lands in the last bucket: 2^62 is group 57 of 58.
  static_assert(((62 - sub_bits + 2) << sub_bits) == buckets);
  d = std::max(d, std::chrono::nanoseconds{0});  // a clock step back must not index out of range
  ++counts_[bucket_of(static_cast<std::uint64_t>(d.count()))];
  ++count_;
  max_ = std::max(max_, d);
}

void latency_histogram::merge(const latency_histogram& other) noexcept {
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  max_ = std::max(max_, other.max_);
}

std::chrono::nanoseconds latency_histogram::quantile(double q) const noexcept {
  if (count_ == 0) return std::chrono::nanoseconds{0};
  const double wanted = std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_));
  const auto rank = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(wanted), 1, count_);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank)
      return std::min(std::chrono::nanoseconds(static_cast<std::int64_t>(upper_bound_of(i))), max_);
  }
  return max_;
}

}  // namespace scenert::bots
