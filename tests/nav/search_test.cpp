#include <scenert/nav/search.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <unordered_set>

#include "oracle.hpp"

namespace scenert::nav {
namespace {

using test::dijkstra;
using test::make_map;

std::vector<map_spec> random_maps() {
  std::vector<map_spec> specs;
  std::uint64_t seed = 7;
  for (std::uint32_t size : {17u, 64u, 131u, 256u}) {
    specs.push_back({map_kind::open, size, size, seed++});
    specs.push_back({map_kind::random, size, size, seed++, 0.2});
    specs.push_back({map_kind::random, size, size + 3, seed++, 0.4});
    specs.push_back({map_kind::rooms, size, size, seed++, 0.2, 12});
    specs.push_back({map_kind::maze, size, size, seed++, 0.2, 16, 1});
    specs.push_back({map_kind::maze, size + 5, size, seed++, 0.2, 16, 3});
  }
  return specs;
}

// Checks one algorithm on one start against the oracle's distances to many goals.
void expect_matches_oracle(const nav_map& map, algorithm algo, cell start, nav_random& rng, int goals,
                           const cell_filter& filter = {}) {
  const auto dist = dijkstra(map, start, filter);
  search_context ctx;
  std::vector<cell> path;
  for (int k = 0; k < goals; ++k) {
    const cell goal = test::random_cell(rng, map);
    const auto out = ctx.find(map, start, goal, algo, path, filter);
    const double want = dist[map.index(goal)];
    SCOPED_TRACE(testing::Message() << to_string(algo) << " (" << start.x << "," << start.y << ")->("
                                    << goal.x << "," << goal.y << ")");
    if (std::isinf(want)) {
      ASSERT_EQ(out.status, search_status::unreachable);
      ASSERT_TRUE(path.empty());
      continue;
    }
    ASSERT_EQ(out.status, search_status::found);
    ASSERT_NEAR(out.length, want, 1e-9 * std::max(1.0, want));
    const auto checked = validate_path(map, path, start, goal, filter);
    ASSERT_TRUE(checked) << checked.error().message;
    ASSERT_NEAR(*checked, want, 1e-9 * std::max(1.0, want));
  }
}

// `starts` random starts per map, `goals` random goals per start.
void expect_matches_oracle_on_random_maps(algorithm algo, int starts, int goals) {
  for (const auto& spec : random_maps()) {
    SCOPED_TRACE(testing::Message() << to_string(spec.kind) << " " << spec.width << "x" << spec.height);
    const auto map = make_map(spec);
    nav_random rng(spec.seed * 31);
    for (int s = 0; s < starts; ++s)
      expect_matches_oracle(*map, algo, test::random_cell(rng, *map), rng, goals);
  }
}

TEST(Astar, MatchesDijkstraOnRandomMaps) { expect_matches_oracle_on_random_maps(algorithm::astar, 4, 40); }

TEST(Jps, MatchesDijkstraOnRandomMaps) { expect_matches_oracle_on_random_maps(algorithm::jps, 6, 60); }

TEST(Jps, MatchesDijkstraOnManySmallMaps) {
  // Small dense maps reach the corner cases (edges, single gaps, goals on a scan line) most often.
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    const map_spec spec{map_kind::random, 6 + static_cast<std::uint32_t>(seed % 11),
                        5 + static_cast<std::uint32_t>(seed % 7), seed,
                        0.15 + 0.25 * static_cast<double>(seed % 3) / 2};
    const auto map = make_map(spec);
    nav_random rng(seed);
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    expect_matches_oracle(*map, algorithm::jps, test::random_cell(rng, *map), rng, 20);
  }
}

TEST(Jps, SkipTableAndScansExpandAsTheCellByCellRules) {
  // The diagonal skip table with the bit scans, the bit scans alone (a map built without the
  // table) and the same rules applied cell by cell (what a filter gets; this one blocks nothing):
  // the same expansions, the same path.
  const auto nothing = [](cell) { return false; };
  for (const auto& spec : random_maps()) {
    SCOPED_TRACE(testing::Message() << to_string(spec.kind) << " " << spec.width << "x" << spec.height);
    const auto blocks = generate_blocks(spec);
    const auto map = *nav_map::create(spec.width, spec.height, blocks);
    const auto scanned = *nav_map::create(spec.width, spec.height, blocks, false);
    ASSERT_TRUE(map->has_diagonal_skips());
    ASSERT_FALSE(scanned->has_diagonal_skips());
    nav_random rng(spec.seed * 17);
    search_context skips, scans, cells;
    std::vector<cell> by_skips, by_scans, by_cells;
    for (int k = 0; k < 40; ++k) {
      const cell start = test::random_cell(rng, *map), goal = test::random_cell(rng, *map);
      const auto a = skips.find(*map, start, goal, algorithm::jps, by_skips);
      const auto b = scans.find(*scanned, start, goal, algorithm::jps, by_scans);
      const auto c = cells.find(*map, start, goal, algorithm::jps, by_cells, cell_filter(nothing));
      ASSERT_EQ(a.status, c.status);
      ASSERT_EQ(b.status, c.status);
      ASSERT_EQ(a.expansions, c.expansions);
      ASSERT_EQ(b.expansions, c.expansions);
      ASSERT_EQ(by_skips, by_cells);
      ASSERT_EQ(by_scans, by_cells);
    }
  }
}

TEST(NavMap, SkipTableFollowsItsDefinition) {
  // Each entry against a walk cell by cell: the steps to the first diagonal cell whose straight
  // jumps meet a jump point (by the scans' rule), or to the walk's last cell.
  const auto finds = [](const nav_map& m, std::int64_t x, std::int64_t y, int dx, int dy) {
    for (std::int64_t c = x + dx; dx != 0; c += dx) {  // along the row
      if (!m.passable(c, y)) break;
      if ((m.passable(c, y - 1) && !m.passable(c - dx, y - 1)) ||
          (m.passable(c, y + 1) && !m.passable(c - dx, y + 1)))
        return true;
    }
    for (std::int64_t r = y + dy; dy != 0; r += dy) {  // along the column
      if (!m.passable(x, r)) return false;
      if ((m.passable(x - 1, r) && !m.passable(x - 1, r - dy)) ||
          (m.passable(x + 1, r) && !m.passable(x + 1, r - dy)))
        return true;
    }
    return false;
  };
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const auto map =
        make_map({seed % 2 ? map_kind::random : map_kind::rooms, 23 + static_cast<std::uint32_t>(seed), 19,
                  seed, 0.1 + 0.02 * static_cast<double>(seed), 6});
    for (std::uint32_t i = 0; i < map->cell_count(); ++i) {
      const cell c = map->at(i);
      if (!map->passable(c.x, c.y)) continue;
      for (const int dy : {1, -1}) {
        for (const int dx : {1, -1}) {
          std::int64_t x = c.x, y = c.y, k = 0;
          bool meets = false;
          while (!meets && map->passable(x + dx, y) && map->passable(x, y + dy) &&
                 map->passable(x + dx, y + dy)) {
            x += dx, y += dy, ++k;
            meets = finds(*map, x, y, dx, dy);
          }
          // The walk is cut every 31 steps (its cell visited); bits 1 and 2: the cell's own jumps.
          if (k > 31) k = 31, meets = true;
          const unsigned own =
              (finds(*map, c.x, c.y, dx, 0) ? 2u : 0u) | (finds(*map, c.x, c.y, 0, dy) ? 4u : 0u);
          ASSERT_EQ(map->diagonal_skip(i, dx, dy), k * 8 + own + (meets ? 1 : 0))
              << "seed " << seed << " cell (" << c.x << "," << c.y << ") toward (" << dx << "," << dy << ")";
        }
      }
    }
  }
}

