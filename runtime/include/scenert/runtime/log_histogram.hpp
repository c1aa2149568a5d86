#pragma once
/// log_histogram: the one latency histogram of scenert, fixed buckets, preallocated. The pool's
/// metrics record every tick into one (no allocation, no locked instruction: one writer at a time,
/// readers from any thread); the bots record every delivered frame into finer ones, one per thread,
/// and merge them for their report. Quantiles are nearest-rank (the ceil(q*n)-th smallest value),
/// answered as the upper bound of that value's bucket, never above the maximum.

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>

namespace scenert {

/// The bit width of a measurement (negative counts as 0): what the histograms index by, so that a
/// value recorded in two of them is measured once.
inline unsigned width_of(std::int64_t ns) noexcept {
  return static_cast<unsigned>(std::bit_width(static_cast<std::uint64_t>(ns < 0 ? 0 : ns)));
}

/// Buckets of 2^SubBits per power of two between 2^MinExp and 2^MaxExp nanoseconds, one bucket
/// below (values under 2^MinExp) and one overflow bucket: a value above 2^MinExp is answered within
/// 1/2^SubBits of itself. Thread-safety: record() by one thread at a time (the hand-over of a service
/// between workers orders successive writers); the readers and merge()'s source from any thread.
template <unsigned SubBits, unsigned MinExp, unsigned MaxExp, class Count>
class log_histogram {
  static_assert(MinExp >= SubBits && MaxExp > MinExp && MaxExp <= 63);

 public:
  static constexpr unsigned bucket_count = 2 + ((MaxExp - MinExp) << SubBits);

  log_histogram() = default;
  log_histogram(const log_histogram& other) noexcept { merge(other); }
  log_histogram& operator=(const log_histogram& other) noexcept {
    if (this == &other) return *this;
    for (unsigned i = 0; i < bucket_count; ++i)
      counts_[i].store(other.count_at(i), std::memory_order_relaxed);
    max_.store(other.max(), std::memory_order_relaxed);
    sum_.store(other.sum(), std::memory_order_relaxed);
    return *this;
  }

  static unsigned index(std::int64_t ns) noexcept {
    return index(static_cast<std::uint64_t>(ns < 0 ? 0 : ns), width_of(ns));
  }
  /// The same, for `v` >= 0 whose bit width the caller knows; by table, without a branch (it
  /// runs twice per tick).
  static unsigned index(std::uint64_t v, unsigned width) noexcept {
    const by_width& b = table[width];
    return b.base + (static_cast<unsigned>(v >> b.shift) & b.mask);
  }
  /// Values in bucket i are below upper_bound(i); the overflow bucket has none.
  static std::int64_t upper_bound(unsigned i) noexcept {
    if (i == 0) return std::int64_t{1} << MinExp;
    unsigned e = MinExp + ((i - 1) >> SubBits), sub = (i - 1) & ((1u << SubBits) - 1);
    return (std::int64_t{1} << e) + (static_cast<std::int64_t>(sub + 1) << (e - SubBits));
  }

  void record(std::int64_t ns) noexcept {
    count(ns);
    add(ns < 0 ? 0 : ns, ns < 0 ? 0 : ns);
  }
  void record(std::chrono::nanoseconds d) noexcept { record(d.count()); }
  /// record() in two halves, for a writer that keeps the sum and the maximum of many values
  /// itself: count() each value, then add() their sum and maximum.
  void count(std::int64_t ns) noexcept { count(static_cast<std::uint64_t>(ns < 0 ? 0 : ns), width_of(ns)); }
  void count(std::uint64_t v, unsigned width) noexcept {
    auto& c = counts_[index(v, width)];
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  void add(std::int64_t sum, std::int64_t max) noexcept {
    if (max > max_.load(std::memory_order_relaxed)) max_.store(max, std::memory_order_relaxed);
    sum_.store(sum_.load(std::memory_order_relaxed) + sum, std::memory_order_relaxed);
  }
  /// Adds `other`'s values (by the writer of this one).
  void merge(const log_histogram& other) noexcept {
    for (unsigned i = 0; i < bucket_count; ++i)
      counts_[i].store(count_at(i) + other.count_at(i), std::memory_order_relaxed);
    add(other.sum(), other.max());
  }

  [[nodiscard]] std::int64_t max() const noexcept { return max_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::int64_t sum() const noexcept { return sum_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t count_at(unsigned i) const noexcept {
    return counts_[i].load(std::memory_order_relaxed);
  }
  /// How many values were recorded.
  [[nodiscard]] std::uint64_t total() const noexcept {
    std::uint64_t n = 0;
    for (unsigned i = 0; i < bucket_count; ++i) n += count_at(i);
    return n;
  }

  /// The value at quantile q (0..1): the upper bound of the bucket of the ceil(q*n)-th smallest
  /// value, never above the maximum (0 when empty).
  [[nodiscard]] std::int64_t quantile(double q) const noexcept {
    const std::uint64_t n = total();
    if (n == 0) return 0;
    const double wanted = std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(n));
    const auto rank = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(wanted), 1, n);
    std::uint64_t seen = 0;
    for (unsigned i = 0; i < bucket_count; ++i) {
      seen += count_at(i);
      if (seen >= rank) return i + 1 == bucket_count ? max() : std::min(upper_bound(i), max());
    }
    return max();
  }

 private:
  // For a bit width: the bucket of its lowest value, and which bits below the top pick the sub-bucket.
  struct by_width {
    std::uint16_t base;
    std::uint8_t shift, mask;
  };
  static constexpr std::array<by_width, 65> table = [] {
    std::array<by_width, 65> t{};
    for (unsigned w = 0; w <= 64; ++w) {
      if (w <= MinExp)
        t[w] = {0, 0, 0};
      else if (w - 1 >= MaxExp)
        t[w] = {static_cast<std::uint16_t>(bucket_count - 1), 0, 0};
      else
        t[w] = {static_cast<std::uint16_t>(1 + ((w - 1 - MinExp) << SubBits)),
                static_cast<std::uint8_t>(w - 1 - SubBits), static_cast<std::uint8_t>((1u << SubBits) - 1)};
    }
    return t;
  }();
  static_assert(bucket_count <= 65535 && SubBits <= 8);

  std::array<std::atomic<Count>, bucket_count> counts_{};
  std::atomic<std::int64_t> max_{0};
  std::atomic<std::int64_t> sum_{0};
};

}  // namespace scenert
