#include <scenert/nav/search.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "search_state.hpp"

namespace scenert::nav {
namespace {

// A min-heap on f; among equal f the deeper node (larger g) first, then the lower index, so that
// the order of expansions is a pure function of the map and the query.
bool heap_after(const heap_entry& a, const heap_entry& b) {
  if (a.f != b.f) return a.f > b.f;
  if (a.g != b.g) return a.g < b.g;
  return a.index > b.index;
}

// Cells from `from` to `to` on one straight or diagonal line: max(|dx|, |dy|).
std::uint32_t segment_steps(cell from, cell to) {
  const auto dx = from.x > to.x ? from.x - to.x : to.x - from.x;
  const auto dy = from.y > to.y ? from.y - to.y : to.y - from.y;
  return std::max(dx, dy);
}

int sign(std::int64_t v) { return (v > 0) - (v < 0); }

// Writes start..end into `out`; parents chain jump points (or neighbours) on straight or diagonal
// segments, filled in from the back so that `out` is sized once and never reallocated when warm.
void write_path(const search_state& s, std::uint32_t end, std::vector<cell>& out) {
  std::size_t total = 1;
  for (std::uint32_t i = end; i != s.start_index; i = s.nodes[i].parent)
    total += segment_steps(s.map->at(s.nodes[i].parent), s.map->at(i));
  out.resize(total);
  std::size_t w = total;
  for (std::uint32_t i = end; i != s.start_index; i = s.nodes[i].parent) {
    const cell to = s.map->at(i), from = s.map->at(s.nodes[i].parent);
    const int dx = sign(std::int64_t{to.x} - from.x), dy = sign(std::int64_t{to.y} - from.y);
    for (auto c = to; c != from; c = {c.x - dx, c.y - dy}) out[--w] = c;
  }
  out[--w] = s.start;
}

}  // namespace

void search_state::relax(std::uint32_t index, cell at, std::uint32_t parent, double g) {
  search_node& n = nodes[index];
  if (n.open_gen == generation && (n.closed_gen == generation || n.g <= g)) return;
  n.g = g;
  n.parent = parent;
  n.open_gen = generation;
  heap.push_back({g + octile_distance(at, goal), g, index});
  std::push_heap(heap.begin(), heap.end(), heap_after);
}

bool search_state::pop(std::uint32_t& index) {
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), heap_after);
    const heap_entry e = heap.back();
    heap.pop_back();
    const search_node& n = nodes[e.index];
    if (n.closed_gen != generation && n.g == e.g) return (index = e.index), true;
  }
  return false;
}

const char* to_string(algorithm algo) noexcept { return algo == algorithm::jps ? "jps" : "astar"; }

const char* to_string(search_status status) noexcept {
  switch (status) {
    case search_status::idle: return "idle";
    case search_status::running: return "running";
    case search_status::found: return "found";
    case search_status::unreachable: return "unreachable";
    case search_status::out_of_map: return "out_of_map";
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
  if (!map.contains(start.x, start.y) || !map.contains(goal.x, goal.y)) return s.status = search_status::out_of_map;
  if (s.nodes.size() < map.cell_count()) s.nodes.resize(map.cell_count());
  if (++s.generation == 0) {  // wrapped: old stamps could alias, so clear once per 2^32 searches
    std::fill(s.nodes.begin(), s.nodes.end(), search_node{});
    s.generation = 1;
  }
  s.start_index = map.index(start);
  s.goal_index = map.index(goal);
  s.best = s.start_index;
  s.best_h = octile_distance(start, goal);
  if (!can_stand(map, start.x, start.y, filter) || !can_stand(map, goal.x, goal.y, filter))
    return s.status = search_status::unreachable;
  s.relax(s.start_index, start, s.start_index, 0.0);
  return s.status = search_status::running;
}

search_status search_context::step(std::uint32_t budget) {
  search_state& s = *state_;
  for (std::uint32_t n = 0; n < budget && s.status == search_status::running; ++n) {
    std::uint32_t i = 0;
    if (!s.pop(i)) return s.status = search_status::unreachable;
    s.nodes[i].closed_gen = s.generation;
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
double search_context::length() const noexcept { return state_->nodes[state_->goal_index].g; }

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
                                                    path.front().x, path.front().y, path.back().x, path.back().y,
                                                    start.x, start.y, goal.x, goal.y));
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
