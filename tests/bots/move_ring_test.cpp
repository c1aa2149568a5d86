#include <scenert/bots/worker.hpp>

#include <gtest/gtest.h>

namespace scenert::bots {
namespace {

// A delivery is timed by the one move of its mover that went to its position: a position sent twice
// among the last moves names no one move, and answering with either (the first slot found did)
// makes seconds of latency out of a walk back and forth.
TEST(MoveRing, TimesAPositionOnlyWhenOneMoveWentThere) {
  move_ring ring;
  ring.put(7, 100);
  ring.put(8, 200);
  EXPECT_EQ(ring.find(7), 100);
  EXPECT_EQ(ring.find(8), 200);
  EXPECT_FALSE(ring.find(9).has_value());
  ring.put(7, 300);  // back where it was
  EXPECT_FALSE(ring.find(7).has_value());
  EXPECT_EQ(ring.find(8), 200);
}

TEST(MoveRing, ForgetsAMoveOnceItsSlotIsReused) {
  move_ring ring;
  ring.put(7, 100);
  for (std::uint64_t i = 0; i < move_ring::size - 1; ++i) ring.put(1000 + i, 200);
  EXPECT_EQ(ring.find(7), 100);
  ring.put(7, 900);  // the 33rd move takes the first one's slot: one move to 7 is left
  EXPECT_EQ(ring.find(7), 900);
}

}  // namespace
}  // namespace scenert::bots
