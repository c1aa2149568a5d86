#pragma once
/// A flow field: the exact distance to one target from every cell, shared by all the mobs chasing
/// that target (a boss's adds on the tank, a pack on a player). Built a budget of cells per tick;
/// until complete its chasers steer. Each chaser steps to its neighbour nearest the target. A field
/// may stop at a reach: it then holds only the cells at most that far (by path) from the target, a
/// ball whose cost follows the chasers' distance rather than the map's size; beyond it chasers steer.

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include <scenert/nav/nav_map.hpp>
#include <scenert/nav/steering.hpp>
#include <scenert/nav/types.hpp>

namespace scenert::nav {

/// The distance field toward one target (Dijkstra from the target over the same moves as the
/// searches: octile costs, no corner cutting). Its arrays are reused by the next begin().
/// Thread-safety: none while building; once complete, any number of readers may share it.
class flow_field {
 public:
  /// Starts a field toward `target` (the arrays are cleared by the first build()); the map and
  /// the filter's callable must outlive the build. Only cells whose distance is at most `reach`
  /// are settled (their distances exact: a path that short never leaves the square of half-side
  /// `reach` around the target, the only cells a build touches); the others read as unreachable.
  void begin(const nav_map& map, cell target, cell_filter filter = {},
             double reach = std::numeric_limits<double>::infinity());
  /// Settles at most `budget` more cells; true once the field is complete.
  bool build(std::uint32_t budget);
  /// Whether the field is complete (usable).
  [[nodiscard]] bool complete() const noexcept { return complete_; }
  /// The target.
  [[nodiscard]] cell target() const noexcept { return target_; }
  /// The distance past which this field settles no cell (infinity: the whole map).
  [[nodiscard]] double reach() const noexcept { return reach_; }
  /// Cells settled so far.
  [[nodiscard]] std::uint32_t settled() const noexcept { return settled_; }
  /// Distance from a cell to the target; infinity where unreachable, blocked, outside the map,
  /// or not yet settled.
  [[nodiscard]] double distance(cell at) const noexcept;
  /// Starts loading what next_step reads about a cell (of index `index`): a hint, no effect.
  void prefetch(std::uint32_t index) const noexcept {
    if (index < done_.size()) __builtin_prefetch(&dist_[index]), __builtin_prefetch(&done_[index]);
  }
  /// The step a chaser on `from` takes: the allowed neighbour (no block, no corner, under the
  /// cell cap) with the lowest distance below its own; none on the target, when stuck, or while
  /// the field is incomplete.
  [[nodiscard]] std::optional<cell> next_step(cell from, const cell_counter& counts = {},
                                              std::uint32_t cell_cap = UINT32_MAX) const;

 private:
  struct entry {
    double d;
    std::uint32_t index;
  };
  void push(entry e);
  entry pop();
  void split_least();
  [[nodiscard]] unsigned bucket_of(double d) const noexcept;
  void relax_neighbours(std::uint32_t index);
  void restart();
  void clear_states();
  [[nodiscard]] std::optional<cell> next_step_inside(cell from, const cell_counter& counts,
                                                     std::uint32_t cell_cap) const;
  const nav_map* map_ = nullptr;
  cell_filter filter_;
  cell target_;
  double reach_ = std::numeric_limits<double>::infinity();
  std::vector<double> dist_;
  std::vector<std::uint8_t> done_;  // a cell's state: untouched, reached (dist_ tentative), finished
  std::uint32_t settled_ = 0;
  bool complete_ = false;
  // begin() only records the target: the first build() clears the arrays, so that a chaser's
  // think that asks for a new field costs no sweep of the map (the build's budget pays it).
  bool restart_pending_ = false;
  // Every cell whose state is not `untouched` lies in this rectangle (the last restart's square
  // around its target, clamped; the whole map after an unbounded one): a restart clears it alone.
  const nav_map* states_of_ = nullptr;  // the map the states were last cleared for
  std::uint32_t dirty_x0_ = 0, dirty_y0_ = 0, dirty_x1_ = 0, dirty_y1_ = 0;  // inclusive
  // The members above are a chaser's (next_step); the open list below, 1.5 KB, is the build's.
  // The open list: a radix heap on the distance's bits. Dijkstra never pushes a distance below the
  // last one popped, so an entry waits in the bucket of the highest bit in which it differs from
  // the last split's least distance, and moves down a few times at most (no sift through a tree).
  std::array<std::vector<entry>, 64> buckets_;
  std::uint64_t used_ = 0;  // bit b: bucket b is not empty
  std::uint64_t last_ = 0;  // the bits of the last split's least distance
  std::size_t open_ = 0;    // entries in the buckets
};

}  // namespace scenert::nav
