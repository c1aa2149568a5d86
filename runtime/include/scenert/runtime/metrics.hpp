#pragma once
/// Snapshots of the pool's measurements: plain structs that apps render (text, JSON, Prometheus).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace scenert {

/// A latency histogram at one instant: fixed buckets, cumulative-free counts.
struct histogram_snapshot {
  std::vector<std::chrono::nanoseconds> upper_bounds;  ///< bucket i counts values <= upper_bounds[i]
  std::vector<std::uint64_t> counts;                   ///< one per bound, plus a last one for +Inf
  std::uint64_t count = 0;
  std::chrono::nanoseconds sum{};
  std::chrono::nanoseconds p50{}, p99{}, max{};
};

/// One service's measurements.
struct service_metrics {
  std::string name;
  double hz = 0;
  std::uint64_t ticks = 0;
  /// Ticks that ended after the next one was due: that next tick runs late, once, and the
  /// slots it missed are skipped (never caught up in a burst).
  std::uint64_t overruns = 0;
  std::uint64_t exceptions = 0;  ///< failed ticks (caught)
  std::uint64_t stalls = 0;      ///< ticks that ran longer than the stall threshold
  std::uint64_t dropped_messages = 0;
  std::size_t mailbox_depth = 0;
  bool quarantined = false;
  std::chrono::nanoseconds tick_p50{}, tick_p99{}, tick_max{};
  std::chrono::nanoseconds lateness_p50{}, lateness_p99{}, lateness_max{};
};

/// The whole pool's measurements.
struct pool_metrics {
  unsigned workers = 0;
  std::size_t services = 0;
  std::uint64_t ticks = 0;
  std::uint64_t overruns = 0;
  std::uint64_t exceptions = 0;
  std::uint64_t stalls = 0;
  std::uint64_t quarantined = 0;
  std::size_t mailbox_depth = 0;  ///< summed over services
  double utilisation = 0;         ///< busy worker time / (workers x wall time), since start
  histogram_snapshot tick_duration;
  histogram_snapshot lateness;               ///< how long after its due time each tick started
  std::vector<service_metrics> per_service;  ///< filled only when asked for
  /// Ticks running right now for longer than the stall threshold: "name (running 3.2 s)".
  std::vector<std::string> stalled_now;
  /// Time since a worker last finished a batch, for health checks.
  std::chrono::nanoseconds since_progress{};
};

}  // namespace scenert
