#pragma once
/// processor_pool: ticks services at their frame rates on a fixed set of workers.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include <scenert/runtime/clock.hpp>
#include <scenert/runtime/metrics.hpp>
#include <scenert/runtime/result.hpp>
#include <scenert/runtime/service.hpp>
#include <scenert/runtime/unique_function.hpp>

namespace scenert {

enum class pool_errc {
  ok = 0,
  invalid_rate,   ///< frame rate <= 0 or above 1000
  already_added,  ///< the service is in a pool already
  not_found,      ///< the service is not in this pool (or its removal is under way)
  already_started,
  not_started,
  stopped,            ///< the pool was stopped; it does not restart
  invalid_options,    ///< e.g. 0 workers
  activation_failed,  ///< the service's on_init or on_active threw; it was not added
  invalid_phase,      ///< a phase outside [0, one period)
};

/// Which threads run the ticks. oneTBB is the default; the std::thread backend exists for
/// ThreadSanitizer builds, since Debian's oneTBB is not built for TSan.
enum class executor_kind { tbb, threads };

/// The build's default executor (CMake option SCENERT_EXECUTOR).
[[nodiscard]] executor_kind default_executor() noexcept;

enum class log_level { info, warn, error };

struct pool_options {
  unsigned workers = 2;
  executor_kind executor = default_executor();
  /// Null: steady clock and a dispatcher thread. Set: no threads at all; time moves only
  /// through advance(), which runs due ticks inline, in due-time order.
  manual_clock* manual = nullptr;
  /// Consecutive failing ticks that quarantine a service; 0 = never.
  unsigned quarantine_after = 10;
  /// A tick running longer than this is reported (with the service's name) and counted.
  std::chrono::nanoseconds stall_threshold = std::chrono::seconds(1);
  /// Messages a service runs at most per tick, so a flooded mailbox cannot starve the others.
  std::size_t mailbox_batch = 1024;
  /// 1..99: the dispatcher and the workers run on the SCHED_FIFO policy at this priority while
  /// they serve the pool, so ticks start on time on a machine shared with other processes (needs
  /// CAP_SYS_NICE or an rtprio limit; start() fails if refused). 0: the normal scheduler.
  int realtime_priority = 0;
  /// Where notable events go (stall, failure, quarantine). Null: one line each on stderr.
  std::function<void(log_level, std::string_view)> log;
};

/// Thread-safety: every member may be called from any thread, including from inside a tick
/// (a service may remove itself); advance() from one thread at a time.
class processor_pool {
 public:
  explicit processor_pool(pool_options options = {});
  ~processor_pool();  ///< stop()s if running
  processor_pool(const processor_pool&) = delete;
  processor_pool& operator=(const processor_pool&) = delete;

  /// Starts the workers (and, with the steady clock, the dispatcher). Once only.
  result<void, pool_errc> start();
  /// Graceful: no tick after it returns; every active service's on_inactive ran exactly once;
  /// pending removal callbacks have run. Idempotent. Called from inside a tick it only requests
  /// the stop, which completes once that tick returns.
  result<void, pool_errc> stop();

  /// Activates `s` (on_init the first time, then on_active, both on the calling thread) and ticks
  /// it at `hz` on a grid of due times base + k / hz (no drift). Without a phase, base is now
  /// rounded up to the pool's 1 ms slot and the first tick is due one period after it. With a phase
  /// (in [0, 1 / hz)), the grid is the pool's own: origin + phase + k / hz, origin being the pool's
  /// creation rounded up to 1 ms, and the first tick is the first such time at least 1 ms from now
  /// — so a host can spread services of one rate evenly over the period instead of letting those
  /// added together tick together. Allowed before start().
  result<void, pool_errc> add(std::shared_ptr<service> s, double hz,
                              std::optional<nanoseconds> phase = std::nullopt);
  /// Asynchronous: after the service's last tick, runs its on_inactive (which drains its mailbox)
  /// and then `on_removed` (on a pool thread). Safe from inside the service's own tick.
  result<void, pool_errc> remove(service& s, unique_function<void()> on_removed = {});

  /// Manual clock only: moves time forward by `dt`, running every tick that falls due on the way
  /// in due-time order, on the calling thread. add() and remove() take effect here (advance(0)
  /// applies them without moving time). Ticks run even before start().
  void advance(std::chrono::nanoseconds dt);

  /// The pool's measurements; per-service rows only when asked. Sums over the services (mailbox
  /// depth, quarantined) walk them a slice at a time, so add() and remove() never wait for the
  /// whole walk; a service added or removed during the walk may or may not be counted.
  [[nodiscard]] pool_metrics metrics(bool per_service = false) const;
  [[nodiscard]] time_point now() const noexcept;
  [[nodiscard]] const pool_options& options() const noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace scenert
