#pragma once
/// own_load: what the bots' own process added to the figures they measure. A latency the bots read
/// is the server's only when their frames did not wait in the bots' process and their cores had room:
/// this says how long frames waited there, how late the workers' loops ran and how busy the bots'
/// cores were, and warns when the figures include the load generator's own lag.

#include <string>
#include <vector>

#include <scenert/bots/latency_histogram.hpp>

namespace scenert::bots {

/// The bots' own lag and CPU over a run: one per worker thread, added up for the report.
struct own_load {
  /// Per frame read: from the kernel's receipt of the newest bytes its read took (a socket's receive
  /// time stamp) to that read. The oldest bytes of a read waited longer: a lower bound of its wait.
  latency_histogram read_lag;
  /// Per worker tick (every 10 ms): how late its timer's handler ran, which is how long anything ready
  /// waited for that worker's loop.
  latency_histogram loop_lag;
  double cpu_seconds = 0;  ///< the bots' process, user + system, over the run
  /// The busiest worker thread (the one that wanted a core longest): how long it ran, and how long it
  /// waited, runnable, for a core busy with other work (its scheduler statistics; other processes
  /// on the bots' core count too).
  double busiest_thread_cpu_seconds = 0, busiest_thread_wait_seconds = 0;
  double wall_seconds = 0;  ///< how long the run took
  unsigned cores = 0;       ///< the cores the process may run on (its affinity); 0 unknown

  /// Adds a worker's histograms and keeps the busier thread.
  void merge(const own_load& worker) noexcept;
};

/// The share of its cores the bots' process used (CPU seconds / wall seconds / cores); 0 if unknown.
[[nodiscard]] double busy_share(const own_load& o) noexcept;
/// The share of one core the busiest worker thread used; 0 if unknown.
[[nodiscard]] double busiest_thread_share(const own_load& o) noexcept;
/// The share of the run the busiest worker thread waited, runnable, for its core; 0 if unknown.
[[nodiscard]] double busiest_thread_wait_share(const own_load& o) noexcept;

/// A busy share from which a core is called full.
inline constexpr double full_core_share = 0.9;
/// A worker thread that waited this share of the run for its core found it full (of other work).
inline constexpr double long_core_wait_share = 0.25;
/// A lag p99 that is this share of the move-to-viewer p99 or more is a large part of it.
inline constexpr double large_lag_share = 0.25;

/// Why a latency figure of this run may be the load generator's and not only the server's: the bots'
/// cores were at least 90% busy, a worker thread ran or waited for its core at least 90% of the run
/// (or waited for it a quarter of the run), or their lag p99 is at least a quarter of the move-to-viewer p99.
/// Empty when the figures are the server's.
[[nodiscard]] std::vector<std::string> own_load_warnings(const own_load& o,
                                                         const latency_histogram& move_to_viewer);

/// The summary's lines: the lags, the CPU and every warning.
[[nodiscard]] std::string own_load_text(const own_load& o, const latency_histogram& move_to_viewer);

/// Reads the process's CPU seconds (user + system, every thread) now.
[[nodiscard]] double process_cpu_seconds() noexcept;
/// Reads the calling thread's CPU seconds now.
[[nodiscard]] double thread_cpu_seconds() noexcept;
/// Reads how long the calling thread has waited, runnable, for a core (/proc/thread-self/schedstat);
/// 0 if the kernel does not say.
[[nodiscard]] double thread_wait_seconds() noexcept;
/// The cores the calling process may run on (its affinity mask); 0 if it cannot tell.
[[nodiscard]] unsigned allowed_cores() noexcept;

}  // namespace scenert::bots
