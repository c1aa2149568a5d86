#pragma once
// The private state of a search_context, shared by the A* and JPS expansion code.

#include <scenert/nav/search.hpp>

#include "open_list.hpp"

#include <array>
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
/// and the direction of the last step on the way in (dx + 1) * 3 + (dy + 1), which JPS prunes by.
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

/// Everything one search needs; grows once per map size, then is reused.
struct search_state {
  const nav_map* map = nullptr;
  cell_filter filter;
  algorithm algo = algorithm::astar;
  cell start, goal;
  std::uint32_t start_index = 0, goal_index = 0;
  std::uint32_t generation = 0;
  std::vector<search_node> nodes;
  std::vector<heap_entry> heap;    // A*'s open list: a binary heap (std::push_heap)
  open_list open;                  // JPS's open list: a 4-ary heap
  std::vector<open_entry> bypass;  // JPS: successors with the least f, expanded before the heap's
  bool use_bypass = false;         // JPS only: A* stays the plain baseline
  double current_f = 0;            // f of the node being expanded
  search_status status = search_status::idle;
  std::uint32_t expansions = 0;
  struct offered {
    std::uint32_t index;
    cell at;
    std::uint32_t parent;
    path_cost g;
    int dx, dy;
  };
  std::array<offered, 32> pending{};  // JPS: successors offered by the current expansion
  std::size_t pending_count = 0;
  std::uint32_t best = 0;  // the expanded node closest to the goal by the heuristic
  double best_h = 0;

  /// Offers a path to cell `at` (of `index`) of cost `g` through `parent`; pushes it when it improves.
  /// `dx, dy` is the direction of the segment's last step.
  void relax(std::uint32_t index, cell at, std::uint32_t parent, path_cost g, int dx = 0, int dy = 0);
  /// JPS: queues a relax and prefetches its node. A jump point's node is a cache miss (jump
  /// points lie far apart); gathering an expansion's successors first lets their misses overlap.
  /// flush() relaxes them in the order offered, so the search is the same as relaxing at once.
  void offer(std::uint32_t index, cell at, std::uint32_t parent, path_cost g, int dx, int dy) {
    __builtin_prefetch(&nodes[index]);
    pending[pending_count++] = {index, at, parent, g, dx, dy};
    if (pending_count == pending.size()) flush();
  }
  /// Relaxes the offered successors.
  void flush() {
    for (std::size_t i = 0; i < pending_count; ++i) {
      const offered& o = pending[i];
      relax(o.index, o.at, o.parent, o.g, o.dx, o.dy);
    }
    pending_count = 0;
  }
  /// Pops the next node to expand, skipping stale entries; false when the open list is empty.
  bool pop(std::uint32_t& index);
  /// JPS's pop: bypass first, then the 4-ary heap; an entry is stale only once its node is closed
  /// (a better g for a node always comes with a smaller f, so it leaves the list first).
  bool pop_jps(std::uint32_t& index);
};

/// A*: relaxes the up to 8 neighbours of a node.
void expand_astar(search_state& s, std::uint32_t index);
/// JPS: jumps from a node in its pruned directions and relaxes the jump points found.
void expand_jps(search_state& s, std::uint32_t index);

}  // namespace scenert::nav
