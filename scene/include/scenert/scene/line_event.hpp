#pragma once
/// What a line's tick did to its players and monsters, reported in one batch per tick: the network
/// front keeps a mirror of the line's areas from these and fans them out to the viewers (seed 000's
/// gateway).

#include <cstdint>

#include <scenert/scene/fwd.hpp>
#include <scenert/scene/grid/types.hpp>

namespace scenert {

struct line_event {
  enum class kind : std::uint8_t { entered, left, moved };
  kind what = kind::entered;
  player_id player = 0;   ///< the player, or the monster_id when `monster`
  grid::cell_point at{};  ///< entered, moved: the cell it stands on now
  bool monster = false;   ///< a monster (spawned when the line opens, moved by its AI) and not a player
};

}  // namespace scenert
