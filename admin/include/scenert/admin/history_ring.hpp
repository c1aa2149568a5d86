#pragma once
/// The recent past of a hosted world for the dashboard's charts: one sample a second, the last
/// `capacity` kept, so a page opened late still draws the minutes before it.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

#include <scenert/runtime/metrics.hpp>

namespace scenert::admin {

/// What the world looked like over one interval.
struct history_sample {
  std::int64_t t_ms = 0;  ///< Unix time at the interval's end
  std::uint64_t players = 0, connections = 0;
  double requests_per_s = 0;
  double tick_p99_ms = 0, lateness_p99_ms = 0;  ///< over the interval only, not since start
  double io_busy = 0;                           ///< the busiest client I/O thread's CPU share (0..1)
  double write_queue_kib = 0;                   ///< p90 over connections of what waits to be written
  bool admitting = true;                        ///< new logins admitted at the interval's end
  std::string over;                             ///< the headroom measure over its line, or "none"
  double busy_refused_per_s = 0;                ///< new logins refused (server_busy)
  double io_lag_ms = 0;                         ///< how late the most lagging I/O thread ran its timer
};

/// The front's headroom at a sample's end (net::front_stats); the default without a front.
struct front_headroom {
  double io_busy = 0, write_queue_kib = 0;
  bool admitting = true;
  std::string over = "none";
  std::uint64_t busy_refused = 0;  ///< cumulative: the ring keeps its rate
  double io_lag_ms = 0;            ///< how late the most lagging I/O thread ran its timer
};

/// The p99 of the values a histogram counted between two snapshots of it (the bucket's upper bound,
/// or the max when it fell in the +Inf bucket); 0 when it counted none.
[[nodiscard]] std::chrono::nanoseconds interval_p99(const histogram_snapshot& now,
                                                    const histogram_snapshot& before);

/// Thread-safety: every member from any thread.
class history_ring {
 public:
  explicit history_ring(std::size_t capacity = 600) : capacity_(capacity) {}

  /// Adds a sample from the interval since the previous one: counters are cumulative, the ring
  /// keeps their rates.
  void record(std::int64_t t_ms, std::uint64_t players, std::uint64_t connections, std::uint64_t requests,
              const pool_metrics& pool, const front_headroom& room = {});
  /// {"interval_ms":1000,"capacity":N,"samples":[{...}, ...]}, oldest first.
  [[nodiscard]] std::string json() const;
  [[nodiscard]] std::size_t size() const;

 private:
  struct previous {
    std::int64_t t_ms = 0;
    std::uint64_t requests = 0, busy_refused = 0;
    histogram_snapshot ticks, lateness;
  };
  mutable std::mutex m_;
  std::size_t capacity_;
  std::deque<history_sample> samples_;
  std::optional<previous> last_;
};

}  // namespace scenert::admin
