#pragma once
/// detail::tsc_rate and detail::tick_clock: the steady clock read once per batch of ticks, and in
/// between through the CPU's time stamp counter (a few ns instead of the ~20 ns of clock_gettime,
/// which a no-op tick would otherwise spend a quarter of its cost on).

#include <atomic>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

#include <scenert/runtime/clock.hpp>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace scenert::detail {

/// CLOCK_MONOTONIC in nanoseconds.
inline std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline std::uint64_t read_tsc() noexcept {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return 0;
#endif
}

/// Nanoseconds per TSC cycle, measured against CLOCK_MONOTONIC over a baseline that grows as the
/// pool runs (so NTP's slewing of the monotonic clock is followed too). Zero, and never used,
/// where the counter cannot be trusted as a clock: see counter_is_a_clock().
/// Thread-safety: refine() from the scheduling thread; ns_per_cycle() from any thread.
class tsc_rate {
 public:
  tsc_rate() : usable_(counter_is_a_clock()) {}

  /// Takes a (clock, counter) pair; the rate is published once 20 ms separate it from the first.
  void refine() noexcept {
    if (!usable_) return;
    std::uint64_t c = read_tsc();
    std::int64_t ns = monotonic_ns();
    if (ns0_ == 0) {
      ns0_ = ns, tsc0_ = c;
      return;
    }
    if (ns - ns0_ < 20'000'000 || c <= tsc0_) return;
    rate_.store(static_cast<double>(ns - ns0_) / static_cast<double>(c - tsc0_), std::memory_order_relaxed);
  }
  [[nodiscard]] double ns_per_cycle() const noexcept { return rate_.load(std::memory_order_relaxed); }

  /// The kernel clocks itself by the TSC, or the CPU says its TSC runs at one rate through
  /// frequency changes and sleep states (an invariant TSC). A virtual machine's kernel clocks
  /// itself by kvm-clock even then, and a clock_gettime there cost about 30 ns more per tick than
  /// the counter (a third of a no-op tick); the counter is safe to extrapolate by, since a tick
  /// clock re-anchors to the kernel's clock every millisecond and whenever the counter jumps.
  static bool counter_is_a_clock() {
#if defined(__x86_64__)
    std::ifstream source("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    std::string s;
    if (source >> s && s == "tsc") return true;
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
      if (line.rfind("flags", 0) == 0) return invariant_tsc(line);
#endif
    return false;
  }
  /// Whether a /proc/cpuinfo flags line names both halves of an invariant TSC.
  static bool invariant_tsc(const std::string& flags) {
    std::istringstream words(flags);
    bool constant = false, nonstop = false;
    for (std::string w; words >> w;) {
      constant = constant || w == "constant_tsc";
      nonstop = nonstop || w == "nonstop_tsc";
    }
    return constant && nonstop;
  }

 private:
  bool usable_;
  std::int64_t ns0_ = 0;
  std::uint64_t tsc0_ = 0;
  std::atomic<double> rate_{0};
};

/// One worker's clock over one batch: anchored to CLOCK_MONOTONIC at the start and again after
/// each millisecond, extrapolated by the counter in between (an error of nanoseconds, in 32.32
/// fixed point: no float conversions on a tick's path), and never running backwards. Without a
/// rate it is CLOCK_MONOTONIC itself; with a manual clock, that clock.
class tick_clock {
 public:
  tick_clock(double ns_per_cycle, const clock* manual) noexcept
      : manual_(manual),
        mult_(manual != nullptr || !(ns_per_cycle > 0) ? 0
                                                       : static_cast<std::uint64_t>(ns_per_cycle * 0x1p32)) {
    if (manual_ == nullptr) anchor();
  }

  std::int64_t now() noexcept {
    if (mult_ != 0) [[likely]] {
      std::uint64_t cycles = read_tsc() - tsc0_;
      if (cycles > reanchor_cycles_) [[unlikely]]
        return anchor();
      auto t = ns0_ + static_cast<std::int64_t>((cycles * mult_) >> 32);
      last_ = t > last_ ? t : last_;
      return last_;
    }
    if (manual_ != nullptr) return manual_->now().time_since_epoch().count();
    return monotonic_ns();
  }

 private:
  std::int64_t anchor() noexcept {
    tsc0_ = read_tsc();
    ns0_ = monotonic_ns();
    last_ = ns0_ > last_ ? ns0_ : last_;
    // A millisecond of cycles (below 2^32 for any counter under 4 THz), so that cycles * mult_
    // stays within 64 bits.
    if (mult_ != 0) reanchor_cycles_ = (std::uint64_t{1'000'000} << 32) / mult_;
    return last_;
  }

  const clock* manual_;
  std::uint64_t mult_;  // ns per cycle, times 2^32; 0: no counter
  std::uint64_t tsc0_ = 0, reanchor_cycles_ = 0;
  std::int64_t ns0_ = 0, last_ = 0;
};

}  // namespace scenert::detail
