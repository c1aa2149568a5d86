#pragma once
/// A map's static passability for path searches: built once per map, shared by every line of it.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <scenert/nav/types.hpp>

namespace scenert::nav {

/// The immutable passability grid of one map, with the bit rows and bit columns that jump point
/// search scans 64 cells at a time and its diagonal skip table (built once here, shared by every
/// search of the map). Hold it as std::shared_ptr<const nav_map>.
/// Thread-safety: immutable after create(); any number of threads may read it at once.
class nav_map {
 public:
  /// Builds a map from one byte per cell, row-major (non-zero = blocked); fails on a size of 0,
  /// a span of the wrong length, or more cells than a 32-bit index can address. With
  /// `skip_table` (and at most max_skip_table_cells cells) JPS's diagonal skip table is built too.
  static nav_result<std::shared_ptr<const nav_map>> create(std::uint32_t width, std::uint32_t height,
                                                           std::span<const std::uint8_t> blocked,
                                                           bool skip_table = true);

  /// Width in cells (columns).
  [[nodiscard]] std::uint32_t width() const noexcept { return width_; }
  /// Height in cells (rows).
  [[nodiscard]] std::uint32_t height() const noexcept { return height_; }
  /// Number of cells.
  [[nodiscard]] std::uint32_t cell_count() const noexcept { return width_ * height_; }
  /// Whether (x, y) lies on the map; signed so that a neighbour of an edge cell can be asked.
  [[nodiscard]] bool contains(std::int64_t x, std::int64_t y) const noexcept {
    return x >= 0 && y >= 0 && x < width_ && y < height_;
  }
  /// Whether the cell is on the map and not blocked.
  [[nodiscard]] bool passable(std::int64_t x, std::int64_t y) const noexcept {
    return contains(x, y) && open_[static_cast<std::size_t>(y) * width_ + static_cast<std::size_t>(x)] != 0;
  }
  /// Row-major index of a cell on the map.
  [[nodiscard]] std::uint32_t index(cell c) const noexcept { return c.y * width_ + c.x; }
  /// The cell of a row-major index.
  [[nodiscard]] cell at(std::uint32_t index) const noexcept { return {index % width_, index / width_}; }
  /// 64-bit words of passable bits of row y, for y in [-1, height]: bit x%64 of word x/64 is cell
  /// x; rows -1 and height, and bits past the width, are zero (blocked).
  [[nodiscard]] const std::uint64_t* row_bits(std::int64_t y) const noexcept {
    return row_bits_.data() + static_cast<std::size_t>(y + 1) * row_words_;
  }
  /// The same for column x (x in [-1, width]): bit y%64 of word y/64 is cell (x, y).
  [[nodiscard]] const std::uint64_t* column_bits(std::int64_t x) const noexcept {
    return column_bits_.data() + static_cast<std::size_t>(x + 1) * column_words_;
  }
  /// Words per bit row.
  [[nodiscard]] std::size_t row_words() const noexcept { return row_words_; }
  /// Words per bit column.
  [[nodiscard]] std::size_t column_words() const noexcept { return column_words_; }
  /// Memory held by the map's tables, in bytes.
  [[nodiscard]] std::size_t memory_bytes() const noexcept;

  /// Maps of at most this many cells get the diagonal skip table (4 bytes a cell): a larger map
  /// would pay too much memory for it, and JPS walks its diagonals cell by cell instead.
  static constexpr std::uint32_t max_skip_table_cells = std::uint32_t{1} << 22;
  /// Whether the map has its diagonal skip table.
  [[nodiscard]] bool has_diagonal_skips() const noexcept { return !diagonal_skips_.empty(); }
  /// Starts loading a cell's diagonal skip entries into the cache (JPS, when it queues a cell
  /// that it may expand soon); does nothing without the table.
  void prefetch_diagonal_skips(std::uint32_t index) const noexcept {
    if (!diagonal_skips_.empty()) __builtin_prefetch(diagonal_skips_.data() + std::size_t{index} * 4);
  }
  /// JPS's precomputed diagonal walk from a passable cell (by index) toward (dx, dy), both +-1:
  /// `entry >> 3` diagonal steps lead to the next cell from which a straight jump along dx or dy
  /// meets a jump point before a blocked cell (`entry & 1` set), or to the walk's last cell (the
  /// next diagonal step is not allowed; `entry & 1` clear). A walk is cut every 31 steps: an
  /// entry of 31 steps with bit 0 set names a cell to visit that may meet nothing. Bits 1 and 2:
  /// the cell's own straight jump along dx (bit 1) or dy (bit 2) meets a jump point, so that a
  /// visit scans only the lines that find one (or hold the goal). Goal-independent; only when
  /// has_diagonal_skips().
  [[nodiscard]] std::uint8_t diagonal_skip(std::uint32_t index, int dx, int dy) const noexcept {
    return diagonal_skips_[std::size_t{index} * 4 + static_cast<std::size_t>((dx < 0) + 2 * (dy < 0))];
  }

 private:
  nav_map(std::uint32_t width, std::uint32_t height);
  std::uint32_t width_, height_;
  std::size_t row_words_, column_words_;
  std::vector<std::uint8_t> open_;  // one byte per cell: 1 = passable
  std::vector<std::uint64_t> row_bits_, column_bits_;
  std::vector<std::uint8_t> diagonal_skips_;  // four entries a cell, see diagonal_skip()
  void build_diagonal_skips();
};

/// Whether a step between two 8-neighbours is allowed: both cells passable (map and filter) and,
/// for a diagonal, both orthogonal cells passable too (no corner cutting).
[[nodiscard]] inline bool can_step(const nav_map& map, cell from, cell to, const cell_filter& filter = {});

/// Whether a cell is on the map, passable, and not blocked by the filter.
[[nodiscard]] inline bool can_stand(const nav_map& map, std::int64_t x, std::int64_t y,
                                    const cell_filter& filter) {
  return map.passable(x, y) && !filter.blocks({static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y)});
}

// Inline: every steering step asks it for up to three cells.
inline bool can_step(const nav_map& map, cell from, cell to, const cell_filter& filter) {
  const std::int64_t dx = std::int64_t{to.x} - from.x, dy = std::int64_t{to.y} - from.y;
  if (dx < -1 || dx > 1 || dy < -1 || dy > 1 || (dx == 0 && dy == 0)) return false;
  if (!can_stand(map, from.x, from.y, filter) || !can_stand(map, to.x, to.y, filter)) return false;
  if (dx == 0 || dy == 0) return true;
  return can_stand(map, from.x + dx, from.y, filter) && can_stand(map, from.x, from.y + dy, filter);
}

/// sqrt(2), the cost of a diagonal step.
inline constexpr double diagonal_cost = 1.4142135623730950488;

/// Octile distance: the length of the shortest path between two cells on an empty map. Inline: a
/// monster's think asks it several times a step.
[[nodiscard]] inline double octile_distance(cell a, cell b) noexcept {
  const auto dx = a.x > b.x ? a.x - b.x : b.x - a.x;
  const auto dy = a.y > b.y ? a.y - b.y : b.y - a.y;
  const auto lo = dx < dy ? dx : dy, hi = dx < dy ? dy : dx;
  return (hi - lo) + lo * diagonal_cost;
}

}  // namespace scenert::nav
