// Seed 001's full-load figures: one entity on every cell, one mover moved one area diagonally.
#include <scenert/scene/grid/grid.hpp>

#include <gtest/gtest.h>

namespace scenert::grid {
namespace {

struct counter {
  std::uint32_t entered = 0;
  std::uint32_t left = 0;
  void enter(entity_id) { ++entered; }
  void leave(entity_id) { ++left; }
};

// Fills a map of `areas` x `areas` areas, one entity per cell, and moves the entity at the centre of
// area (`from`, `from`) to the same cell of area (`from` + 1, `from` + 1).
counter full_load_diagonal_move(std::uint32_t aw, std::uint32_t ah, std::uint32_t r, std::uint32_t areas,
                                std::uint32_t from, std::uint32_t* view_size) {
  auto m = map_data::create({aw * areas, ah * areas, aw, ah, r, r, {}});
  EXPECT_TRUE(m);
  grid g(*m);
  for (std::uint32_t y = 0; y < ah * areas; ++y)
    for (std::uint32_t x = 0; x < aw * areas; ++x)
      EXPECT_TRUE(g.add(y * aw * areas + x, entity_type::player, {x, y}, ignore_view{}));
  const cell_point start{from * aw + aw / 2, from * ah + ah / 2};
  const entity_id mover = start.y * aw * areas + start.x;
  *view_size = 0;
  EXPECT_TRUE(g.for_each_in_view(start, type_mask::all, [&](entity_id) { ++*view_size; }));
  counter c;
  EXPECT_TRUE(g.move(mover, {start.x + aw, start.y + ah}, c));
  return c;
}

TEST(SeedFigures, NineGridWithTwelveByEightAreasMovesWith960EnterAndLeave) {
  std::uint32_t view = 0;
  const counter c = full_load_diagonal_move(12, 8, 1, 5, 1, &view);
  EXPECT_EQ(c.entered, 480u);
  EXPECT_EQ(c.left, 480u);
  EXPECT_EQ(c.entered + c.left, 960u);
  EXPECT_EQ(view, 864u);  // a full view: 12 * 8 * 9
}

TEST(SeedFigures, TwentyFiveGridWithSevenByFiveAreasMovesWith630EnterAndLeave) {
  std::uint32_t view = 0;
  const counter c = full_load_diagonal_move(7, 5, 2, 7, 2, &view);
  EXPECT_EQ(c.entered, 315u);
  EXPECT_EQ(c.left, 315u);
  EXPECT_EQ(c.entered + c.left, 630u);
  EXPECT_EQ(view, 875u);  // 7 * 5 * 25
}

}  // namespace
}  // namespace scenert::grid
