#pragma once
// The AOI bench trace of issue 4: splitmix64, adds in id order, then T ticks of one walk or teleport
// per entity in id order. Any implementation replays exactly the same adds and moves.

#include <cstdint>
#include <string>
#include <vector>

namespace scenert::bench {

/// splitmix64, state starting at the seed.
class splitmix64 {
 public:
  explicit splitmix64(std::uint64_t seed) : s_(seed) {}
  std::uint64_t operator()() {
    s_ += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = s_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t s_;
};

/// One move of the trace: entity `id` goes to (x, y).
struct trace_move {
  std::uint32_t id;
  std::uint32_t x;
  std::uint32_t y;
};

/// A map, the adds (entity i at initial[i]) and the moves.
struct aoi_trace {
  std::string name;
  std::uint32_t width = 0, height = 0;
  std::uint32_t area_x = 0, area_y = 0;
  std::uint32_t radius_x = 0, radius_y = 0;
  std::uint32_t ticks = 0;
  bool teleport = false;
  std::vector<trace_move> initial;  // id = index
  std::vector<trace_move> moves;
};

/// Parameters of one random scenario.
struct scenario_params {
  std::string name;
  std::uint32_t size;      // W = H
  std::uint32_t area;      // square areas of A cells
  std::uint32_t radius;    // R
  std::uint32_t entities;  // N
  std::uint32_t ticks;     // T
  bool teleport;
};

inline std::uint32_t walk_axis(std::uint32_t v, std::int64_t d, std::uint32_t n) {
  const std::int64_t to = static_cast<std::int64_t>(v) + d;
  return static_cast<std::uint32_t>(to < 0 || to >= n ? static_cast<std::int64_t>(v) - d : to);
}

/// Generates s1..s5 style traces exactly as issue 4 specifies (S = 1).
inline aoi_trace make_trace(const scenario_params& p, std::uint64_t seed) {
  aoi_trace t;
  t.name = p.name;
  t.width = t.height = p.size;
  t.area_x = t.area_y = p.area;
  t.radius_x = t.radius_y = p.radius;
  t.ticks = p.ticks;
  t.teleport = p.teleport;
  splitmix64 rng(seed);
  t.initial.reserve(p.entities);
  std::vector<trace_move> pos;
  for (std::uint32_t i = 0; i < p.entities; ++i) {
    const auto x = static_cast<std::uint32_t>(rng() % p.size);
    const auto y = static_cast<std::uint32_t>(rng() % p.size);
    t.initial.push_back({i, x, y});
  }
  pos = t.initial;
  t.moves.reserve(static_cast<std::size_t>(p.entities) * p.ticks);
  for (std::uint32_t tick = 0; tick < p.ticks; ++tick) {
    for (std::uint32_t i = 0; i < p.entities; ++i) {
      trace_move& m = pos[i];
      if (p.teleport) {
        m.x = static_cast<std::uint32_t>(rng() % p.size);
        m.y = static_cast<std::uint32_t>(rng() % p.size);
      } else {
        const std::uint64_t d = rng() % 9;
        const auto dx = static_cast<std::int64_t>(d % 3) - 1;
        const auto dy = static_cast<std::int64_t>(d / 3) - 1;
        m.x = walk_axis(m.x, dx, p.size);
        m.y = walk_axis(m.y, dy, p.size);
      }
      t.moves.push_back(m);
    }
  }
  return t;
}

/// Seed 001's full load: one entity per cell of `areas` x `areas` areas; `rounds` times, an entity
/// inside area (r, r) moves one area diagonally and back (every move crosses with a full view).
inline aoi_trace make_full_load(std::string name, std::uint32_t ax, std::uint32_t ay, std::uint32_t r,
                                std::uint32_t areas, std::uint32_t rounds) {
  aoi_trace t;
  t.name = std::move(name);
  t.width = ax * areas;
  t.height = ay * areas;
  t.area_x = ax, t.area_y = ay;
  t.radius_x = t.radius_y = r;
  t.ticks = rounds;
  for (std::uint32_t y = 0; y < t.height; ++y)
    for (std::uint32_t x = 0; x < t.width; ++x) t.initial.push_back({y * t.width + x, x, y});
  for (std::uint32_t k = 0; k < rounds; ++k) {
    const std::uint32_t x = r * ax + k % ax;
    const std::uint32_t y = r * ay + (k / ax) % ay;
    const std::uint32_t id = y * t.width + x;
    t.moves.push_back({id, x + ax, y + ay});
    t.moves.push_back({id, x, y});
  }
  return t;
}

}  // namespace scenert::bench
