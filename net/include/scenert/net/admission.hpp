#pragma once
/// Admission before overload: the front's headroom (how late the lines' ticks start, how busy its I/O
/// threads are, how much waits in its write queues) and the gate that, past a line, refuses new logins
/// (server_busy, with a retry-after) so that the players already in keep their latency. Players
/// logged in and resumes of existing players are never refused.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace scenert::net {

/// Where the front stops admitting new players, and how it comes back.
struct admission_options {
  /// Off: every login is admitted (the headroom is measured all the same).
  bool enabled = false;
  /// The p99 of how late the lines' ticks started over the last quarter second; over it, closed.
  std::chrono::milliseconds max_tick_lateness{50};
  /// The busiest I/O thread's CPU time per second of wall time (0..1); over it, closed.
  double max_io_busy = 0.85;
  /// How late the most lagging I/O thread ran its quarter-second timer: the time any work waits there
  /// for its thread (its queue of handlers, or a core it does not get); over it, closed.
  std::chrono::milliseconds max_io_lag{50};
  /// The 90th percentile over connections of the bytes queued to a client and not yet written; over
  /// it, closed (a few slow readers do not close it; a tenth of the clients behind does).
  std::size_t max_write_queue_bytes = 64 * 1024;
  /// A measure over its line for this long closes the gate (a single late tick does not).
  std::chrono::milliseconds close_after{1000};
  /// Every measure under reopen_share of its line for this long opens it again (no flapping).
  std::chrono::milliseconds reopen_after{3000};
  double reopen_share = 0.7;
  /// What a refused client is told to wait before it tries again (plus up to half of it at random,
  /// so that the refused do not all come back at once).
  std::chrono::milliseconds retry_after{2000};
};

/// Why `o` cannot be used ("max_io_busy 1.5: must be in (0, 1]"), or empty when it can.
[[nodiscard]] std::string admission_problem(const admission_options& o);

/// One sample of the front's headroom.
struct headroom {
  std::chrono::microseconds tick_lateness{0};  ///< p99 lateness of the ticks over the last sample
  double io_busy = 0;                          ///< the busiest I/O thread's CPU share (0..1)
  std::chrono::microseconds io_lag{0};         ///< how late the most lagging I/O thread's timer ran
  std::size_t write_queue_bytes = 0;           ///< p90 over connections of the bytes waiting
};

/// Which measure is over its line.
enum class headroom_measure : std::uint8_t { none, tick_lateness, io_busy, io_lag, write_queue };
/// The measures' names, as /metrics and /history say them.
inline constexpr std::string_view headroom_measure_names[] = {"none", "tick_lateness", "io_busy", "io_lag",
                                                              "write_queue"};

/// The decision, fed one sample at a time: closes once a measure stayed over its line for
/// close_after, opens once every measure stayed under reopen_share of its line for reopen_after.
/// Deterministic: time is what the caller says.
/// Thread-safety: none (one I/O thread feeds it).
class admission_gate {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  explicit admission_gate(admission_options o) : opt_(o) {}

  /// Takes the sample `h` made at `now`; returns whether new logins are admitted from now on.
  bool update(const headroom& h, time_point now);
  /// Whether new logins are admitted (always, when admission is off).
  [[nodiscard]] bool admitting() const noexcept { return !opt_.enabled || open_; }
  /// The first measure over its line in the last sample (none when all were under).
  [[nodiscard]] headroom_measure over() const noexcept { return over_; }
  /// How many times the gate closed.
  [[nodiscard]] std::uint64_t closings() const noexcept { return closings_; }
  [[nodiscard]] const admission_options& options() const noexcept { return opt_; }

 private:
  [[nodiscard]] headroom_measure first_over(const headroom& h, double share) const;

  admission_options opt_;
  bool open_ = true;
  headroom_measure over_ = headroom_measure::none;
  time_point over_since_{}, calm_since_{};
  bool over_running_ = false, calm_running_ = false;
  std::uint64_t closings_ = 0;
};

}  // namespace scenert::net
