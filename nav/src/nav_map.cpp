#include <scenert/nav/nav_map.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <limits>

namespace scenert::nav {

const char* to_string(nav_errc code) noexcept {
  switch (code) {
    case nav_errc::ok:
      return "ok";
    case nav_errc::invalid_map:
      return "invalid_map";
    case nav_errc::out_of_map:
      return "out_of_map";
    case nav_errc::unreadable_file:
      return "unreadable_file";
    case nav_errc::bad_format:
      return "bad_format";
    case nav_errc::bad_path:
      return "bad_path";
    case nav_errc::stale_handle:
      return "stale_handle";
    case nav_errc::queue_full:
      return "queue_full";
  }
  return "unknown";
}

nav_map::nav_map(std::uint32_t width, std::uint32_t height)
    : width_(width),
      height_(height),
      row_words_((width + 63) / 64),
      column_words_((height + 63) / 64),
      open_(std::size_t{width} * height, 0),
      row_bits_((std::size_t{height} + 2) * row_words_, 0),
      column_bits_((std::size_t{width} + 2) * column_words_, 0) {}

nav_result<std::shared_ptr<const nav_map>> nav_map::create(std::uint32_t width, std::uint32_t height,
                                                           std::span<const std::uint8_t> blocked,
                                                           bool skip_table) {
  if (width == 0 || height == 0) return nav_fail(nav_errc::invalid_map, "a map needs at least one cell");
  // Indices and the generation-stamped node arrays are 32-bit; keep one value free as "none".
  if (std::uint64_t{width} * height >= std::numeric_limits<std::uint32_t>::max())
    return nav_fail(nav_errc::invalid_map,
                    fmt::format("{}x{} cells: too many for a 32-bit index", width, height));
  if (blocked.size() != std::size_t{width} * height)
    return nav_fail(nav_errc::invalid_map,
                    fmt::format("{} block bytes for a {}x{} map (want {})", blocked.size(), width, height,
                                std::size_t{width} * height));
  std::shared_ptr<nav_map> map(new nav_map(width, height));
  for (std::uint32_t y = 0; y < height; ++y) {
    for (std::uint32_t x = 0; x < width; ++x) {
      if (blocked[std::size_t{y} * width + x] != 0) continue;
      map->open_[std::size_t{y} * width + x] = 1;
      map->row_bits_[(y + 1) * map->row_words_ + x / 64] |= std::uint64_t{1} << (x % 64);
      map->column_bits_[(x + 1) * map->column_words_ + y / 64] |= std::uint64_t{1} << (y % 64);
    }
  }
  if (skip_table && map->cell_count() <= max_skip_table_cells) map->build_diagonal_skips();
  return std::shared_ptr<const nav_map>(std::move(map));
}

namespace {

// Bits of straight_finds(): a straight jump from the cell that way meets a jump point.
constexpr std::uint8_t finds_east = 1, finds_west = 2, finds_south = 4, finds_north = 8;

// Whether a straight jump entering (x, y) along the row (dx) stops there for a side that opens
// after being blocked: the jump point rule of the bit scans, cell by cell.
bool row_jump_point(const nav_map& m, std::int64_t x, std::int64_t y, int dx) {
  return (m.passable(x, y - 1) && !m.passable(x - dx, y - 1)) ||
         (m.passable(x, y + 1) && !m.passable(x - dx, y + 1));
}
bool column_jump_point(const nav_map& m, std::int64_t x, std::int64_t y, int dy) {
  return (m.passable(x - 1, y) && !m.passable(x - 1, y - dy)) ||
         (m.passable(x + 1, y) && !m.passable(x + 1, y - dy));
}

// Per cell, which of the four straight jumps from it meet a jump point before a blocked cell
// (the goal aside): each line is swept from its far end, a cell taking its neighbour's answer.
std::vector<std::uint8_t> straight_finds(const nav_map& m) {
  const std::int64_t w = m.width(), h = m.height();
  std::vector<std::uint8_t> finds(m.cell_count(), 0);
  const auto at = [&](std::int64_t x, std::int64_t y) -> std::uint8_t& {
    return finds[static_cast<std::size_t>(y * w + x)];
  };
  for (std::int64_t y = 0; y < h; ++y) {
    for (std::int64_t x = w - 2; x >= 0; --x)
      if (m.passable(x + 1, y) && (row_jump_point(m, x + 1, y, 1) || (at(x + 1, y) & finds_east)))
        at(x, y) |= finds_east;
    for (std::int64_t x = 1; x < w; ++x)
      if (m.passable(x - 1, y) && (row_jump_point(m, x - 1, y, -1) || (at(x - 1, y) & finds_west)))
        at(x, y) |= finds_west;
  }
  for (std::int64_t x = 0; x < w; ++x) {
    for (std::int64_t y = h - 2; y >= 0; --y)
      if (m.passable(x, y + 1) && (column_jump_point(m, x, y + 1, 1) || (at(x, y + 1) & finds_south)))
        at(x, y) |= finds_south;
    for (std::int64_t y = 1; y < h; ++y)
      if (m.passable(x, y - 1) && (column_jump_point(m, x, y - 1, -1) || (at(x, y - 1) & finds_north)))
        at(x, y) |= finds_north;
  }
  return finds;
}

}  // namespace

void nav_map::build_diagonal_skips() {
  const std::vector<std::uint8_t> finds = straight_finds(*this);
  diagonal_skips_.assign(std::size_t{cell_count()} * 4, 0);
  const std::int64_t w = width_, h = height_;
  for (const int dy : {1, -1}) {
    for (const int dx : {1, -1}) {
      const std::size_t slot = static_cast<std::size_t>((dx < 0) + 2 * (dy < 0));
      const std::uint8_t wanted = (dx > 0 ? finds_east : finds_west) | (dy > 0 ? finds_south : finds_north);
      // Cells nearer the walk's end first: a cell's entry is its diagonal neighbour's plus one.
      for (std::int64_t row = 0; row < h; ++row) {
        const std::int64_t y = dy > 0 ? h - 1 - row : row;
        for (std::int64_t col = 0; col < w; ++col) {
          const std::int64_t x = dx > 0 ? w - 1 - col : col;
          if (!passable(x, y)) continue;
          const auto here = static_cast<std::size_t>(y * w + x);
          // The cell's own straight jumps along dx and dy, whether or not it walks on.
          const unsigned own = ((finds[here] & wanted & (finds_east | finds_west)) != 0 ? 2u : 0u) |
                               ((finds[here] & wanted & (finds_south | finds_north)) != 0 ? 4u : 0u);
          diagonal_skips_[here * 4 + slot] = static_cast<std::uint8_t>(own);
          if (!passable(x + dx, y) || !passable(x, y + dy) || !passable(x + dx, y + dy)) continue;
          const auto next = static_cast<std::size_t>((y + dy) * w + x + dx);
          const std::uint8_t ahead = diagonal_skips_[next * 4 + slot];
          // A walk longer than 31 steps is cut: its 31st cell is visited as if it met a jump
          // point (its own bits then tell its jumps that find nothing, and the goal is visited anyway).
          const bool meets = (finds[next] & wanted) != 0;
          const unsigned steps = meets ? 1 : (ahead >> 3) + 1u;
          const bool visit = meets || (ahead & 1) != 0;
          diagonal_skips_[here * 4 + slot] =
              static_cast<std::uint8_t>(own | (steps > 31 ? 31u << 3 | 1u : steps << 3 | (visit ? 1u : 0u)));
        }
      }
    }
  }
}

std::size_t nav_map::memory_bytes() const noexcept {
  return open_.size() + (row_bits_.size() + column_bits_.size()) * sizeof(std::uint64_t) +
         diagonal_skips_.size();
}

}  // namespace scenert::nav
