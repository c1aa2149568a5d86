#pragma once
/// Per-instance cell occupancy tested through barrier masks (seed 001). The static block comes
/// from the shared map_data; who stands where belongs to one line or phase, so each instance owns
/// one occupancy layer over the same map.

#include <cstdint>
#include <memory>
#include <vector>

#include <scenert/scene/grid/map_data.hpp>
#include <scenert/scene/grid/types.hpp>

namespace scenert::grid {

/// Who occupies a cell: a generic barrier (fence, mechanism), a player, a monster or an item.
enum class occupant : std::uint8_t { barrier = 0, player = 1, monster = 2, item = 3 };

/// How an entity treats cells: whether it occupies its cell, and which occupants and blocks stop it.
struct barrier_mask {
  bool marks = false;         ///< standing here occupies the cell
  bool test_barrier = false;  ///< generic barriers stop it
  bool test_player = false;   ///< players stop it
  bool test_monster = false;  ///< monsters stop it
  bool test_item = false;     ///< items stop it
  bool test_block = true;     ///< static blocks stop it
};

/// Occupies nothing, stopped only by blocks (transparent scene objects).
inline constexpr barrier_mask barrier_none{false, false, false, false, false, true};
/// Occupies its cell, passes through players, monsters and items.
inline constexpr barrier_mask barrier_slack{true, true, false, false, false, true};
/// Occupies its cell, stopped by players and monsters, passes items.
inline constexpr barrier_mask barrier_default{true, true, true, true, false, true};
/// A scene item: occupies its cell, passes players and monsters, stopped by items.
inline constexpr barrier_mask barrier_item{true, true, false, false, true, true};

/// Occupancy counters of every cell of one map instance; all calls O(1).
/// Thread-safety: none; owned by the scene that ticks it.
class occupancy {
 public:
  /// An empty layer over a map (the map must not be null).
  explicit occupancy(std::shared_ptr<const map_data> map);

  /// Whether an entity with this mask may stand on the cell; false outside the map.
  bool can_stand(cell_point c, barrier_mask mask) const noexcept;
  /// Stands an occupant on a cell: checks can_stand, then counts it if the mask marks.
  grid_result<void> occupy(cell_point c, occupant who, barrier_mask mask);
  /// Takes an occupant off a cell (the reverse of a marking occupy).
  grid_result<void> release(cell_point c, occupant who);
  /// How many of an occupant stand on a cell (0 outside the map).
  std::uint32_t count(cell_point c, occupant who) const noexcept;
  /// Forgets every occupant (a line that closes).
  void clear() noexcept;
  /// The map this layer covers.
  const map_data& map() const noexcept { return *map_; }

 private:
  std::shared_ptr<const map_data> map_;
  // One byte counter per occupant packed in a word per cell: a mask test is one AND.
  std::vector<std::uint32_t> cells_;
};

}  // namespace scenert::grid
