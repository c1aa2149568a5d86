// The world's spreading of scene groups over their period (reaches into scene/src).
#include "tick_phases.hpp"

#include <gtest/gtest.h>

#include <set>

namespace scenert::detail {
namespace {

using namespace std::chrono_literals;

TEST(TickPhases, GroupsOpenedTogetherLandOnDifferentMilliseconds) {
  tick_phases phases;
  std::set<std::int64_t> seen;
  for (int i = 0; i < 100; ++i) {  // a burst of 100 full groups at 10 Hz: one per millisecond
    auto p = phases.take(10);
    phases.adjust(10, p, 100);
    seen.insert(std::chrono::duration_cast<std::chrono::milliseconds>(p).count());
  }
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(*seen.rbegin(), 99);
  EXPECT_EQ(phases.take(10), 0ms);  // the 101st shares the first millisecond
}

TEST(TickPhases, ALightenedMillisecondIsChosenNextAndRatesAreApart) {
  tick_phases phases;
  for (int i = 0; i < 33; ++i) phases.adjust(30, phases.take(30), 20);  // 30 Hz: 33 whole ms
  EXPECT_EQ(phases.take(30), 0ms);
  phases.adjust(30, 17ms, -15);
  EXPECT_EQ(phases.take(30), 17ms);
  EXPECT_EQ(phases.take(10), 0ms);  // another rate has its own period
  phases.adjust(10, 0ms, 5);
  EXPECT_EQ(phases.take(10), 1ms);
}

}  // namespace
}  // namespace scenert::detail
