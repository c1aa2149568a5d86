// The admission gate's decision, fed samples at times the test says: no clock is read, nothing waits.
#include <scenert/net/admission.hpp>

#include <gtest/gtest.h>

namespace scenert::net {
namespace {

using namespace std::chrono_literals;
using time_point = admission_gate::time_point;

admission_options lines() {
  admission_options o;
  o.enabled = true;
  o.max_tick_lateness = 50ms;
  o.max_io_busy = 0.8;
  o.max_write_queue_bytes = 1000;
  o.close_after = 1000ms;
  o.reopen_after = 3000ms;
  o.reopen_share = 0.5;
  return o;
}

headroom late(std::chrono::milliseconds by) { return {by, 0.1, 1ms, 0}; }
headroom calm() { return {1ms, 0.1, 1ms, 10}; }

// Feeds `h` every quarter second from `from` for `span`; returns the time after the last sample.
time_point feed(admission_gate& g, const headroom& h, time_point from, std::chrono::milliseconds span) {
  for (auto t = from; t <= from + span; t += 250ms) g.update(h, t);
  return from + span + 250ms;
}

TEST(AdmissionGate, ClosesOnlyOnceAMeasureStayedOverItsLineForCloseAfter) {
  admission_gate g(lines());
  const time_point t0{};
  EXPECT_TRUE(g.update(late(80ms), t0));
  EXPECT_TRUE(g.update(late(80ms), t0 + 750ms));
  EXPECT_FALSE(g.update(late(80ms), t0 + 1000ms));
  EXPECT_EQ(g.over(), headroom_measure::tick_lateness);
  EXPECT_EQ(g.closings(), 1u);
}

TEST(AdmissionGate, ABlipUnderTheLineStartsTheCloseAfterAgain) {
  admission_gate g(lines());
  const time_point t0{};
  g.update(late(80ms), t0);
  g.update(late(80ms), t0 + 750ms);
  EXPECT_TRUE(g.update(calm(), t0 + 1000ms));
  EXPECT_TRUE(g.update(late(80ms), t0 + 1250ms));
  EXPECT_TRUE(g.update(late(80ms), t0 + 2000ms));
  EXPECT_FALSE(g.update(late(80ms), t0 + 2250ms));
}

TEST(AdmissionGate, OpensOnlyOnceEveryMeasureStayedUnderTheReopenShareForReopenAfter) {
  admission_gate g(lines());
  const time_point closed = feed(g, late(80ms), time_point{}, 1000ms);
  ASSERT_FALSE(g.admitting());
  EXPECT_FALSE(g.update(calm(), closed));
  EXPECT_FALSE(g.update(calm(), closed + 2750ms));
  EXPECT_TRUE(g.update(calm(), closed + 3000ms));
  EXPECT_EQ(g.over(), headroom_measure::none);
}

TEST(AdmissionGate, BetweenTheReopenShareAndTheLineItStaysAsItWasSoItDoesNotFlap) {
  admission_gate g(lines());
  const headroom near_line{40ms, 0.1, 1ms, 0};  // under the line (50 ms), over the reopen share (25 ms)
  // Open, it stays open however long it hovers there...
  time_point t = feed(g, near_line, time_point{}, 10'000ms);
  EXPECT_TRUE(g.admitting());
  // ...and closed, it stays closed.
  t = feed(g, late(80ms), t, 1000ms);
  ASSERT_FALSE(g.admitting());
  t = feed(g, near_line, t, 10'000ms);
  EXPECT_FALSE(g.admitting());
  EXPECT_EQ(g.closings(), 1u);
  // A calm sample amid them starts the reopen wait again.
  g.update(calm(), t);
  g.update(near_line, t + 2000ms);
  EXPECT_FALSE(g.update(calm(), t + 3500ms));
  EXPECT_TRUE(g.update(calm(), t + 6500ms));
}

TEST(AdmissionGate, NamesWhichMeasureIsOverItsLine) {
  admission_options o = lines();
  o.close_after = 0ms;
  admission_gate busy(o), lagging(o), queued(o);
  EXPECT_FALSE(busy.update({1ms, 0.9, 1ms, 0}, time_point{}));
  EXPECT_EQ(busy.over(), headroom_measure::io_busy);
  EXPECT_FALSE(lagging.update({1ms, 0.1, 60ms, 0}, time_point{}));
  EXPECT_EQ(lagging.over(), headroom_measure::io_lag);
  EXPECT_FALSE(queued.update({1ms, 0.1, 1ms, 5000}, time_point{}));
  EXPECT_EQ(queued.over(), headroom_measure::write_queue);
}

TEST(AdmissionGate, OffItAdmitsEveryLoginButStillSaysWhereTheHeadroomStands) {
  admission_options o = lines();
  o.enabled = false;
  admission_gate g(o);
  feed(g, late(80ms), time_point{}, 2000ms);
  EXPECT_TRUE(g.admitting());
  EXPECT_EQ(g.over(), headroom_measure::tick_lateness);
  EXPECT_EQ(g.closings(), 1u);
}

TEST(AdmissionOptions, EachLineOutOfRangeIsNamedWithItsReason) {
  EXPECT_EQ(admission_problem(lines()), "");
  auto o = lines();
  o.max_io_busy = 1.5;
  EXPECT_EQ(admission_problem(o), "max_io_busy 1.5: must be in (0, 1]");
  o = lines();
  o.max_tick_lateness = 0ms;
  EXPECT_EQ(admission_problem(o), "max_tick_lateness 0 ms: must be above 0");
  o = lines();
  o.reopen_share = 1;
  EXPECT_EQ(admission_problem(o), "reopen_share 1: must be in (0, 1)");
  o = lines();
  o.retry_after = 0ms;
  EXPECT_EQ(admission_problem(o), "retry_after 0 ms: must be in [1, 3600000]");
}

}  // namespace
}  // namespace scenert::net
