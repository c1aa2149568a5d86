#include "tick_clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace {

using scenert::detail::monotonic_ns;
using scenert::detail::tick_clock;
using scenert::detail::tsc_rate;

// A calibrated tick clock agrees with CLOCK_MONOTONIC and never runs backwards. The bound is
// generous (a preempted test thread sees its reads drift apart), the check is not.
TEST(TickClock, FollowsTheMonotonicClockAfterCalibration) {
  tsc_rate rate;
  rate.refine();
  std::this_thread::sleep_for(std::chrono::milliseconds(25));
  rate.refine();
  tick_clock clock(rate.ns_per_cycle(), nullptr);
  std::int64_t last = clock.now();
  for (int i = 0; i < 200'000; ++i) {
    std::int64_t before = monotonic_ns(), t = clock.now(), after = monotonic_ns();
    ASSERT_GE(t, last) << "read " << i;
    ASSERT_GT(t, before - 1'000'000) << "read " << i;
    ASSERT_LT(t, after + 1'000'000) << "read " << i;
    last = t;
  }
}

// A virtual machine's kernel clocks itself by kvm-clock; the CPU's flags still tell whether its
// counter keeps one rate.
TEST(TickClock, TrustsTheCounterOnlyWhenItIsInvariant) {
  EXPECT_TRUE(tsc_rate::invariant_tsc("flags\t\t: fpu tsc constant_tsc rep_good nonstop_tsc cpuid"));
  EXPECT_FALSE(tsc_rate::invariant_tsc("flags\t\t: fpu tsc constant_tsc rep_good cpuid"));
  EXPECT_FALSE(tsc_rate::invariant_tsc("flags\t\t: fpu tsc nonstop_tsc"));
  EXPECT_FALSE(tsc_rate::invariant_tsc("flags\t\t: fpu tsc constant_tsc_x nonstop_tsc"));
}

TEST(TickClock, ReadsTheManualClockWhenGivenOne) {
  scenert::manual_clock manual;
  tick_clock clock(1.0, &manual);
  auto t0 = clock.now();
  manual.advance(std::chrono::milliseconds(7));
  EXPECT_EQ(clock.now() - t0, 7'000'000);
}

TEST(TickClock, WithoutARateIsTheMonotonicClock) {
  tick_clock clock(0, nullptr);
  std::int64_t before = monotonic_ns(), t = clock.now(), after = monotonic_ns();
  EXPECT_LE(before, t);
  EXPECT_LE(t, after);
}

}  // namespace
