#pragma once
// Distances on the grid, as the module's rules count them.
#include <algorithm>
#include <cstdint>

#include <scenert/scene/grid/types.hpp>

namespace dungeon::detail {

/// Chebyshev distance: the king's moves between two cells (a diagonal neighbour is 1 away).
inline std::uint32_t cells_apart(scenert::grid::cell_point a, scenert::grid::cell_point b) {
  const auto dx = a.x > b.x ? a.x - b.x : b.x - a.x;
  const auto dy = a.y > b.y ? a.y - b.y : b.y - a.y;
  return std::max(dx, dy);
}

}  // namespace dungeon::detail
