#pragma once
// The private state of a search_context, shared by the A* and JPS expansion code.

#include <scenert/nav/search.hpp>

#include "open_list.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace scenert::nav {

/// A path's cost as its counts of straight and diagonal steps, so that its value
/// straight + diagonal * sqrt(2) is always rounded the same way: two paths of equal cost compare
/// equal (f ties are real ties, broken toward the larger g), and summing never drifts.
struct path_cost {
  std::uint32_t straight = 0;
  std::uint32_t diagonal = 0;
  [[nodiscard]] double value() const noexcept {
    return static_cast<double>(straight) + static_cast<double>(diagonal) * diagonal_cost;
  }
  [[nodiscard]] path_cost plus(std::uint32_t s, std::uint32_t d) const noexcept {
    return {straight + s, diagonal + d};
  }
};

/// One cell's search record, 16 bytes (a search's time goes mostly to misses on these): valid only
/// when the stamp's generation is the state's. Stamp bits: generation << 5, closed (expanded) << 4,
/// and the direction of the last step on the way in (dx + 1) * 3 + (dy + 1). A*'s only.
struct search_node {
  path_cost g;
  std::uint32_t parent = 0;
  std::uint32_t stamp = 0;
  [[nodiscard]] std::uint32_t generation() const noexcept { return stamp >> 5; }
  [[nodiscard]] bool closed() const noexcept { return (stamp & 16) != 0; }
  [[nodiscard]] int dx() const noexcept { return static_cast<int>(stamp & 15) / 3 - 1; }
  [[nodiscard]] int dy() const noexcept { return static_cast<int>(stamp & 15) % 3 - 1; }
};

/// Generations fit in the stamp's upper 27 bits; the arrays are cleared when they wrap.
inline constexpr std::uint32_t max_generation = (1u << 27) - 1;

/// An open-list entry; stale entries (a better g was found since) are skipped when popped.
struct heap_entry {
  double f;
  double g;
  std::uint32_t index;
};

/// JPS: one offered successor, as it waits in the open list. JPS relaxes lazily: an offer touches
/// no per-cell record (a jump point's is a cache miss, jump points lying far apart); it goes to the
/// open list as it is, and the first time a cell is popped its g is the least (a consistent
/// heuristic: the least f of one cell is its least g), so later offers of a closed cell are
/// dropped by one bit of a small bitset.
struct jps_item {
  std::uint64_t order = 0;  // f's bits: the open list's key
  path_cost g;
  cell at;
  std::uint32_t parent = 0;
  std::int8_t dx = 0, dy = 0;  // the direction of the segment's last step, which JPS prunes by
  [[nodiscard]] double f() const noexcept { return std::bit_cast<double>(order); }
};

/// Everything one search needs; grows once per map size, then is reused.
struct search_state {
  const nav_map* map = nullptr;
  cell_filter filter;
  algorithm algo = algorithm::astar;
  cell start, goal;
  std::uint32_t start_index = 0, goal_index = 0;
  std::uint32_t generation = 0;
  std::vector<search_node> nodes;  // A*'s node records
  std::vector<heap_entry> heap;    // A*'s open list: a binary heap (std::push_heap)
  // JPS's state: its open list, the closed cells as bits (cleared at the next begin through the
  // list of expanded cells), the expanded cells' parents.
  radix_list<jps_item> open;
  std::vector<std::uint64_t> closed_bits;
  std::vector<std::uint32_t> expanded;
  std::vector<std::uint32_t> parents;
  jps_item current;                 // JPS: the item being expanded
  std::uint32_t current_index = 0;  // JPS: its cell's index
  path_cost found_g;                // JPS: the goal's g once found
  search_status status = search_status::idle;
  std::uint32_t expansions = 0;
  std::uint32_t best = 0;  // the expanded node closest to the goal by the heuristic
  double best_h = 0;

  /// A*: offers a path to cell `at` (of `index`) of cost `g` through `parent`; pushes it when it
  /// improves. `dx, dy` is the direction of the last step.
  void relax(std::uint32_t index, cell at, std::uint32_t parent, path_cost g, int dx = 0, int dy = 0);
  /// JPS: whether a cell has been expanded by this search.
  [[nodiscard]] bool closed(std::uint32_t index) const noexcept {
    return (closed_bits[index >> 6] >> (index & 63)) & 1;
  }
  /// JPS: offers cell `at` reached from the current item at cost `g`, its last step (dx, dy).
  void offer(cell at, path_cost g, int dx, int dy) {
    if (closed(at.y * map->width() + at.x)) return;
    push_item({0, g, at, current_index, static_cast<std::int8_t>(dx), static_cast<std::int8_t>(dy)});
  }
  /// JPS: queues an item in the open list (its order is set here).
  void push_item(jps_item item) {
    map->prefetch_diagonal_skips(item.at.y * map->width() + item.at.x);  // a miss when expanded
    const std::uint32_t ax = item.at.x > goal.x ? item.at.x - goal.x : goal.x - item.at.x,
                        ay = item.at.y > goal.y ? item.at.y - goal.y : goal.y - item.at.y;
    const std::uint32_t lo = ax < ay ? ax : ay, hi = ax < ay ? ay : ax;
    item.order = std::bit_cast<std::uint64_t>(item.g.plus(hi - lo, lo).value());  // equal f, equal bits
    // Successors that keep the node's f land in the radix heap's bucket 0 and are expanded next,
    // last offered first (exact with a consistent heuristic: the order stays a pure function of
    // the query, so slicing changes nothing).
    open.push(item);
  }
  /// A*: pops the next node to expand, skipping stale entries; false when the open list is empty.
  bool pop(std::uint32_t& index);
  /// JPS's pop into `current`: an item of the least f, skipping items of closed cells.
  bool pop_jps() {
    while (!open.empty()) {
      current = open.pop();
      current_index = current.at.y * map->width() + current.at.x;
      if (!closed(current_index)) return true;
      // else offered again since, and expanded through a shorter way
    }
    return false;
  }
};

/// A*: relaxes the up to 8 neighbours of a node.
void expand_astar(search_state& s, std::uint32_t index);
/// JPS: jumps from `s.current` in its pruned directions and offers the jump points found.
void expand_jps(search_state& s);

}  // namespace scenert::nav
