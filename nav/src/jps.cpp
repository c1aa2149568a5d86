// Jump point search without corner cutting (Harabor and Grastien's rules for 8-connected grids
// where a diagonal needs both orthogonal neighbours): straight jumps stop where a side cell opens
// up after being blocked; a diagonal cell is a jump point when a straight jump from it finds one.
// On the map alone, straight jumps scan the map's bit rows and columns 64 cells per step; with a
// caller's filter they fall back to the same rules cell by cell.
#include <algorithm>
#include <bit>
#include <cstdlib>
#include <type_traits>

#include "search_state.hpp"

namespace scenert::nav {
namespace {

constexpr std::int64_t none = -1;

// First stop at or after `from` along `line` (a bit row or column), `a` and `b` its two side lines:
// a blocked cell (none), the goal, or a cell whose side opens where the previous one was blocked.
std::int64_t scan_up(const std::uint64_t* line, const std::uint64_t* a, const std::uint64_t* b,
                     std::size_t words, std::int64_t from, std::int64_t goal) {
  for (auto w = static_cast<std::size_t>(from / 64); w < words; ++w) {
    const std::uint64_t a_prev = (a[w] << 1) | (w > 0 ? a[w - 1] >> 63 : 0);
    const std::uint64_t b_prev = (b[w] << 1) | (w > 0 ? b[w - 1] >> 63 : 0);
    std::uint64_t stop = ~line[w] | (a[w] & ~a_prev) | (b[w] & ~b_prev);
    if (goal >= 0 && static_cast<std::size_t>(goal / 64) == w) stop |= std::uint64_t{1} << (goal % 64);
    if (w == static_cast<std::size_t>(from / 64)) stop &= ~std::uint64_t{0} << (from % 64);
    if (stop == 0) continue;
    const int bit = std::countr_zero(stop);
    return (line[w] >> bit) & 1 ? static_cast<std::int64_t>(w * 64) + bit : none;
  }
  return none;
}

// The same scanning toward lower positions.
std::int64_t scan_down(const std::uint64_t* line, const std::uint64_t* a, const std::uint64_t* b,
                       std::size_t words, std::int64_t from, std::int64_t goal) {
  if (from < 0) return none;
  for (auto w = from / 64; w >= 0; --w) {
    const auto u = static_cast<std::size_t>(w);
    const std::uint64_t a_next = (a[u] >> 1) | (u + 1 < words ? a[u + 1] << 63 : 0);
    const std::uint64_t b_next = (b[u] >> 1) | (u + 1 < words ? b[u + 1] << 63 : 0);
    std::uint64_t stop = ~line[u] | (a[u] & ~a_next) | (b[u] & ~b_next);
    if (goal >= 0 && goal / 64 == w) stop |= std::uint64_t{1} << (goal % 64);
    if (w == from / 64 && from % 64 != 63) stop &= (std::uint64_t{1} << (from % 64 + 1)) - 1;
    if (stop == 0) continue;
    const int bit = 63 - std::countl_zero(stop);
    return (line[u] >> bit) & 1 ? w * 64 + bit : none;
  }
  return none;
}

// A straight jump from `at` in direction `d` along a bit line between its two side lines.
std::int64_t jump_along(const std::uint64_t* line, const std::uint64_t* a, const std::uint64_t* b,
                        std::size_t words, std::int64_t at, int d, std::int64_t goal) {
  return d > 0 ? scan_up(line, a, b, words, at + 1, goal) : scan_down(line, a, b, words, at - 1, goal);
}

// Passability from the map's bit tables.
struct bit_grid {
  const search_state& s;
  bool open(std::int64_t x, std::int64_t y) const { return s.map->passable(x, y); }
  std::int64_t jump_x(std::int64_t x, std::int64_t y, int dx) const {
    const nav_map& m = *s.map;
    return jump_along(m.row_bits(y), m.row_bits(y - 1), m.row_bits(y + 1), m.row_words(), x, dx,
                      s.goal.y == y ? std::int64_t{s.goal.x} : none);
  }
  std::int64_t jump_y(std::int64_t x, std::int64_t y, int dy) const {
    const nav_map& m = *s.map;
    return jump_along(m.column_bits(x), m.column_bits(x - 1), m.column_bits(x + 1), m.column_words(), y, dy,
                      s.goal.x == x ? std::int64_t{s.goal.y} : none);
  }
};

// Passability from the map and the caller's filter, one cell at a time (online JPS).
struct filtered_grid {
  const search_state& s;
  bool open(std::int64_t x, std::int64_t y) const { return can_stand(*s.map, x, y, s.filter); }
  bool is_goal(std::int64_t x, std::int64_t y) const { return x == s.goal.x && y == s.goal.y; }
  std::int64_t jump_x(std::int64_t x, std::int64_t y, int dx) const {
    for (std::int64_t c = x + dx;; c += dx) {
      if (!open(c, y)) return none;
      if (is_goal(c, y) || (open(c, y - 1) && !open(c - dx, y - 1)) ||
          (open(c, y + 1) && !open(c - dx, y + 1)))
        return c;
    }
  }
  std::int64_t jump_y(std::int64_t x, std::int64_t y, int dy) const {
    for (std::int64_t c = y + dy;; c += dy) {
      if (!open(x, c)) return none;
      if (is_goal(x, c) || (open(x - 1, c) && !open(x - 1, c - dy)) ||
          (open(x + 1, c) && !open(x + 1, c - dy)))
        return c;
    }
  }
};

// The straight jumps from the diagonal cell `k` steps from `c`, each offered parented to the node by
// its diagonal-then-straight segment; true when that cell is the goal (offered, and the walk ends).
// `lines` (bit 1: the row, bit 2: the column) are the straight jumps worth scanning, as the skip
// table knows them: one that finds no jump point can stop only at the goal, on its own line.
template <class Grid>
bool visit_diagonal_cell(const Grid& grid, search_state& s, cell c, int dx, int dy, std::int64_t k,
                         unsigned lines = 6) {
  const std::int64_t x = c.x + k * dx, y = c.y + k * dy;
  const path_cost g = s.current.g.plus(0, static_cast<std::uint32_t>(k));
  if (x == s.goal.x && y == s.goal.y) return s.offer(s.goal, g, dx, dy), true;
  const bool row = (lines & 2) != 0 || y == s.goal.y, column = (lines & 4) != 0 || x == s.goal.x;
  if (const std::int64_t hx = row ? grid.jump_x(x, y, dx) : none; hx != none) {
    const cell to{static_cast<std::uint32_t>(hx), static_cast<std::uint32_t>(y)};
    s.offer(to, g.plus(static_cast<std::uint32_t>(std::abs(hx - x)), 0), dx, 0);
  }
  if (const std::int64_t vy = column ? grid.jump_y(x, y, dy) : none; vy != none) {
    const cell to{static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(vy)};
    s.offer(to, g.plus(static_cast<std::uint32_t>(std::abs(vy - y)), 0), 0, dy);
  }
  return false;
}

// Walks a diagonal from the current node. The diagonal cells are not pushed as jump points of
// their own (Harabor and Grastien's pruning of intermediate nodes): the straight jumps found from
// each of them are offered directly, parented to the node by a diagonal-then-straight segment.
template <class Grid>
void jump_diagonal(const Grid& grid, search_state& s, cell c, int dx, int dy) {
  std::int64_t x = c.x, y = c.y;
  for (std::int64_t k = 1;; ++k) {
    if (!grid.open(x + dx, y) || !grid.open(x, y + dy) || !grid.open(x + dx, y + dy)) return;
    x += dx, y += dy;
    if (visit_diagonal_cell(grid, s, c, dx, dy, k)) return;
  }
}

// jump_diagonal through the map's skip table: only the diagonal cells whose straight jumps can
// offer anything are visited, those where a jump meets a jump point (the table's) and the one
// cell whose row or column holds the goal ahead. The same offers in the same order.
void skip_diagonal(const bit_grid& grid, search_state& s, cell c, int dx, int dy) {
  const nav_map& m = *s.map;
  const std::int64_t kx = (std::int64_t{s.goal.x} - c.x) * dx, ky = (std::int64_t{s.goal.y} - c.y) * dy;
  const std::int64_t aligned = kx > 0 && ky > 0 ? std::min(kx, ky) : 0;
  std::int64_t k = 0;
  const auto stride = static_cast<std::int64_t>(dy) * m.width() + dx;  // one diagonal step's index
  std::uint32_t at = s.current_index;
  for (std::uint8_t entry = m.diagonal_skip(at, dx, dy);;) {
    const std::int64_t reach = k + (entry >> 3);
    const bool meets = (entry & 1) != 0;
    if (aligned > k && aligned <= reach && !(meets && aligned == reach) &&
        visit_diagonal_cell(grid, s, c, dx, dy, aligned))
      return;
    if (!meets) return;
    // The visited cell's own entry: its lines to scan now, its walk on next.
    at = static_cast<std::uint32_t>(at + (reach - k) * stride);
    entry = m.diagonal_skip(at, dx, dy);
    if (visit_diagonal_cell(grid, s, c, dx, dy, reach, entry & 6u)) return;
    k = reach;
  }
}

template <class Grid>
void try_direction(const Grid& grid, search_state& s, cell c, int dx, int dy) {
  if constexpr (std::is_same_v<Grid, bit_grid>) {
    if (dx != 0 && dy != 0 && s.map->has_diagonal_skips()) return skip_diagonal(grid, s, c, dx, dy);
  }
  if (dx != 0 && dy != 0) return jump_diagonal(grid, s, c, dx, dy);
  if constexpr (std::is_same_v<Grid, bit_grid>) {
    // The table's bits of the cell's own straight jumps (either diagonal entry of that way holds
    // them): a jump that finds no jump point and no goal is not scanned.
    const nav_map& m = *s.map;
    if (m.has_diagonal_skips() &&
        (m.diagonal_skip(s.current_index, dx != 0 ? dx : 1, dy != 0 ? dy : 1) & (dx != 0 ? 2u : 4u)) == 0 &&
        (dx != 0 ? c.y != s.goal.y : c.x != s.goal.x))
      return;
  }
  std::int64_t x = c.x, y = c.y;
  if (dy == 0 && (x = grid.jump_x(x, y, dx)) == none) return;
  if (dx == 0 && (y = grid.jump_y(x, y, dy)) == none) return;
  const cell to{static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y)};
  s.offer(to, s.current.g.plus(static_cast<std::uint32_t>(std::abs(x - c.x) + std::abs(y - c.y)), 0), dx, dy);
}

template <class Grid>
void expand(const Grid& grid, search_state& s) {
  const cell c = s.current.at;
  if (s.current_index == s.start_index) {
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        if (dx != 0 || dy != 0) try_direction(grid, s, c, dx, dy);
    return;
  }
  const int dx = s.current.dx, dy = s.current.dy;
  if (dx != 0 && dy != 0) {
    for (auto [ex, ey] : {std::pair{dx, 0}, std::pair{0, dy}, std::pair{dx, dy}})
      try_direction(grid, s, c, ex, ey);
  } else if (dx != 0) {
    try_direction(grid, s, c, dx, 0);
    // A side is worth turning to only where it opens here after being blocked one step back: else
    // the cell one step back reaches it as cheaply (the forced neighbours of a straight move).
    for (const int side : {-1, 1}) {
      if (!grid.open(c.x, std::int64_t{c.y} + side) ||
          grid.open(std::int64_t{c.x} - dx, std::int64_t{c.y} + side))
        continue;
      try_direction(grid, s, c, 0, side);
      try_direction(grid, s, c, dx, side);
    }
  } else {
    try_direction(grid, s, c, 0, dy);
    for (const int side : {-1, 1}) {
      if (!grid.open(std::int64_t{c.x} + side, c.y) ||
          grid.open(std::int64_t{c.x} + side, std::int64_t{c.y} - dy))
        continue;
      try_direction(grid, s, c, side, 0);
      try_direction(grid, s, c, side, dy);
    }
  }
}

}  // namespace

void expand_jps(search_state& s) {
  if (s.filter.empty()) {
    expand(bit_grid{s}, s);
  } else {
    expand(filtered_grid{s}, s);
  }
}

}  // namespace scenert::nav
