#pragma once
// The plain, obviously correct reference: Dijkstra from one cell over the 8 moves, checked with
// can_step (no corner cutting), a std::priority_queue, no tricks. Shared by the nav tests.

#include <scenert/nav/map_gen.hpp>
#include <scenert/nav/nav_map.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <vector>

namespace scenert::nav::test {

inline constexpr double unreachable = std::numeric_limits<double>::infinity();

// Distances from `from` to every cell (infinity where unreachable or blocked).
inline std::vector<double> dijkstra(const nav_map& map, cell from, const cell_filter& filter = {}) {
  std::vector<double> dist(map.cell_count(), unreachable);
  if (!can_stand(map, from.x, from.y, filter)) return dist;
  using item = std::pair<double, std::uint32_t>;
  std::priority_queue<item, std::vector<item>, std::greater<>> open;
  dist[map.index(from)] = 0;
  open.push({0, map.index(from)});
  while (!open.empty()) {
    const auto [d, i] = open.top();
    open.pop();
    if (d > dist[i]) continue;
    const cell c = map.at(i);
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        const cell n{c.x + dx, c.y + dy};  // wraps past 0: then not on the map, can_step says no
        if (!can_step(map, c, n, filter)) continue;
        const double nd = d + ((dx != 0 && dy != 0) ? std::sqrt(2.0) : 1.0);
        if (nd < dist[map.index(n)]) dist[map.index(n)] = nd, open.push({nd, map.index(n)});
      }
    }
  }
  return dist;
}

inline std::shared_ptr<const nav_map> make_map(const map_spec& spec) {
  auto blocks = generate_blocks(spec);
  return *nav_map::create(spec.width, spec.height, blocks);
}

inline cell random_cell(nav_random& rng, const nav_map& map) {
  return {rng.below(map.width()), rng.below(map.height())};
}

// A passable cell (the map must have one).
inline cell random_open_cell(nav_random& rng, const nav_map& map) {
  for (;;) {
    const cell c = random_cell(rng, map);
    if (map.passable(c.x, c.y)) return c;
  }
}

}  // namespace scenert::nav::test
