#include <scenert/nav/flow_field.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "oracle.hpp"

namespace scenert::nav {
namespace {

using test::make_map;

TEST(FlowField, EqualsTheOracleDistances) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const auto map = make_map(
        {static_cast<map_kind>(seed % 4), 90, 70, seed, 0.3, 12, 1 + static_cast<std::uint32_t>(seed % 2)});
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
      if (std::isinf(want[i]))
        ASSERT_TRUE(std::isinf(got)) << i;
      else
        ASSERT_NEAR(got, want[i], 1e-9 * std::max(1.0, want[i])) << i;
    }
    EXPECT_GT(builds, 1);
  }
}

// begin() only records the target (the next build clears the arrays): a field begun many times
// toward other targets, some builds abandoned halfway, answers exactly as the oracle for its last
// one, and nothing before the build that follows a begin.
TEST(FlowField, ARebuiltFieldForgetsEveryEarlierBuild) {
  const auto map = make_map({map_kind::rooms, 60, 50, 3, 0.3, 10, 1});
  nav_random rng(11);
  flow_field field;
  for (int round = 0; round < 40; ++round) {
    field.begin(*map, test::random_cell(rng, *map));
    if (round % 3 != 0) (void)field.build(rng.below(3000));  // abandoned, complete or not
  }
  const cell target = test::random_cell(rng, *map);
  const auto want = test::dijkstra(*map, target);
  field.begin(*map, target);
  EXPECT_FALSE(field.next_step(target).has_value());
  EXPECT_TRUE(std::isinf(field.distance(target)));  // the last build's answers are gone
  while (!field.build(1 + rng.below(300))) {
  }
  for (std::uint32_t i = 0; i < map->cell_count(); ++i) {
    const double got = field.distance(map->at(i));
    if (std::isinf(want[i]))
      ASSERT_TRUE(std::isinf(got)) << i;
    else
      ASSERT_NEAR(got, want[i], 1e-9 * std::max(1.0, want[i])) << i;
  }
  // Another map size starts the arrays afresh.
  const auto small = make_map({map_kind::open, 20, 10, 4});
  field.begin(*small, {5, 5});
  while (!field.build(100)) {
  }
  EXPECT_EQ(field.distance({5, 5}), 0.0);
  EXPECT_EQ(field.distance({6, 5}), 1.0);
  EXPECT_TRUE(std::isinf(field.distance({25, 5})));
}

// A field with a reach holds exactly the cells within that distance (by path) of its target, each
// at the oracle's distance, and no other; builds of other reaches and targets before it, some
// abandoned, leave nothing behind (a restart clears only the last build's square).
TEST(FlowField, AFieldWithAReachEqualsTheFullFieldWithinItAndHoldsNothingBeyond) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const auto map = make_map(
        {static_cast<map_kind>(seed % 4), 70, 60, seed, 0.25, 10, 1 + static_cast<std::uint32_t>(seed % 2)});
    nav_random rng(seed * 7);
    flow_field field;
    for (int round = 0; round < 12; ++round) {
      const double reach = round % 4 == 0 ? std::numeric_limits<double>::infinity() : rng.below(40);
      field.begin(*map, test::random_cell(rng, *map), {}, reach);
      if (round % 3 != 0) (void)field.build(rng.below(2000));  // abandoned, complete or not
    }
    const cell target = test::random_open_cell(rng, *map);
    const double reach = 2 + rng.below(30) + 0.5;
    const auto want = test::dijkstra(*map, target);
    field.begin(*map, target, {}, reach);
    while (!field.build(1 + rng.below(200))) {
    }
    EXPECT_EQ(field.reach(), reach);
    std::uint32_t inside = 0;
    for (std::uint32_t i = 0; i < map->cell_count(); ++i) {
      const double got = field.distance(map->at(i));
      if (std::isinf(want[i]) || want[i] > reach) {
        ASSERT_TRUE(std::isinf(got)) << "seed " << seed << " cell " << i << " at " << want[i];
      } else {
        ASSERT_NEAR(got, want[i], 1e-9 * std::max(1.0, want[i])) << "seed " << seed << " cell " << i;
        ++inside;
      }
    }
    EXPECT_GE(inside, 1u);
    // Every step it gives from a cell inside goes down toward the target, as the full field's.
    for (std::uint32_t i = 0; i < map->cell_count(); ++i) {
      const cell from = map->at(i);
      if (auto to = field.next_step(from)) {
        EXPECT_TRUE(can_step(*map, from, *to));
        EXPECT_LT(field.distance(*to), field.distance(from));
      }
    }
  }
}

