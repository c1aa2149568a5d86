#pragma once
/// A mover's passability for nav/ on top of the map's blocks: the cells its barrier mask blocks in
/// its line's occupancy. nav/ knows nothing of scene/: it takes this as a nav::cell_filter.

#include <scenert/config/scene_table.hpp>
#include <scenert/nav/types.hpp>
#include <scenert/scene/grid/occupancy.hpp>

namespace scenert::grid {

/// The barrier mask a table's monster barrier names (seed 001's none, slack, default, item).
[[nodiscard]] constexpr barrier_mask barrier_mask_of(monster_barrier barrier) noexcept {
  switch (barrier) {
    case monster_barrier::none:
    case monster_barrier::count_:
      return barrier_none;
    case monster_barrier::slack:
      return barrier_slack;
    case monster_barrier::standard:
      return barrier_default;
    case monster_barrier::item:
      return barrier_item;
  }
  return barrier_none;
}

/// Whether a mask is stopped by any occupant (else only the map's blocks stop it: no filter).
[[nodiscard]] constexpr bool tests_occupants(barrier_mask mask) noexcept {
  return mask.test_barrier || mask.test_player || mask.test_monster || mask.test_item;
}

/// The cells one mover may not enter besides the map's blocks: those its mask blocks in the
/// occupancy, except its own cell (it stands there, maybe marking it) and its goal (a chased
/// player stands there). Wrap it in a nav::cell_filter for a search or a step; it must outlive
/// them. Reads the occupancy as it is at each call: a search sliced over ticks sees it change, so a
/// follower checks each step again (nav::can_step with the same filter).
struct occupancy_passability {
  const occupancy* layer = nullptr;  ///< the line's occupancy (not null when asked)
  barrier_mask mask = barrier_none;  ///< the mover's mask
  nav::cell own;                     ///< the mover's cell
  nav::cell goal;                    ///< where it goes

  /// True for a cell the mover may not enter.
  bool operator()(nav::cell c) const noexcept {
    if (c == own || c == goal) return false;
    return !layer->can_stand({c.x, c.y}, mask);
  }
};

}  // namespace scenert::grid
