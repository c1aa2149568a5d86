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

// Writes start..end into `out`, sized once and filled from the back, so that a warm `out` is
// never reallocated.
void write_path(const search_state& s, std::uint32_t end, std::vector<cell>& out) {
  std::size_t total = 1;
  for (std::uint32_t i = end; i != s.start_index; i = s.nodes[i].parent)
    total += segment(s.map->at(s.nodes[i].parent), s.map->at(i)).steps();
  out.resize(total);
  std::size_t w = total;
  for (std::uint32_t i = end; i != s.start_index; i = s.nodes[i].parent) {
    const segment seg(s.map->at(s.nodes[i].parent), s.map->at(i));
    w -= seg.steps();
    for (std::uint32_t k = 1; k <= seg.steps(); ++k) out[w + k - 1] = seg.at(k);
  }
  out[--w] = s.start;
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
  if (use_bypass) {
    // The node being expanded has the least f in the open list, so a successor with no more f has
    // the least f too and may be expanded next without a trip through the heap (exact with a
    // consistent heuristic; the order stays a pure function of the query, so slicing changes nothing).
    const open_entry e = open_entry::make(f, g, index);
    return f <= current_f ? bypass.push_back(e) : open.push(e);
  }
  heap.push_back({f, g, index});
  std::push_heap(heap.begin(), heap.end(), heap_after{});
}

bool search_state::pop_jps(std::uint32_t& index) {
  while (!bypass.empty() || !open.empty()) {
    open_entry e{};
    if (!bypass.empty()) {
      e = bypass.back();
      bypass.pop_back();
    } else {
      e = open.pop();
    }
    // The next candidate's node is read by the next pop: start its miss now.
    if (!bypass.empty())
      __builtin_prefetch(&nodes[bypass.back().index()]);
    else if (!open.empty())
      __builtin_prefetch(&nodes[open.top().index()]);
    if (!nodes[e.index()].closed()) return (index = e.index()), (current_f = e.f()), true;
  }
  return false;
}

bool search_state::pop(std::uint32_t& index) {
  if (use_bypass) return pop_jps(index);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), heap_after{});
    const heap_entry e = heap.back();
    heap.pop_back();
    const search_node& n = nodes[e.index];
    if (!n.closed() && n.g.value() == e.g) return (index = e.index), (current_f = e.f), true;
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
  s.bypass.clear();
  s.use_bypass = algo == algorithm::jps;
  s.current_f = 0;
  if (!map.contains(start.x, start.y) || !map.contains(goal.x, goal.y))
    return s.status = search_status::out_of_map;
  if (s.nodes.size() < map.cell_count()) s.nodes.resize(map.cell_count());
  if (++s.generation > max_generation) {  // old stamps could alias: clear once per 2^27 searches
    std::fill(s.nodes.begin(), s.nodes.end(), search_node{});
    s.generation = 1;
  }
  s.start_index = map.index(start);
  s.goal_index = map.index(goal);
  s.best = s.start_index;
  s.best_h = octile_distance(start, goal);
  if (!can_stand(map, start.x, start.y, filter) || !can_stand(map, goal.x, goal.y, filter))
    return s.status = search_status::unreachable;
  s.relax(s.start_index, start, s.start_index, path_cost{});
  return s.status = search_status::running;
}

search_status search_context::step(std::uint32_t budget) {
  search_state& s = *state_;
  for (std::uint32_t n = 0; n < budget && s.status == search_status::running; ++n) {
    std::uint32_t i = 0;
    if (!s.pop(i)) return s.status = search_status::unreachable;
    s.nodes[i].stamp |= 16;
    ++s.expansions;
    const double h = octile_distance(s.map->at(i), s.goal);
    if (h < s.best_h) s.best = i, s.best_h = h;
    if (i == s.goal_index) return s.status = search_status::found;
    s.algo == algorithm::jps ? expand_jps(s, i) : expand_astar(s, i);
  }
  return s.status;
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
  return state_->status == search_status::found ? state_->nodes[state_->goal_index].g.value() : 0.0;
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
