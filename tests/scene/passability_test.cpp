// A mover's barrier mask against its line's occupancy, as nav/ sees it (grid::occupancy_passability):
// random maps and random occupants against a brute-force Dijkstra on the combined passability, for
// A*, JPS (the map's skip tables stay built; a filtered search scans cell by cell) and the sliced
// path queue; steering never enters a cell the mask blocks.
#include <scenert/nav/map_gen.hpp>
#include <scenert/nav/path_queue.hpp>
#include <scenert/nav/search.hpp>
#include <scenert/nav/steering.hpp>
#include <scenert/scene/grid/passability.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <queue>
#include <vector>

#include "../nav/oracle.hpp"

namespace scenert {
namespace {

using nav::cell;

// The plain reference: Dijkstra over the 8 moves, each checked by can_step with the same filter.
using nav::test::dijkstra;
using nav::test::unreachable;

// One random map as both the scene's map data and nav/'s map, with an occupancy layer over it.
struct world_map {
  std::shared_ptr<const grid::map_data> data;
  std::shared_ptr<const nav::nav_map> nav;
  std::unique_ptr<grid::occupancy> layer;

  world_map(nav::map_kind kind, std::uint32_t w, std::uint32_t h, std::uint64_t seed) {
    const auto blocks = nav::generate_blocks({kind, w, h, seed, 0.2, 12});
    grid::map_spec spec{w, h, 16, 16, 1, 1, {}};
    spec.cell_flags.assign(blocks.size(), 0);
    for (std::size_t i = 0; i < blocks.size(); ++i) spec.cell_flags[i] = blocks[i] ? grid::cell_block : 0;
    data = *grid::map_data::create(std::move(spec));
    nav = *nav::nav_map::create(w, h, blocks);
    layer = std::make_unique<grid::occupancy>(data);
  }
  cell random_open(nav::nav_random& rng) const {
    for (;;) {
      const cell c{rng.below(nav->width()), rng.below(nav->height())};
      if (nav->passable(c.x, c.y)) return c;
    }
  }
  // Occupants of every kind on about `share` of the open cells.
  void scatter(nav::nav_random& rng, double share) {
    constexpr grid::barrier_mask mark_only{true, false, false, false, false, false};
    const auto n = static_cast<std::uint32_t>(share * nav->cell_count());
    for (std::uint32_t i = 0; i < n; ++i)
      (void)layer->occupy({rng.below(nav->width()), rng.below(nav->height())},
                          static_cast<grid::occupant>(rng.below(4)), mark_only);
  }
};

constexpr grid::barrier_mask masks[] = {grid::barrier_slack, grid::barrier_default, grid::barrier_item};

TEST(OccupancyPassability, SearchesMatchDijkstraOnTheMapAndTheMasksOccupancy) {
  nav::search_context ctx;
  std::vector<cell> path;
  int found = 0, unreached = 0;
  for (std::uint64_t seed = 1; seed <= 9; ++seed) {
    world_map m(seed % 3 == 0 ? nav::map_kind::rooms : nav::map_kind::random, 72, 56, seed);
    nav::nav_random rng(seed * 31);
    m.scatter(rng, 0.04 * static_cast<double>(seed % 4 + 1));
    const grid::barrier_mask mask = masks[seed % 3];
    const cell start = m.random_open(rng);
    for (int q = 0; q < 30; ++q) {
      const cell goal = m.random_open(rng);
      const grid::occupancy_passability pass{m.layer.get(), mask, start, goal};
      const nav::cell_filter filter(pass);
      const double want = dijkstra(*m.nav, start, filter)[m.nav->index(goal)];
      for (auto algo : {nav::algorithm::astar, nav::algorithm::jps}) {
        SCOPED_TRACE(testing::Message() << "seed " << seed << " query " << q << " " << nav::to_string(algo));
        const auto out = ctx.find(*m.nav, start, goal, algo, path, filter);
        if (want == unreachable) {
          EXPECT_EQ(out.status, nav::search_status::unreachable);
          continue;
        }
        ASSERT_EQ(out.status, nav::search_status::found);
        EXPECT_NEAR(out.length, want, 1e-9);
        const auto checked = nav::validate_path(*m.nav, path, start, goal, filter);
        ASSERT_TRUE(checked.has_value()) << checked.error().message;
        EXPECT_NEAR(*checked, want, 1e-9);
      }
      (want == unreachable ? unreached : found) += 1;
    }
  }
  EXPECT_GT(found, 100) << "too few reachable goals: the test proves little";
  EXPECT_GT(unreached, 0) << "no goal walled off by occupants: unreachable is untested";
}

TEST(OccupancyPassability, ASlicedSearchEqualsTheWholeOne) {
  world_map m(nav::map_kind::random, 80, 80, 5);
  nav::nav_random rng(5);
  m.scatter(rng, 0.08);
  nav::path_queue queue(m.nav, {64, 4, nav::algorithm::jps});
  nav::search_context ctx;
  std::vector<cell> whole, sliced;
  for (int q = 0; q < 20; ++q) {
    const cell start = m.random_open(rng), goal = m.random_open(rng);
    const grid::occupancy_passability pass{m.layer.get(), grid::barrier_default, start, goal};
    const auto out = ctx.find(*m.nav, start, goal, nav::algorithm::jps, whole, nav::cell_filter(pass));
    const auto h = *queue.submit(start, goal, nav::cell_filter(pass));
    while (*queue.state(h) == nav::request_state::waiting || *queue.state(h) == nav::request_state::running)
      (void)queue.step(1 + rng.below(40));
    if (out.status != nav::search_status::found) {
      EXPECT_EQ(*queue.state(h), nav::request_state::unreachable);
    } else {
      ASSERT_EQ(*queue.state(h), nav::request_state::found);
      ASSERT_EQ(queue.path(h, sliced), nav::nav_errc::ok);
      EXPECT_EQ(sliced, whole) << "query " << q;
    }
    (void)queue.cancel(h);
  }
}

TEST(OccupancyPassability, SteeringNeverEntersACellTheMaskBlocks) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    world_map m(nav::map_kind::random, 64, 64, seed + 40);
    nav::nav_random rng(seed);
    m.scatter(rng, 0.06);
    const grid::barrier_mask mask = masks[seed % 3];
    std::vector<nav::mob_steer> mobs;
    for (int i = 0; i < 60; ++i) {
      const cell c = m.random_open(rng);
      if (m.layer->can_stand({c.x, c.y}, mask)) mobs.push_back({c, c});
    }
    cell target = m.random_open(rng);
    int moves = 0;
    for (int tick = 0; tick < 300; ++tick) {
      if (tick % 30 == 0) target = m.random_open(rng);
      for (auto& mob : mobs) {
        const cell from = mob.position;
        const grid::occupancy_passability pass{m.layer.get(), mask, from, from};
        (void)nav::steer(*m.nav, mob, target, {20, 1000}, {}, nav::cell_filter(pass));
        if (mob.position == from) continue;
        ++moves;
        ASSERT_TRUE(m.layer->can_stand({mob.position.x, mob.position.y}, mask))
            << "seed " << seed << " tick " << tick << ": a mob entered a cell its mask blocks";
        ASSERT_TRUE(nav::can_step(*m.nav, from, mob.position, nav::cell_filter(pass)))
            << "seed " << seed << " tick " << tick << ": a step through a blocked corner";
      }
    }
    EXPECT_GT(moves, 1000) << "the mobs hardly moved: the run proves little";
  }
}

}  // namespace
}  // namespace scenert