TEST(Search, BothAlgorithmsHonourADynamicFilter) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const auto map = make_map({seed % 2 ? map_kind::open : map_kind::random, 96, 80, seed, 0.15});
    nav_random rng(seed + 100);
    std::unordered_set<std::uint32_t> extra;
    for (int i = 0; i < 900; ++i) extra.insert(map->index(test::random_cell(rng, *map)));
    const auto blocked = [&](cell c) { return extra.count(map->index(c)) != 0; };
    for (auto algo : {algorithm::astar, algorithm::jps})
      expect_matches_oracle(*map, algo, test::random_cell(rng, *map), rng, 40, cell_filter(blocked));
  }
}

TEST(Search, ReportsStartOrGoalOutsideTheMap) {
  const auto map = make_map({map_kind::open, 10, 10, 1});
  search_context ctx;
  std::vector<cell> path{{1, 1}};
  EXPECT_EQ(ctx.find(*map, {10, 0}, {1, 1}, algorithm::jps, path).status, search_status::out_of_map);
  EXPECT_EQ(ctx.find(*map, {0, 0}, {1, 10}, algorithm::astar, path).status, search_status::out_of_map);
  EXPECT_TRUE(path.empty());
}

TEST(Search, AnIdleContextHasNoPathAndNoLength) {
  search_context ctx;
  std::vector<cell> path{{1, 1}};
  EXPECT_EQ(ctx.status(), search_status::idle);
  EXPECT_EQ(ctx.step(100), search_status::idle);
  EXPECT_EQ(ctx.length(), 0.0);
  ctx.path(path);
  EXPECT_TRUE(path.empty());
  ctx.partial_path(path);
  EXPECT_TRUE(path.empty());
}

