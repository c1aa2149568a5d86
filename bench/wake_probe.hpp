#pragma once
// The platform's wake-up floor for bench_pool: a plain thread sleeps to every 1 ms boundary of
// CLOCK_MONOTONIC with absolute deadlines and 1 ns timer slack, as the pool's dispatcher does, and
// records how late it woke. What this thread sees late is the machine's, not the pool's.

#include <pthread.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace scenert::bench {

/// Wake-up lateness of the probe between start() and stop(), in nanoseconds.
struct wake_summary {
  std::size_t samples = 0;
  std::int64_t p50_ns = 0, p99_ns = 0, max_ns = 0;
  std::size_t over_2ms = 0;
};

/// A thread that wakes at every 1 ms boundary and records its lateness.
/// Thread-safety: start(), stop() and summary() from one thread; the samples belong to the probe
/// thread until stop() joins it.
class wake_probe {
 public:
  static constexpr std::int64_t step_ns = 1'000'000;

  /// Reserves room for `seconds` of wake-ups, so that the probe's loop never allocates.
  explicit wake_probe(double seconds) { samples_.reserve(static_cast<std::size_t>(seconds * 1000.0) + 1000); }
  wake_probe(const wake_probe&) = delete;
  wake_probe& operator=(const wake_probe&) = delete;
  ~wake_probe() { stop(); }

  /// Starts the probe thread.
  void start() {
    stop_.store(false, std::memory_order_relaxed);
    thread_ = std::thread([this] { run(); });
    has_cpu_clock_ = pthread_getcpuclockid(thread_.native_handle(), &cpu_clock_) == 0;
  }

  /// CPU time the probe thread has used so far (0 when it is not running), so that a caller
  /// measuring the process's CPU can leave the probe's share out.
  std::int64_t cpu_ns() const {
    timespec ts{};
    if (!thread_.joinable() || !has_cpu_clock_ || clock_gettime(cpu_clock_, &ts) != 0) return 0;
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }

  /// Stops and joins the probe thread (at most one step later).
  void stop() {
    stop_.store(true, std::memory_order_relaxed);
    if (thread_.joinable()) thread_.join();
  }

  /// Exact quantiles of the recorded lateness (after stop()); the same rank as bench_pool's
  /// histogram quantiles: the sample at index floor(q * n) in sorted order.
  wake_summary summary() {
    wake_summary s;
    s.samples = samples_.size();
    if (samples_.empty()) return s;
    std::sort(samples_.begin(), samples_.end());
    auto at = [&](double q) {
      auto i = static_cast<std::size_t>(q * static_cast<double>(samples_.size()));
      return samples_[std::min(i, samples_.size() - 1)];
    };
    s.p50_ns = at(0.5);
    s.p99_ns = at(0.99);
    s.max_ns = samples_.back();
    s.over_2ms = static_cast<std::size_t>(samples_.end() -
                                          std::upper_bound(samples_.begin(), samples_.end(), 2 * step_ns));
    return s;
  }

 private:
  static std::int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }

  // One sample per sleep: after a late wake the next deadline is the first boundary still ahead,
  // so one long stall counts once rather than as a run of already-passed boundaries.
  void run() {
#if defined(__linux__)
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
    std::int64_t due = (now_ns() / step_ns + 1) * step_ns;
    while (!stop_.load(std::memory_order_relaxed)) {
      timespec ts{static_cast<time_t>(due / 1'000'000'000), static_cast<long>(due % 1'000'000'000)};
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
      }
      std::int64_t woke = now_ns();
      if (samples_.size() < samples_.capacity()) samples_.push_back(woke - due);
      due = std::max(due + step_ns, (woke / step_ns + 1) * step_ns);
    }
  }

  std::vector<std::int64_t> samples_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  clockid_t cpu_clock_{};
  bool has_cpu_clock_ = false;
};

}  // namespace scenert::bench