// A field's arrays cover the square its reach can touch, clamped to the map: on a large map a near
// field holds a few hundred cells, not the map's quarter million (a dungeon line's four fields held
// 1.6 MB before), an unbounded one the whole map, one toward a cell off the map nothing.
TEST(FlowField, HoldsOnlyTheCellsItsReachCanTouch) {
  const auto map = make_map({map_kind::open, 512, 512, 3, 0.2, 16, 1});
  flow_field field;
  const auto build = [&](cell target, double reach) {
    field.begin(*map, target, {}, reach);
    while (!field.build(100000)) {
    }
    return field.cells_held();
  };
  EXPECT_EQ(build({200, 300}, std::numeric_limits<double>::infinity()), map->cell_count());
  EXPECT_EQ(build({200, 300}, 8.5), 17u * 17u);
  EXPECT_EQ(build({3, 510}, 8), 12u * 10u);  // clamped at the map's edges: x 0..11, y 502..511
  EXPECT_EQ(build({600, 10}, 8), 0u);
  EXPECT_TRUE(std::isinf(field.distance({600, 10})));
  EXPECT_TRUE(std::isinf(field.distance({3, 510})));
}

// next_step, against its definition: the allowed neighbour (can_step, under the cell cap) whose
// distance is lowest and below the mover's own, the first in a fixed order on ties; on every cell of
// random maps, with and without a reach, some cells full.
TEST(FlowField, NextStepIsTheAllowedNeighbourNearestTheTarget) {
  constexpr int order[8][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}, {1, 1}, {-1, 1}, {-1, -1}, {1, -1}};
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const auto map = make_map({static_cast<map_kind>(seed % 4), 40, 30, seed, 0.3, 8, 1});
    nav_random rng(seed);
    std::vector<std::uint8_t> full(map->cell_count());
    for (auto& f : full) f = rng.below(5) == 0 ? 1 : 0;
    const auto count = [&](cell c) -> std::uint32_t {
      return map->contains(c.x, c.y) ? full[map->index(c)] : 0;
    };
    const cell_counter counts(count);
    flow_field field;
    field.begin(*map, test::random_open_cell(rng, *map), {}, seed % 2 == 0 ? 12.0 : 1e9);
    while (!field.build(500)) {
    }
    for (std::uint32_t i = 0; i < map->cell_count(); ++i) {
      const cell from = map->at(i);
      // A plain cell and a flag, not an optional: g++ 12 at -O1 under TSan takes a compared optional's
      // payload for uninitialised.
      cell want{};
      bool wanted = false;
      double best = field.distance(from);
      for (const auto& d : order) {
        const cell n{from.x + d[0], from.y + d[1]};
        if (field.distance(n) < best && can_step(*map, from, n) && count(n) < 1)
          want = n, wanted = true, best = field.distance(n);
      }
      if (from == field.target()) wanted = false;
      const auto got = field.next_step(from, counts, 1);
      ASSERT_EQ(got.has_value(), wanted) << "seed " << seed << " cell " << i;
      if (wanted) {
        ASSERT_TRUE(*got == want) << "seed " << seed << " cell " << i;
      }
    }
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
  while (!field.build(4096)) {
  }
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
