#include <scenert/nav/nav_map.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <limits>

namespace scenert::nav {

const char* to_string(nav_errc code) noexcept {
  switch (code) {
    case nav_errc::ok: return "ok";
    case nav_errc::invalid_map: return "invalid_map";
    case nav_errc::out_of_map: return "out_of_map";
    case nav_errc::unreadable_file: return "unreadable_file";
    case nav_errc::bad_format: return "bad_format";
    case nav_errc::bad_path: return "bad_path";
    case nav_errc::stale_handle: return "stale_handle";
    case nav_errc::queue_full: return "queue_full";
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
                                                           std::span<const std::uint8_t> blocked) {
  if (width == 0 || height == 0) return nav_fail(nav_errc::invalid_map, "a map needs at least one cell");
  // Indices and the generation-stamped node arrays are 32-bit; keep one value free as "none".
  if (std::uint64_t{width} * height >= std::numeric_limits<std::uint32_t>::max())
    return nav_fail(nav_errc::invalid_map, fmt::format("{}x{} cells: too many for a 32-bit index", width, height));
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
  return std::shared_ptr<const nav_map>(std::move(map));
}

std::size_t nav_map::memory_bytes() const noexcept {
  return open_.size() + (row_bits_.size() + column_bits_.size()) * sizeof(std::uint64_t);
}

bool can_stand(const nav_map& map, std::int64_t x, std::int64_t y, const cell_filter& filter) {
  return map.passable(x, y) && !filter.blocks({static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y)});
}

bool can_step(const nav_map& map, cell from, cell to, const cell_filter& filter) {
  const std::int64_t dx = std::int64_t{to.x} - from.x, dy = std::int64_t{to.y} - from.y;
  if (std::abs(dx) > 1 || std::abs(dy) > 1 || (dx == 0 && dy == 0)) return false;
  if (!can_stand(map, from.x, from.y, filter) || !can_stand(map, to.x, to.y, filter)) return false;
  if (dx == 0 || dy == 0) return true;
  return can_stand(map, from.x + dx, from.y, filter) && can_stand(map, from.x, from.y + dy, filter);
}

double octile_distance(cell a, cell b) noexcept {
  const auto dx = a.x > b.x ? a.x - b.x : b.x - a.x;
  const auto dy = a.y > b.y ? a.y - b.y : b.y - a.y;
  const auto lo = dx < dy ? dx : dy, hi = dx < dy ? dy : dx;
  return (hi - lo) + lo * diagonal_cost;
}

}  // namespace scenert::nav
