#include <scenert/nav/search.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "search_state.hpp"

namespace scenert::nav {
namespace {

// A min-heap on f; among equal f the deeper node (larger g) first, then the lower index, so that
// the order of expansions is a pure function of the map and the query.
// A type, not a function: std::push_heap then inlines the comparison instead of calling through
// a pointer (half of a search's time is the open list).
struct heap_after {
  bool operator()(const heap_entry& a, const heap_entry& b) const {
    if (a.f != b.f) return a.f > b.f;
    if (a.g != b.g) return a.g < b.g;
    return a.index > b.index;
  }
};

int sign(std::int64_t v) { return (v > 0) - (v < 0); }

// A segment between a node and its parent: diagonal steps first, then straight ones along the
// longer axis (A* steps, JPS jumps, and JPS's diagonal-then-straight jumps are all such segments).
struct segment {
  cell from;
  std::uint32_t diagonal = 0, straight = 0;
  int sx = 0, sy = 0, tx = 0, ty = 0;  // diagonal direction, straight direction
  segment(cell a, cell b) : from(a) {
    const auto ax = a.x > b.x ? a.x - b.x : b.x - a.x, ay = a.y > b.y ? a.y - b.y : b.y - a.y;
    diagonal = std::min(ax, ay), straight = std::max(ax, ay) - diagonal;
    sx = sign(std::int64_t{b.x} - a.x), sy = sign(std::int64_t{b.y} - a.y);
    (ax > ay ? tx : ty) = ax > ay ? sx : sy;
  }
  [[nodiscard]] std::uint32_t steps() const { return diagonal + straight; }
  // The cell after `k` steps, 1 <= k <= steps().
  [[nodiscard]] cell at(std::uint32_t k) const {
    const std::int64_t d = std::min(k, diagonal), t = k - d;
    return {static_cast<std::uint32_t>(from.x + sx * d + tx * t),
            static_cast<std::uint32_t>(from.y + sy * d + ty * t)};
  }
};

// The parent of an expanded cell.
std::uint32_t parent_of(const search_state& s, std::uint32_t index) {
  return s.algo == algorithm::jps ? s.parents[index] : s.nodes[index].parent;
}

// Writes start..end into `out`, sized once and filled from the back, so that a warm `out` is
// never reallocated.
void write_path(const search_state& s, std::uint32_t end, std::vector<cell>& out) {
  std::size_t total = 1;
  for (std::uint32_t i = end; i != s.start_index; i = parent_of(s, i))
    total += segment(s.map->at(parent_of(s, i)), s.map->at(i)).steps();
  out.resize(total);
  std::size_t w = total;
  for (std::uint32_t i = end; i != s.start_index; i = parent_of(s, i)) {
    const segment seg(s.map->at(parent_of(s, i)), s.map->at(i));
    w -= seg.steps();
    for (std::uint32_t k = 1; k <= seg.steps(); ++k) out[w + k - 1] = seg.at(k);
  }
  out[--w] = s.start;
}

// Notes an expanded cell as the best so far when it is the nearest to the goal by the heuristic.
void note_best(search_state& s, std::uint32_t index, cell at) {
  const double h = octile_distance(at, s.goal);
  if (h < s.best_h) s.best = index, s.best_h = h;
}

// A*: expands at most `budget` nodes.
search_status step_astar(search_state& s, std::uint32_t budget) {
  for (std::uint32_t n = 0; n < budget && s.status == search_status::running; ++n) {
    std::uint32_t i = 0;
    if (!s.pop(i)) return s.status = search_status::unreachable;
    s.nodes[i].stamp |= 16;
    ++s.expansions;
    note_best(s, i, s.map->at(i));
    if (i == s.goal_index) return s.status = search_status::found;
    expand_astar(s, i);
  }
  return s.status;
}

// JPS: expands at most `budget` nodes; an expanded cell's bit and parent are set here, once.
search_status step_jps(search_state& s, std::uint32_t budget) {
  for (std::uint32_t n = 0; n < budget && s.status == search_status::running; ++n) {
    if (!s.pop_jps()) return s.status = search_status::unreachable;
    const std::uint32_t i = s.current_index;
    s.closed_bits[i >> 6] |= std::uint64_t{1} << (i & 63);
    s.expanded.push_back(i);
    s.parents[i] = s.current.parent;
    ++s.expansions;
    note_best(s, i, s.current.at);
    if (i == s.goal_index) return (s.found_g = s.current.g), s.status = search_status::found;
    expand_jps(s);
  }
  return s.status;
}

}  // namespace

void search_state::relax(std::uint32_t index, cell at, std::uint32_t parent, path_cost cost, int dx, int dy) {
  search_node& n = nodes[index];
  const double g = cost.value();
  if (n.generation() == generation && (n.closed() || n.g.value() <= g)) return;
  n.g = cost;
  n.parent = parent;
  n.stamp = generation << 5 | static_cast<std::uint32_t>((dx + 1) * 3 + (dy + 1));
  const std::uint32_t ax = at.x > goal.x ? at.x - goal.x : goal.x - at.x,
                      ay = at.y > goal.y ? at.y - goal.y : goal.y - at.y;
  const std::uint32_t lo = ax < ay ? ax : ay, hi = ax < ay ? ay : ax;
  const double f = cost.plus(hi - lo, lo).value();  // from counts: equal f, equal bits
  heap.push_back({f, g, index});
  std::push_heap(heap.begin(), heap.end(), heap_after{});
}

bool search_state::pop(std::uint32_t& index) {
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), heap_after{});
    const heap_entry e = heap.back();
    heap.pop_back();
    const search_node& n = nodes[e.index];
    if (!n.closed() && n.g.value() == e.g) return (index = e.index), true;
  }
  return false;
}

