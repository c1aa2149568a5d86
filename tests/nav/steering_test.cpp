#include <scenert/nav/steering.hpp>

#include <gtest/gtest.h>

#include <cmath>

#include "oracle.hpp"

namespace scenert::nav {
namespace {

using test::make_map;

// The caller's side of the cell cap: mobs per cell.
struct crowd {
  const nav_map& map;
  std::vector<std::uint32_t> per_cell = std::vector<std::uint32_t>(map.cell_count(), 0);
  std::uint32_t operator()(cell c) const { return map.contains(c.x, c.y) ? per_cell[map.index(c)] : 0; }
  void move(cell from, cell to) { --per_cell[map.index(from)], ++per_cell[map.index(to)]; }
};

TEST(Steering, NeverEntersABlockedCellCutsACornerOrOverfillsACell) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const auto map = make_map({seed % 3 == 0 ? map_kind::rooms : map_kind::random, 80, 64, seed,
                               0.2 + 0.04 * static_cast<double>(seed), 10});
    nav_random rng(seed);
    const steer_rules rules{15, 1 + static_cast<std::uint32_t>(seed % 3)};
    crowd counts{*map};
    std::vector<mob_steer> mobs;
    while (mobs.size() < 150) {
      const cell c = test::random_open_cell(rng, *map);
      if (counts(c) < rules.cell_cap) mobs.push_back({c, c}), ++counts.per_cell[map->index(c)];
    }
    cell target = test::random_open_cell(rng, *map);
    for (int tick = 0; tick < 400; ++tick) {
      if (tick % 25 == 0) target = test::random_open_cell(rng, *map);
      for (auto& mob : mobs) {
        const cell from = mob.position;
        (void)steer(*map, mob, target, rules, cell_counter(counts));
        if (mob.position == from) continue;
        ASSERT_TRUE(can_step(*map, from, mob.position)) << "seed " << seed << " tick " << tick;
        counts.move(from, mob.position);
        ASSERT_LE(counts(mob.position), rules.cell_cap);
      }
    }
  }
}

TEST(Steering, SlidesAlongAWall) {
  // A wall across the straight line to the target, open below: the direct step is blocked.
  std::vector<std::uint8_t> blocks(10 * 10, 0);
  for (std::uint32_t y = 0; y < 5; ++y) blocks[y * 10 + 5] = 1;
  const auto map = *nav_map::create(10, 10, blocks);
  mob_steer mob{{4, 3}, {4, 3}};
  EXPECT_EQ(steer(*map, mob, cell{8, 3}, {50, 1}), steer_result::stayed);  // straight and both diagonals walled
  EXPECT_EQ(steer(*map, mob, cell{8, 4}, {50, 1}), steer_result::moved);   // slides down
  EXPECT_EQ(mob.position, (cell{4, 4}));
}

TEST(Steering, LeashReturnsHomeAndForgetsTheTarget) {
  const auto map = make_map({map_kind::random, 60, 60, 3, 0.0});
  mob_steer mob{{10, 10}, {10, 10}};
  const steer_rules rules{8, 1};
  int steps = 0;
  bool leashed = false;
  for (; steps < 200 && !leashed; ++steps) leashed = steer(*map, mob, cell{50, 50}, rules) == steer_result::leashed;
  ASSERT_TRUE(leashed);
  EXPECT_TRUE(mob.returning);
  EXPECT_LE(octile_distance(mob.position, mob.home), rules.leash + diagonal_cost);
  steer_result r = steer_result::moved;
  for (steps = 0; steps < 50 && r != steer_result::arrived; ++steps) r = steer(*map, mob, cell{50, 50}, rules);
  EXPECT_EQ(r, steer_result::arrived);
  EXPECT_EQ(mob.position, mob.home);
  EXPECT_FALSE(mob.returning);
}

}  // namespace
}  // namespace scenert::nav
