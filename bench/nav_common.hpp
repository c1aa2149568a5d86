#pragma once
// What the nav benches share: generated maps with scenarios whose optimal lengths come from a
// flow field (a Dijkstra independent of A* and JPS), and the count of a global operator new
// (nav_alloc_counter.cpp, linked into each nav bench).
#include <scenert/nav/flow_field.hpp>
#include <scenert/nav/map_gen.hpp>
#include <scenert/nav/movingai.hpp>
#include <scenert/nav/nav_map.hpp>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <vector>

namespace scenert::bench {
/// Calls of operator new since the start of the process.
extern std::atomic<std::uint64_t> nav_allocations;
}  // namespace scenert::bench

namespace scenert::bench {

struct nav_case {
  std::shared_ptr<const nav::nav_map> map;
  std::vector<nav::scenario> scenarios;
};

// `paths` reachable scenarios on a generated map: 8 goals, the starts spread over the map, buckets
// of `bucket_size` length; lengths from the goal's flow field.
inline nav_case generated_case(nav::map_kind kind, std::uint32_t size, std::uint32_t paths,
                               std::uint64_t seed, double bucket_size) {
  nav::map_spec spec{kind, size, size, seed};
  spec.corridor = kind == nav::map_kind::maze ? 2 : 1;
  const auto blocks = nav::generate_blocks(spec);
  nav_case out{*nav::nav_map::create(size, size, blocks), {}};
  nav::nav_random rng(seed * 7919);
  const auto open_cell = [&] {
    for (;;) {
      const nav::cell c{rng.below(size), rng.below(size)};
      if (out.map->passable(c.x, c.y)) return c;
    }
  };
  nav::flow_field field;
  const std::uint32_t goals = 8;
  for (std::uint32_t g = 0; g < goals; ++g) {
    const nav::cell goal = open_cell();
    field.begin(*out.map, goal);
    while (!field.build(1u << 20)) {
    }
    for (std::uint32_t k = 0; k < (paths + goals - 1) / goals && out.scenarios.size() < paths;) {
      const nav::cell start = open_cell();
      const double d = field.distance(start);
      if (std::isinf(d) || d == 0) continue;
      out.scenarios.push_back(
          {static_cast<std::uint32_t>(d / bucket_size), "generated", size, size, start, goal, d, 0});
      ++k;
    }
  }
  return out;
}

}  // namespace scenert::bench
