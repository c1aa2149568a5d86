#pragma once
// The private state of a search_context, shared by the A* and JPS expansion code.

#include <scenert/nav/search.hpp>

#include <cstdint>
#include <vector>

namespace scenert::nav {

/// One cell's search record, 16 bytes (a search's time goes mostly to misses on these): valid only
/// when the stamp's generation is the state's. Stamp bits: generation << 5, closed (expanded) << 4,
/// and the direction of the last step on the way in (dx + 1) * 3 + (dy + 1), which JPS prunes by.
struct search_node {
  double g = 0;
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
  std::vector<heap_entry> heap;
  std::vector<heap_entry> bypass;  // successors with the least f, expanded before the heap's
  bool use_bypass = false;         // JPS only: A* stays the plain baseline
  double current_f = 0;            // f of the node being expanded
  search_status status = search_status::idle;
  std::uint32_t expansions = 0;
  std::uint32_t best = 0;  // the expanded node closest to the goal by the heuristic
  double best_h = 0;

  /// Offers a path to cell `at` (of `index`) of cost `g` through `parent`; pushes it when it improves.
  /// `dx, dy` is the direction of the segment's last step.
  void relax(std::uint32_t index, cell at, std::uint32_t parent, double g, int dx = 0, int dy = 0);
  /// Pops the next node to expand, skipping stale entries; false when the open list is empty.
  bool pop(std::uint32_t& index);
};

/// A*: relaxes the up to 8 neighbours of a node.
void expand_astar(search_state& s, std::uint32_t index);
/// JPS: jumps from a node in its pruned directions and relaxes the jump points found.
void expand_jps(search_state& s, std::uint32_t index);

}  // namespace scenert::nav