const char* to_string(algorithm algo) noexcept { return algo == algorithm::jps ? "jps" : "astar"; }

const char* to_string(search_status status) noexcept {
  switch (status) {
    case search_status::idle:
      return "idle";
    case search_status::running:
      return "running";
    case search_status::found:
      return "found";
    case search_status::unreachable:
      return "unreachable";
    case search_status::out_of_map:
      return "out_of_map";
  }
  return "unknown";
}

search_context::search_context() : state_(std::make_unique<search_state>()) {}
search_context::~search_context() = default;
search_context::search_context(search_context&&) noexcept = default;
search_context& search_context::operator=(search_context&&) noexcept = default;

search_status search_context::begin(const nav_map& map, cell start, cell goal, algorithm algo,
                                    cell_filter filter) {
  search_state& s = *state_;
  s.map = &map, s.filter = filter, s.algo = algo, s.start = start, s.goal = goal;
  s.expansions = 0;
  s.heap.clear();
  s.open.clear();
  // Clearing the words of the cells expanded since clears every closed bit, at the cost of the
  // last search's work rather than of the map's size.
  for (const std::uint32_t i : s.expanded) s.closed_bits[i >> 6] = 0;
  s.expanded.clear();
  if (!map.contains(start.x, start.y) || !map.contains(goal.x, goal.y))
    return s.status = search_status::out_of_map;
  if (algo == algorithm::jps) {
    if (s.parents.size() < map.cell_count()) s.parents.resize(map.cell_count());
    if (s.closed_bits.size() < (map.cell_count() + 63) / 64)
      s.closed_bits.resize((map.cell_count() + 63) / 64);
  } else {
    if (s.nodes.size() < map.cell_count()) s.nodes.resize(map.cell_count());
    if (++s.generation > max_generation) {  // old stamps could alias: clear once per 2^27 searches
      std::fill(s.nodes.begin(), s.nodes.end(), search_node{});
      s.generation = 1;
    }
  }
  s.start_index = map.index(start);
  s.goal_index = map.index(goal);
  s.best = s.start_index;
  s.best_h = octile_distance(start, goal);
  if (!can_stand(map, start.x, start.y, filter) || !can_stand(map, goal.x, goal.y, filter))
    return s.status = search_status::unreachable;
  if (algo == algorithm::jps) {
    s.push_item({0, path_cost{}, start, s.start_index, 0, 0});
  } else {
    s.relax(s.start_index, start, s.start_index, path_cost{});
  }
  return s.status = search_status::running;
}

search_status search_context::step(std::uint32_t budget) {
  search_state& s = *state_;
  if (s.status != search_status::running) return s.status;
  return s.algo == algorithm::jps ? step_jps(s, budget) : step_astar(s, budget);
}

search_outcome search_context::find(const nav_map& map, cell start, cell goal, algorithm algo,
                                    std::vector<cell>& path, cell_filter filter) {
  path.clear();
  if (begin(map, start, goal, algo, filter) == search_status::running) step(UINT32_MAX);
  const search_state& s = *state_;
  if (s.status == search_status::found) write_path(s, s.goal_index, path);
  return {s.status, s.status == search_status::found ? length() : 0.0, s.expansions};
}

search_status search_context::status() const noexcept { return state_->status; }
std::uint32_t search_context::expansions() const noexcept { return state_->expansions; }
double search_context::length() const noexcept {
  const search_state& s = *state_;
  if (s.status != search_status::found) return 0.0;
  return s.algo == algorithm::jps ? s.found_g.value() : s.nodes[s.goal_index].g.value();
}

void search_context::path(std::vector<cell>& out) const {
  out.clear();
  if (state_->status == search_status::found) write_path(*state_, state_->goal_index, out);
}

void search_context::partial_path(std::vector<cell>& out) const {
  out.clear();
  const search_state& s = *state_;
  if (s.status == search_status::idle || s.status == search_status::out_of_map) return;
  if (s.status == search_status::unreachable && s.expansions == 0) return;
  write_path(s, s.status == search_status::found ? s.goal_index : s.best, out);
}

nav_result<double> validate_path(const nav_map& map, const std::vector<cell>& path, cell start, cell goal,
                                 const cell_filter& filter) {
  if (path.empty()) return nav_fail(nav_errc::bad_path, "empty path");
  if (path.front() != start || path.back() != goal)
    return nav_fail(nav_errc::bad_path, fmt::format("path runs ({},{})->({},{}), want ({},{})->({},{})",
                                                    path.front().x, path.front().y, path.back().x,
                                                    path.back().y, start.x, start.y, goal.x, goal.y));
  if (!can_stand(map, start.x, start.y, filter)) return nav_fail(nav_errc::bad_path, "start cell blocked");
  double length = 0;
  for (std::size_t i = 1; i < path.size(); ++i) {
    if (!can_step(map, path[i - 1], path[i], filter))
      return nav_fail(nav_errc::bad_path, fmt::format("step {}: ({},{})->({},{}) is not a legal move", i,
                                                      path[i - 1].x, path[i - 1].y, path[i].x, path[i].y));
    length += octile_distance(path[i - 1], path[i]);
  }
  return length;
}

}  // namespace scenert::nav
