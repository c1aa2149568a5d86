#include <scenert/scene/grid/occupancy.hpp>

#include <gtest/gtest.h>

namespace scenert::grid {
namespace {

std::shared_ptr<const map_data> small_map() {
  std::vector<std::uint8_t> flags(16, 0);
  flags[5] = cell_block;  // cell (1, 1)
  return *map_data::create({4, 4, 2, 2, 1, 1, flags});
}

TEST(Occupancy, BlocksStopEveryMask) {
  occupancy o(small_map());
  for (auto mask : {barrier_none, barrier_slack, barrier_default, barrier_item})
    EXPECT_FALSE(o.can_stand({1, 1}, mask));
  EXPECT_EQ(o.occupy({1, 1}, occupant::player, barrier_default).code(), grid_errc::cell_blocked);
}

TEST(Occupancy, MasksFollowSeedOne) {
  occupancy o(small_map());
  ASSERT_TRUE(o.occupy({0, 0}, occupant::player, barrier_default));
  EXPECT_FALSE(o.can_stand({0, 0}, barrier_default));  // players and monsters do not pass players
  EXPECT_TRUE(o.can_stand({0, 0}, barrier_slack));     // slack passes players
  EXPECT_TRUE(o.can_stand({0, 0}, barrier_item));      // items pass players
  EXPECT_TRUE(o.can_stand({0, 0}, barrier_none));
  ASSERT_TRUE(o.occupy({2, 0}, occupant::item, barrier_item));
  EXPECT_TRUE(o.can_stand({2, 0}, barrier_default));  // default passes items
  EXPECT_FALSE(o.can_stand({2, 0}, barrier_item));    // an item does not stand on an item
  ASSERT_TRUE(o.occupy({3, 0}, occupant::barrier, barrier_slack));
  EXPECT_FALSE(o.can_stand({3, 0}, barrier_slack));  // a fence stops everything that marks
  EXPECT_TRUE(o.can_stand({3, 0}, barrier_none));
}

TEST(Occupancy, CountsSeveralOccupantsAndReleasesThemOneByOne) {
  occupancy o(small_map());
  ASSERT_TRUE(o.occupy({2, 2}, occupant::monster, barrier_slack));
  ASSERT_TRUE(o.occupy({2, 2}, occupant::monster, barrier_slack));
  EXPECT_EQ(o.count({2, 2}, occupant::monster), 2u);
  ASSERT_TRUE(o.release({2, 2}, occupant::monster));
  EXPECT_FALSE(o.can_stand({2, 2}, barrier_default));
  ASSERT_TRUE(o.release({2, 2}, occupant::monster));
  EXPECT_TRUE(o.can_stand({2, 2}, barrier_default));
  EXPECT_EQ(o.release({2, 2}, occupant::monster).code(), grid_errc::not_occupied);
}

TEST(Occupancy, NoneMaskOccupiesNothing) {
  occupancy o(small_map());
  ASSERT_TRUE(o.occupy({0, 3}, occupant::player, barrier_none));
  EXPECT_EQ(o.count({0, 3}, occupant::player), 0u);
}

TEST(Occupancy, RejectsCellsOutsideTheMap) {
  occupancy o(small_map());
  EXPECT_FALSE(o.can_stand({4, 0}, barrier_none));
  auto r = o.occupy({4, 0}, occupant::player, barrier_default);
  EXPECT_EQ(r.code(), grid_errc::out_of_map);
  EXPECT_NE(r.error().message.find("(4, 0)"), std::string::npos);
  EXPECT_EQ(o.release({0, 9}, occupant::player).code(), grid_errc::out_of_map);
}

TEST(Occupancy, SaturatesInsteadOfWrapping) {
  occupancy o(small_map());
  for (int i = 0; i < 255; ++i) ASSERT_TRUE(o.occupy({3, 3}, occupant::item, barrier_slack));
  EXPECT_EQ(o.occupy({3, 3}, occupant::item, barrier_slack).code(), grid_errc::cell_full);
  EXPECT_EQ(o.count({3, 3}, occupant::player), 0u);
}

TEST(Occupancy, TwoLinesOfOneMapShareStaticDataButNotOccupants) {
  auto m = small_map();
  occupancy line1(m), line2(m);
  ASSERT_TRUE(line1.occupy({0, 0}, occupant::player, barrier_default));
  EXPECT_TRUE(line2.can_stand({0, 0}, barrier_default));
  EXPECT_EQ(&line1.map(), &line2.map());
  line1.clear();
  EXPECT_TRUE(line1.can_stand({0, 0}, barrier_default));
}

}  // namespace
}  // namespace scenert::grid
