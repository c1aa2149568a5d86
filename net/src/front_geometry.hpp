#pragma once
// What the front needs of the table's scenes and maps: each map's data, digest and row runs (built
// once per map, on first use), world units, and a scene's 1006 (with the blocks once per connection).

#include "player_book.hpp"
#include "session.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <scenert/config/scene_table.hpp>
#include <scenert/net/map_blocks.hpp>
#include <scenert/net/messages.hpp>
#include <scenert/scene/grid/map_data.hpp>
#include <scenert/scene/scene.hpp>
#include <scenert/scene/world.hpp>

namespace scenert::net {

// Thread-safety: none; one per I/O thread.
class scene_geometry {
 public:
  explicit scene_geometry(const scene_table& table) : table_(table) {}

  [[nodiscard]] const scene_def* def_of(scene_id id) const { return table_.find_scene(id); }
  /// The map of a scene, built on first use.
  const std::shared_ptr<const grid::map_data>& map_of(const scene_def& s);
  /// The units of a scene's map (cell size, origin).
  [[nodiscard]] const map_def& units_of(const scene_def& d) const;
  /// Scenert's 1006 for a player placed at `p` of `def`: with the map's blocks unless `told`'s client
  /// holds the map already, which it does from then on.
  server_message info_of(const scene_def& def, const placement& p, player_state& told);

  /// The centre of a cell, in world units.
  static position centre(grid::cell_point c, const map_def& u);
  /// Where a player stands: the position its client asked for when the server put it in that cell.
  static position position_of(const player_state& p, grid::cell_point c, const map_def& u);
  /// Where a player will stand once the world applied its moves (speed and refusals count from here).
  static position last_accepted(const player_state& p, grid::cell_point c, const map_def& u);
  /// Another player's position, whichever shard holds its connection.
  static position position_of(const std::optional<player_book::card>& card, grid::cell_point c,
                              const map_def& u);

 private:
  // What 1006 says of a map's static data.
  struct map_on_wire {
    std::uint64_t digest = 0;
    wire_blocks blocks;  // the shorter of row runs and bits
  };
  const map_on_wire& wire_of(const scene_def& def);

  const scene_table& table_;
  std::map<map_id, std::shared_ptr<const grid::map_data>> maps_;
  std::map<map_id, map_on_wire> wire_;
};

}  // namespace scenert::net
