#pragma once
/// The pool's histograms: fine_histogram (scenert::log_histogram per pool and worker) and
/// compact_histogram, 16 bytes per service; both without allocation or locked instruction on the
/// measurement path (one writer at a time; readers from any thread).

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>

#include <scenert/runtime/log_histogram.hpp>
#include <scenert/runtime/metrics.hpp>

namespace scenert::detail {

using scenert::log_histogram;
using scenert::width_of;

/// The 1-based rank of quantile q among n > 0 values, as log_histogram counts it: ceil(q*n).
inline std::uint64_t nearest_rank(double q, std::uint64_t n) noexcept {
  const double wanted = std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(n));
  return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(wanted), 1, n);
}

/// Per pool and worker: 4 buckets per octave from 64 ns to 68 s.
using fine_histogram = log_histogram<2, 6, 36, std::uint64_t>;
/// Per service, kept to 16 bytes so that a service's whole per-tick state fits one cache line:
/// one-byte counts for one bucket per octave from 1 us to 4 ms (plus one below and one above),
/// halved together when one fills (the shares, and so the quantiles, stay right; a count never
/// halves from 1 to 0, so a rare slow tick stays visible), and the maximum as a 16-bit float
/// rounded up (within 0.1%, never below the true value).
/// Thread-safety: as log_histogram.
class compact_histogram {
 public:
  static constexpr unsigned bucket_count = 14;

  static unsigned index(std::int64_t ns) noexcept { return index_of_width(width_of(ns)); }
  static unsigned index_of_width(unsigned w) noexcept { return bucket_of_width[w]; }
  /// Values in bucket i are below upper_bound(i); the last bucket has no bound.
  static std::int64_t upper_bound(unsigned i) noexcept { return std::int64_t{1} << (10 + i); }

  /// A 16-bit code for `ns`, ordered as the values are: below 1024 exact, above it a 10-bit
  /// fraction and a 6-bit exponent, rounded up.
  static std::uint16_t encode(std::int64_t ns) noexcept {
    auto v = static_cast<std::uint64_t>(ns < 0 ? 0 : ns);
    if (v < 1024) return static_cast<std::uint16_t>(v);
    auto e = static_cast<unsigned>(std::bit_width(v) - 10);                // v in [2^(e+9), 2^(e+10))
    std::uint64_t m = (v + (std::uint64_t{1} << (e - 1)) - 1) >> (e - 1);  // in [1024, 2048]
    if (m == 2048) ++e, m = 1024;
    return static_cast<std::uint16_t>(e << 10 | (m - 1024));
  }
  static std::int64_t decode(std::uint16_t code) noexcept {
    unsigned e = code >> 10, f = code & 1023u;
    return e == 0 ? f : static_cast<std::int64_t>(std::uint64_t{1024u + f} << (e - 1));
  }

  void record(std::int64_t ns) noexcept { record(ns, width_of(ns)); }
  /// The same, for a value whose width_of() the caller knows.
  void record(std::int64_t ns, unsigned width) noexcept {
    auto& c = counts_[index_of_width(width)];
    auto v = static_cast<std::uint8_t>(c.load(std::memory_order_relaxed) + 1);
    c.store(v, std::memory_order_relaxed);
    if (v == 0xFF) [[unlikely]]
      halve();
    // A value whose code exponent is below the maximum's is below the maximum: mostly, one compare.
    std::uint16_t top = max_.load(std::memory_order_relaxed);
    if (exponent_of_width[width] >= (top >> 10u) && ns > decode(top))
      max_.store(encode(ns), std::memory_order_relaxed);
  }
  /// For a record reused by another service; not while a reader may look (that would be torn).
  void clear() noexcept {
    for (auto& c : counts_) c.store(0, std::memory_order_relaxed);
    max_.store(0, std::memory_order_relaxed);
  }
  [[nodiscard]] std::int64_t max() const noexcept { return decode(max_.load(std::memory_order_relaxed)); }
  [[nodiscard]] std::int64_t quantile(double q) const noexcept {
    std::uint64_t total = 0;
    for (auto& c : counts_) total += c.load(std::memory_order_relaxed);
    if (total == 0) return 0;
    const auto rank = nearest_rank(q, total);
    std::uint64_t seen = 0;
    for (unsigned i = 0; i + 1 < bucket_count; ++i) {
      seen += counts_[i].load(std::memory_order_relaxed);
      if (seen >= rank) return std::min(upper_bound(i), max());
    }
    return max();
  }

 private:
  void halve() noexcept {
    for (auto& c : counts_) {
      unsigned v = c.load(std::memory_order_relaxed);
      c.store(static_cast<std::uint8_t>((v + 1) / 2), std::memory_order_relaxed);
    }
  }
  // By bit width: the bucket, and the exponent encode() gives (codes of a lower exponent are smaller).
  static constexpr std::array<std::uint8_t, 65> bucket_of_width = [] {
    std::array<std::uint8_t, 65> t{};
    for (unsigned w = 0; w <= 64; ++w)
      t[w] = static_cast<std::uint8_t>(w <= 10 ? 0 : std::min(w - 10, bucket_count - 1));
    return t;
  }();
  static constexpr std::array<std::uint8_t, 65> exponent_of_width = [] {
    std::array<std::uint8_t, 65> t{};
    for (unsigned w = 0; w <= 64; ++w) t[w] = static_cast<std::uint8_t>(w <= 10 ? 0 : w - 10);
    return t;
  }();

  std::array<std::atomic<std::uint8_t>, bucket_count> counts_{};
  std::atomic<std::uint16_t> max_{0};
};
static_assert(sizeof(compact_histogram) == 16);

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
    const auto rank = nearest_rank(q, s.count);
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < s.counts.size(); ++i) {
      seen += s.counts[i];
      if (seen >= rank) return i < s.upper_bounds.size() ? std::min(s.upper_bounds[i], s.max) : s.max;
    }
    return s.max;
  };
  s.p50 = at(0.5);
  s.p99 = at(0.99);
}

}  // namespace scenert::detail
