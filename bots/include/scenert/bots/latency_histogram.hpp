#pragma once
/// latency_histogram: a fixed-size log-linear histogram of durations (about 1% resolution from
/// 1 µs to about an hour), cheap enough to record every delivered frame of a load test, mergeable
/// across threads. Percentiles are the upper bound of the bucket that holds them.
/// Thread-safety: none; keep one per thread and merge.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace scenert::bots {

class latency_histogram {
 public:
  void record(std::chrono::nanoseconds d) noexcept;
  void merge(const latency_histogram& other) noexcept;
  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
  /// The value at quantile q in [0, 1] (0 when empty).
  [[nodiscard]] std::chrono::nanoseconds quantile(double q) const noexcept;
  [[nodiscard]] std::chrono::nanoseconds max() const noexcept { return max_; }

 private:
  static constexpr int sub_bits = 6;  // 64 linear sub-buckets per power of two: < 1.6% error
  static constexpr int buckets = (64 - sub_bits) << sub_bits;
  static std::size_t bucket_of(std::uint64_t ns) noexcept;
  static std::uint64_t upper_bound_of(std::size_t bucket) noexcept;
  std::array<std::uint64_t, buckets> counts_{};
  std::uint64_t count_ = 0;
  std::chrono::nanoseconds max_{0};
};

}  // namespace scenert::bots
