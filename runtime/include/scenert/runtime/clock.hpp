#pragma once
/// Time sources for the processor pool: the steady clock in production, a manual clock in tests.

#include <atomic>
#include <chrono>

namespace scenert {

using time_point = std::chrono::steady_clock::time_point;
using std::chrono::nanoseconds;

/// A source of the current time.
/// Thread-safety: now() may be called from any thread.
class clock {
 public:
  virtual ~clock() = default;
  [[nodiscard]] virtual time_point now() const noexcept = 0;
};

/// std::chrono::steady_clock.
class steady_clock_source final : public clock {
 public:
  [[nodiscard]] time_point now() const noexcept override { return std::chrono::steady_clock::now(); }
};

/// A clock that moves only when told to. A processor pool built on one runs due ticks inline,
/// on the calling thread, when the test calls processor_pool::advance — deterministic, no sleeps.
/// Thread-safety: now() from any thread; advance() from one thread at a time.
class manual_clock final : public clock {
 public:
  /// Starts at an arbitrary fixed epoch (one hour after the steady clock's zero).
  manual_clock() = default;
  [[nodiscard]] time_point now() const noexcept override {
    return time_point{nanoseconds{now_ns_.load(std::memory_order_acquire)}};
  }
  /// Moves time forward; a tick may call this to simulate its own running time.
  void advance(nanoseconds dt) noexcept { now_ns_.fetch_add(dt.count(), std::memory_order_acq_rel); }

 private:
  std::atomic<nanoseconds::rep> now_ns_{std::chrono::hours(1) / nanoseconds(1)};
};

}  // namespace scenert