TEST(Search, FindsTheTrivialPathFromACellToItself) {
  const auto map = make_map({map_kind::random, 10, 10, 1, 0.0});
  search_context ctx;
  std::vector<cell> path;
  for (auto algo : {algorithm::astar, algorithm::jps}) {
    const auto out = ctx.find(*map, {3, 4}, {3, 4}, algo, path);
    EXPECT_EQ(out.status, search_status::found);
    EXPECT_EQ(out.length, 0.0);
    EXPECT_EQ(path, (std::vector<cell>{{3, 4}}));
  }
}

TEST(Search, DoesNotCutCorners) {
  // Two blocks touching at a corner: the diagonal between the open cells is forbidden, no other way.
  // .#
  // #.
  const std::uint8_t blocks[] = {0, 1, 1, 0};
  const auto map = *nav_map::create(2, 2, blocks);
  search_context ctx;
  std::vector<cell> path;
  for (auto algo : {algorithm::astar, algorithm::jps})
    EXPECT_EQ(ctx.find(*map, {0, 0}, {1, 1}, algo, path).status, search_status::unreachable);
}

TEST(Search, ValidatePathNamesTheBadStep) {
  const std::uint8_t blocks[] = {0, 1, 0, 0};
  const auto map = *nav_map::create(2, 2, blocks);
  const auto bad = validate_path(*map, {{0, 0}, {1, 1}}, {0, 0}, {1, 1});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.code(), nav_errc::bad_path);
  EXPECT_NE(bad.error().message.find("step 1"), std::string::npos);
  EXPECT_TRUE(validate_path(*map, {{0, 0}, {0, 1}, {1, 1}}, {0, 0}, {1, 1}));
}

TEST(NavMap, RejectsBadSizes) {
  const std::uint8_t blocks[] = {0, 0, 0};
  EXPECT_EQ(nav_map::create(0, 3, {}).code(), nav_errc::invalid_map);
  EXPECT_EQ(nav_map::create(2, 2, blocks).code(), nav_errc::invalid_map);
  EXPECT_TRUE(nav_map::create(3, 1, blocks));
}

}  // namespace
}  // namespace scenert::nav
