#pragma once
/// What a line's tick did to its players, reported in one batch per tick: the network front keeps a
/// mirror of the line's areas from these and fans them out to the viewers (seed 000's gateway).

#include <cstdint>

#include <scenert/scene/fwd.hpp>
#include <scenert/scene/grid/types.hpp>

namespace scenert {

struct line_event {
  enum class kind : std::uint8_t { entered, left, moved };
  kind what = kind::entered;
  player_id player = 0;
  grid::cell_point at{};  ///< entered, moved: the cell the player stands on now
};

}  // namespace scenert
