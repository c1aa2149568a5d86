#pragma once
/// detail::log_histogram: a fixed-bucket latency histogram, preallocated, with no allocation and
/// no locked instruction on the measurement path (one writer at a time; readers from any thread).

#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>

#include <scenert/runtime/metrics.hpp>

namespace scenert::detail {

/// Buckets of 2^SubBits per power of two between 2^MinExp and 2^MaxExp nanoseconds, one below
/// and one overflow bucket. Thread-safety: record() by one thread at a time (the handover of a
/// service between workers orders successive writers); snapshot() from any thread.
template <unsigned SubBits, unsigned MinExp, unsigned MaxExp, class Count>
class log_histogram {
  static_assert(MinExp >= SubBits && MaxExp > MinExp);

 public:
  static constexpr unsigned bucket_count = 2 + ((MaxExp - MinExp) << SubBits);

  static unsigned index(std::int64_t ns) noexcept {
    auto v = static_cast<std::uint64_t>(ns < 0 ? 0 : ns);
    if (v < (std::uint64_t{1} << MinExp)) return 0;
    auto e = static_cast<unsigned>(std::bit_width(v) - 1);
    if (e >= MaxExp) return bucket_count - 1;
    auto sub = static_cast<unsigned>(v >> (e - SubBits)) & ((1u << SubBits) - 1);
    return 1 + ((e - MinExp) << SubBits) + sub;
  }
  /// Values in bucket i are below upper_bound(i); the overflow bucket has none.
  static std::int64_t upper_bound(unsigned i) noexcept {
    if (i == 0) return std::int64_t{1} << MinExp;
    unsigned e = MinExp + ((i - 1) >> SubBits), sub = (i - 1) & ((1u << SubBits) - 1);
    return (std::int64_t{1} << e) + (static_cast<std::int64_t>(sub + 1) << (e - SubBits));
  }

  void record(std::int64_t ns) noexcept {
    auto& c = counts_[index(ns)];
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (ns > max_.load(std::memory_order_relaxed)) max_.store(ns, std::memory_order_relaxed);
    sum_.store(sum_.load(std::memory_order_relaxed) + ns, std::memory_order_relaxed);
  }

  [[nodiscard]] std::int64_t max() const noexcept { return max_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::int64_t sum() const noexcept { return sum_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t count_at(unsigned i) const noexcept {
    return counts_[i].load(std::memory_order_relaxed);
  }

  /// The value at quantile q (0..1): the upper bound of its bucket, never above the maximum.
  [[nodiscard]] std::int64_t quantile(double q) const noexcept {
    std::uint64_t total = 0;
    for (unsigned i = 0; i < bucket_count; ++i) total += count_at(i);
    if (total == 0) return 0;
    auto rank = static_cast<std::uint64_t>(q * static_cast<double>(total));
    if (rank >= total) rank = total - 1;
    std::uint64_t seen = 0;
    for (unsigned i = 0; i < bucket_count; ++i) {
      seen += count_at(i);
      if (seen > rank) return i + 1 == bucket_count ? max() : std::min(upper_bound(i), max());
    }
    return max();
  }

 private:
  std::array<std::atomic<Count>, bucket_count> counts_{};
  std::atomic<std::int64_t> max_{0};
  std::atomic<std::int64_t> sum_{0};
};

/// Per pool and worker: 4 buckets per octave from 64 ns to 68 s.
using fine_histogram = log_histogram<2, 6, 36, std::uint64_t>;
/// Per service, kept to 40 bytes for a million services: one bucket per octave from 1 us to
/// 16 ms, 16-bit counts halved together when one fills (quantiles stay right), and the maximum.
/// Thread-safety: as log_histogram.
class compact_histogram {
  using layout = log_histogram<0, 10, 24, std::uint16_t>;

 public:
  static constexpr unsigned bucket_count = layout::bucket_count;

  void record(std::int64_t ns) noexcept {
    auto& c = counts_[layout::index(ns)];
    auto v = static_cast<std::uint16_t>(c.load(std::memory_order_relaxed) + 1);
    c.store(v, std::memory_order_relaxed);
    if (v == 0xFFFF) halve();
    if (ns > max_.load(std::memory_order_relaxed)) max_.store(ns, std::memory_order_relaxed);
  }
  [[nodiscard]] std::int64_t max() const noexcept { return max_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::int64_t quantile(double q) const noexcept {
    std::uint64_t total = 0;
    for (auto& c : counts_) total += c.load(std::memory_order_relaxed);
    if (total == 0) return 0;
    auto rank =
        std::min<std::uint64_t>(static_cast<std::uint64_t>(q * static_cast<double>(total)), total - 1);
    std::uint64_t seen = 0;
    for (unsigned i = 0; i + 1 < bucket_count; ++i) {
      seen += counts_[i].load(std::memory_order_relaxed);
      if (seen > rank) return std::min(layout::upper_bound(i), max());
    }
    return max();
  }

 private:
  void halve() noexcept {
    for (auto& c : counts_)
      c.store(static_cast<std::uint16_t>(c.load(std::memory_order_relaxed) / 2), std::memory_order_relaxed);
  }
  std::array<std::atomic<std::uint16_t>, bucket_count> counts_{};
  std::atomic<std::int64_t> max_{0};
};

/// Adds `h` into a snapshot whose buckets follow fine_histogram's.
inline void accumulate(histogram_snapshot& out, const fine_histogram& h) {
  if (out.counts.empty()) {
    out.counts.assign(fine_histogram::bucket_count, 0);
    for (unsigned i = 0; i + 1 < fine_histogram::bucket_count; ++i)
      out.upper_bounds.emplace_back(fine_histogram::upper_bound(i));
  }
  for (unsigned i = 0; i < fine_histogram::bucket_count; ++i) {
    out.counts[i] += h.count_at(i);
    out.count += h.count_at(i);
  }
  out.sum += std::chrono::nanoseconds(h.sum());
  out.max = std::max(out.max, std::chrono::nanoseconds(h.max()));
}

/// Fills p50/p99 of a snapshot from its buckets.
inline void finish(histogram_snapshot& s) {
  auto at = [&](double q) {
    if (s.count == 0) return std::chrono::nanoseconds{0};
    auto rank =
        std::min<std::uint64_t>(static_cast<std::uint64_t>(q * static_cast<double>(s.count)), s.count - 1);
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < s.counts.size(); ++i) {
      seen += s.counts[i];
      if (seen > rank) return i < s.upper_bounds.size() ? std::min(s.upper_bounds[i], s.max) : s.max;
    }
    return s.max;
  };
  s.p50 = at(0.5);
  s.p99 = at(0.99);
}

}  // namespace scenert::detail
