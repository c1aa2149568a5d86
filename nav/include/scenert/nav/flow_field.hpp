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
/// searches: octile costs, no corner cutting). Its arrays cover only the square a build can touch
/// (half-side: its reach), so a field's memory follows its chasers' distance, not the map's size;
/// they are reused by the next begin().
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
  /// Cells the arrays cover since the last build began (its window): what the field's memory follows.
  [[nodiscard]] std::size_t cells_held() const noexcept { return done_.size(); }
  /// Cells settled so far.
  [[nodiscard]] std::uint32_t settled() const noexcept { return settled_; }
  /// Distance from a cell to the target; infinity where unreachable, blocked, outside the map,
  /// or not yet settled.
  [[nodiscard]] double distance(cell at) const noexcept;
  /// Starts loading what next_step reads about a cell and the rows beside it: a hint, no effect.
  void prefetch(cell at) const noexcept {
    if (!in_window(at)) return;
    const std::uint32_t i = local(at.x, at.y);
    for (const std::uint32_t row :
         {i >= win_w_ ? i - win_w_ : i, i, i + win_w_ < done_.size() ? i + win_w_ : i})
      __builtin_prefetch(&dist_[row]), __builtin_prefetch(&done_[row]);
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
  [[nodiscard]] bool in_window(cell c) const noexcept {
    return c.x >= win_x0_ && c.y >= win_y0_ && c.x - win_x0_ < win_w_ && c.y - win_y0_ < win_h_;
  }
  /// The index in the arrays of a cell inside the window.
  [[nodiscard]] std::uint32_t local(std::uint32_t x, std::uint32_t y) const noexcept {
    return (y - win_y0_) * win_w_ + (x - win_x0_);
  }
  [[nodiscard]] cell cell_at(std::uint32_t index) const noexcept {
    return {win_x0_ + index % win_w_, win_y0_ + index / win_w_};
  }
  [[nodiscard]] std::optional<cell> next_step_inside(cell from, const cell_counter& counts,
                                                     std::uint32_t cell_cap) const;
  const nav_map* map_ = nullptr;
  cell_filter filter_;
  cell target_;
  double reach_ = std::numeric_limits<double>::infinity();
  // The window: the cells of the map the arrays hold, row by row (the last restart's square).
  std::uint32_t win_x0_ = 0, win_y0_ = 0, win_w_ = 0, win_h_ = 0;
  std::vector<double> dist_;
  std::vector<std::uint8_t> done_;  // a cell's state: untouched, reached (dist_ tentative), finished
  std::uint32_t settled_ = 0;
  bool complete_ = false;
  // begin() only records the target: the first build() clears the arrays, so that a chaser's
  // think that asks for a new field costs no sweep of the map (the build's budget pays it).
  bool restart_pending_ = false;
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
