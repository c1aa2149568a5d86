#include <scenert/scene/grid/map_data.hpp>

#include <gtest/gtest.h>

namespace scenert::grid {
namespace {

TEST(MapData, CountsRaggedAreasAtTheEdges) {
  auto m = map_data::create({37, 23, 5, 4, 2, 2, {}});
  ASSERT_TRUE(m);
  EXPECT_EQ((*m)->areas_x(), 8u);
  EXPECT_EQ((*m)->areas_y(), 6u);
  EXPECT_EQ((*m)->area_count(), 48u);
  EXPECT_EQ((*m)->area_of({36, 22}), (area_point{7, 5}));
  EXPECT_EQ((*m)->area_index({36, 22}), 47u);
  EXPECT_EQ((*m)->area_at(47), (area_point{7, 5}));
  EXPECT_EQ((*m)->area_of({4, 3}), (area_point{0, 0}));
  EXPECT_EQ((*m)->area_of({5, 4}), (area_point{1, 1}));
}

TEST(MapData, RejectsZeroSizesAreasAndRadii) {
  EXPECT_EQ(map_data::create({0, 10, 1, 1, 1, 1, {}}).code(), grid_errc::invalid_geometry);
  EXPECT_EQ(map_data::create({10, 0, 1, 1, 1, 1, {}}).code(), grid_errc::invalid_geometry);
  EXPECT_EQ(map_data::create({10, 10, 0, 1, 1, 1, {}}).code(), grid_errc::invalid_geometry);
  EXPECT_EQ(map_data::create({10, 10, 1, 0, 1, 1, {}}).code(), grid_errc::invalid_geometry);
  EXPECT_EQ(map_data::create({10, 10, 1, 1, 0, 1, {}}).code(), grid_errc::invalid_geometry);
  auto bad = map_data::create({10, 10, 1, 1, 1, 0, {}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("eyesight"), std::string::npos) << bad.error().message;
}

TEST(MapData, RejectsMapsBeyondTheCellIndex) {
  auto bad = map_data::create({70000, 70000, 16, 16, 1, 1, {}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.code(), grid_errc::map_too_large);
  EXPECT_NE(bad.error().message.find("70000x70000"), std::string::npos) << bad.error().message;
}

TEST(MapData, RejectsFlagsOfTheWrongSize) {
  EXPECT_EQ(map_data::create({4, 4, 2, 2, 1, 1, std::vector<std::uint8_t>(15)}).code(),
            grid_errc::invalid_geometry);
}

TEST(MapData, KeepsStaticCellFlags) {
  std::vector<std::uint8_t> flags(12, 0);
  flags[1 * 4 + 2] = cell_block;
  flags[0] = cell_safe_zone;
  auto m = map_data::create({4, 3, 2, 2, 1, 1, flags});
  ASSERT_TRUE(m);
  EXPECT_TRUE((*m)->is_block({2, 1}));
  EXPECT_FALSE((*m)->is_block({1, 2}));
  EXPECT_EQ((*m)->flags({0, 0}), cell_safe_zone);
  EXPECT_TRUE((*m)->contains({3, 2}));
  EXPECT_FALSE((*m)->contains({4, 2}));
  EXPECT_FALSE((*m)->contains({3, 3}));
}

}  // namespace
}  // namespace scenert::grid
