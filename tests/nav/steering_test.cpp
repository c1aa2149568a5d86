#include <scenert/nav/flow_field.hpp>
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

TEST(FlowField, EqualsTheOracleDistances) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const auto map = make_map({static_cast<map_kind>(seed % 4), 90, 70, seed, 0.3, 12, 1 + static_cast<std::uint32_t>(seed % 2)});
    nav_random rng(seed);
    const cell target = test::random_cell(rng, *map);
    const auto want = test::dijkstra(*map, target);
    flow_field field;
    field.begin(*map, target);
    int builds = 1;
    while (!field.build(1 + rng.below(500))) ++builds;
    EXPECT_TRUE(field.complete());
    for (std::uint32_t i = 0; i < map->cell_count(); ++i) {
      const double got = field.distance(map->at(i));
      if (std::isinf(want[i])) ASSERT_TRUE(std::isinf(got)) << i;
      else ASSERT_NEAR(got, want[i], 1e-9 * std::max(1.0, want[i])) << i;
    }
    EXPECT_GT(builds, 1);
  }
}

TEST(FlowField, IsUnusableUntilComplete) {
  const auto map = make_map({map_kind::open, 40, 40, 2});
  flow_field field;
  field.begin(*map, {20, 20});
  EXPECT_FALSE(field.build(10));
  EXPECT_FALSE(field.next_step({0, 0}).has_value());
  EXPECT_TRUE(std::isinf(field.distance({0, 0})));
}

TEST(FlowField, BringsMobsThroughAMazeWhereGreedySteeringStrandsThem) {
  // 300 mobs on random open cells of a 1-wide maze; a mob with a reachable target must get there
  // within its distance in steps (each step lowers it by at least 1). Greedy steering for as long
  // must strand most of them, or the maze proves nothing.
  const auto map = make_map({map_kind::maze, 129, 129, 11, 0.2, 16, 1});
  nav_random rng(11);
  const cell target = test::random_open_cell(rng, *map);
  flow_field field;
  field.begin(*map, target);
  while (!field.build(4096)) {}
  int reachable = 0, flow_reached = 0, greedy_reached = 0;
  for (int m = 0; m < 300; ++m) {
    const cell start = test::random_open_cell(rng, *map);
    if (std::isinf(field.distance(start))) continue;
    ++reachable;
    const auto limit = static_cast<int>(std::ceil(field.distance(start)));
    cell at = start;
    for (int s = 0; s < limit && at != target; ++s) at = field.next_step(at).value_or(at);
    flow_reached += at == target;
    mob_steer greedy{start, start};
    for (int s = 0; s < limit && greedy.position != target; ++s) (void)steer(*map, greedy, target, {1e9, 1});
    greedy_reached += greedy.position == target;
  }
  EXPECT_GT(reachable, 200);
  EXPECT_GE(flow_reached * 100, reachable * 99);
  EXPECT_LT(greedy_reached * 2, reachable);
}

}  // namespace
}  // namespace scenert::nav
