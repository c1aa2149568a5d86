#include <scenert/nav/map_gen.hpp>

#include <algorithm>
#include <utility>

namespace scenert::nav {
namespace {

struct block_grid {
  std::uint32_t width, height;
  std::vector<std::uint8_t> cells;
  void set(std::uint32_t x, std::uint32_t y, std::uint8_t v) {
    if (x < width && y < height) cells[std::size_t{y} * width + x] = v;
  }
  void fill(std::uint32_t x0, std::uint32_t y0, std::uint32_t w, std::uint32_t h, std::uint8_t v) {
    for (std::uint32_t y = y0; y < y0 + h; ++y)
      for (std::uint32_t x = x0; x < x0 + w; ++x) set(x, y, v);
  }
};

// About one obstacle per 1,024 cells, 2 to 8 cells a side.
void build_open(block_grid& g, nav_random& rng) {
  const std::uint32_t count = std::max<std::uint32_t>(1, g.width * g.height / 1024);
  for (std::uint32_t i = 0; i < count; ++i)
    g.fill(rng.below(g.width), rng.below(g.height), 2 + rng.below(7), 2 + rng.below(7), 1);
}

void build_random(block_grid& g, nav_random& rng, double density) {
  for (auto& c : g.cells) c = rng.unit() < density ? 1 : 0;
}

// Walls on every room-th row and column; each wall between two rooms gets a door of 1 to 3 cells.
void build_rooms(block_grid& g, nav_random& rng, std::uint32_t room) {
  room = std::max<std::uint32_t>(room, 4);
  for (std::uint32_t y = 0; y < g.height; ++y)
    for (std::uint32_t x = 0; x < g.width; ++x)
      if (x % room == room - 1 || y % room == room - 1) g.set(x, y, 1);
  for (std::uint32_t ry = 0; ry * room < g.height; ++ry) {
    for (std::uint32_t rx = 0; rx * room < g.width; ++rx) {
      const std::uint32_t door = 1 + rng.below(3), at = rng.below(room - 1 - door);
      g.fill(rx * room + room - 1, ry * room + at, 1, door, 0);  // east wall
      const std::uint32_t door2 = 1 + rng.below(3), at2 = rng.below(room - 1 - door2);
      g.fill(rx * room + at2, ry * room + room - 1, door2, 1, 0);  // south wall
    }
  }
}

// Recursive backtracking over maze cells of `corridor` open cells plus one wall, with an explicit
// stack (no recursion depth limit on big maps).
void build_maze(block_grid& g, nav_random& rng, std::uint32_t corridor) {
  const std::uint32_t pitch = corridor + 1, mw = std::max<std::uint32_t>(1, g.width / pitch),
                      mh = std::max<std::uint32_t>(1, g.height / pitch);
  std::fill(g.cells.begin(), g.cells.end(), std::uint8_t{1});
  std::vector<std::uint8_t> seen(std::size_t{mw} * mh, 0);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stack{{0, 0}};
  seen[0] = 1;
  g.fill(0, 0, corridor, corridor, 0);
  while (!stack.empty()) {
    const auto [cx, cy] = stack.back();
    std::pair<std::uint32_t, std::uint32_t> options[4];
    int n = 0;
    if (cx > 0 && !seen[cy * mw + cx - 1]) options[n++] = {cx - 1, cy};
    if (cx + 1 < mw && !seen[cy * mw + cx + 1]) options[n++] = {cx + 1, cy};
    if (cy > 0 && !seen[(cy - 1) * mw + cx]) options[n++] = {cx, cy - 1};
    if (cy + 1 < mh && !seen[(cy + 1) * mw + cx]) options[n++] = {cx, cy + 1};
    if (n == 0) {
      stack.pop_back();
      continue;
    }
    const auto [nx, ny] = options[rng.below(static_cast<std::uint32_t>(n))];
    seen[ny * mw + nx] = 1;
    // Open the new cell and the wall between: the rectangle spanning both.
    g.fill(std::min(cx, nx) * pitch, std::min(cy, ny) * pitch, (cx == nx ? corridor : pitch + corridor),
           (cy == ny ? corridor : pitch + corridor), 0);
    stack.emplace_back(nx, ny);
  }
}

}  // namespace

const char* to_string(map_kind kind) noexcept {
  switch (kind) {
    case map_kind::open: return "open";
    case map_kind::random: return "random";
    case map_kind::rooms: return "rooms";
    case map_kind::maze: return "maze";
  }
  return "unknown";
}

std::optional<map_kind> parse_map_kind(std::string_view name) noexcept {
  for (auto k : {map_kind::open, map_kind::random, map_kind::rooms, map_kind::maze})
    if (name == to_string(k)) return k;
  return std::nullopt;
}

std::vector<std::uint8_t> generate_blocks(const map_spec& spec) {
  block_grid g{spec.width, spec.height, std::vector<std::uint8_t>(std::size_t{spec.width} * spec.height, 0)};
  nav_random rng(spec.seed);
  switch (spec.kind) {
    case map_kind::open: build_open(g, rng); break;
    case map_kind::random: build_random(g, rng, spec.density); break;
    case map_kind::rooms: build_rooms(g, rng, spec.room); break;
    case map_kind::maze: build_maze(g, rng, std::max<std::uint32_t>(1, spec.corridor)); break;
  }
  return std::move(g.cells);
}

}  // namespace scenert::nav
