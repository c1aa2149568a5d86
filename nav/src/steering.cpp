#include <scenert/nav/steering.hpp>

namespace scenert::nav {
namespace {

// The 8 directions in ring order, so that ring[(k + 1) % 8] and ring[(k + 7) % 8] lie beside ring[k].
constexpr int ring[8][2] = {{1, 0}, {1, 1}, {0, 1}, {-1, 1}, {-1, 0}, {-1, -1}, {0, -1}, {1, -1}};

int sign(std::int64_t v) { return (v > 0) - (v < 0); }

int ring_index(int dx, int dy) {
  for (int k = 0; k < 8; ++k)
    if (ring[k][0] == dx && ring[k][1] == dy) return k;
  return 0;
}

cell offset(cell c, int k) {
  return {static_cast<std::uint32_t>(std::int64_t{c.x} + ring[k][0]),
          static_cast<std::uint32_t>(std::int64_t{c.y} + ring[k][1])};
}

bool allowed(const nav_map& map, cell from, cell to, const steer_rules& rules, const cell_counter& counts,
             const cell_filter& filter) {
  return can_step(map, from, to, filter) && counts.count(to) < rules.cell_cap;
}

// The seek itself: direct, then slide along the wall to one side or the other.
bool seek(const nav_map& map, mob_steer& mob, cell goal, const steer_rules& rules, const cell_counter& counts,
          const cell_filter& filter) {
  const int k = ring_index(sign(std::int64_t{goal.x} - mob.position.x), sign(std::int64_t{goal.y} - mob.position.y));
  int a = (k + 1) % 8, b = (k + 7) % 8;
  if (octile_distance(offset(mob.position, b), goal) < octile_distance(offset(mob.position, a), goal)) std::swap(a, b);
  for (int d : {k, a, b}) {
    const cell to = offset(mob.position, d);
    if (allowed(map, mob.position, to, rules, counts, filter)) return (mob.position = to), true;
  }
  return false;
}

}  // namespace

const char* to_string(steer_result result) noexcept {
  switch (result) {
    case steer_result::moved: return "moved";
    case steer_result::stayed: return "stayed";
    case steer_result::arrived: return "arrived";
    case steer_result::leashed: return "leashed";
  }
  return "unknown";
}

steer_result steer(const nav_map& map, mob_steer& mob, std::optional<cell> target, const steer_rules& rules,
                   const cell_counter& counts, const cell_filter& filter) {
  bool leashed = false;
  if (!mob.returning && octile_distance(mob.position, mob.home) > rules.leash) mob.returning = leashed = true;
  if (mob.returning) target = mob.home;
  if (!target) return steer_result::stayed;
  if (mob.position == *target) {
    mob.returning = false;
    return steer_result::arrived;
  }
  const bool moved = seek(map, mob, *target, rules, counts, filter);
  return leashed ? steer_result::leashed : moved ? steer_result::moved : steer_result::stayed;
}

}  // namespace scenert::nav
