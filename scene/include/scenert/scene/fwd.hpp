#pragma once
/// Forward declarations and the small value types of the scene library.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include <scenert/config/scene_table.hpp>

namespace scenert {

/// A player, as the gateway names it.
using player_id = std::uint64_t;

/// A monster on a line, by the entity id its line gave it: never a player's id (a line event's
/// `monster` says which of the two it names).
using monster_id = std::uint64_t;

/// A party (a team that enters a dungeon together), as the game names it; 0 is no party.
using party_id = std::uint64_t;

/// A line of a scene definition: which definition, which line (1-based) and which opening of it.
/// A handle whose generation is not the line's current one is stale: the line closed since.
struct line_handle {
  scene_id scene = 0;            ///< the scene definition
  std::uint32_t line = 0;        ///< 1 .. max_lines
  std::uint32_t generation = 0;  ///< bumped each time the line opens
  friend constexpr bool operator==(line_handle, line_handle) = default;
};

/// A running phase of one town line (a copy of a space bound to the town); never reused while the
/// town line is open. 0 means the town line itself.
using phase_id = std::uint32_t;

/// Expected failures of the world and its lines.
enum class world_errc : std::uint8_t {
  ok = 0,
  line_full,           ///< every line is full and max_lines are open (or the named line is full)
  unknown_scene,       ///< no scene definition with that id (or a space, which has no lines)
  unknown_line,        ///< no such line id for that scene
  stale_line,          ///< the named line closed (and maybe reopened) since the handle was made
  already_in_scene,    ///< enter for a player that is already placed
  not_in_scene,        ///< leave / transfer for a player that is nowhere
  switching,           ///< the player is moving between two lines; retry when it lands
  same_line,           ///< a transfer to the line the player is on
  line_quarantined,    ///< the line's scene failed too often and takes no players
  teammate_not_found,  ///< join-team: the team-mate is not on a line
  shutting_down,       ///< the world stopped taking requests
  space_in_space,      ///< phase: the player is in a phase already; phases do not nest
  request_pending,     ///< phase: a phase request for the player is still under way
  wrong_town,          ///< phase: the player's town line is not the space's bind_town
  space_full,          ///< phase: max_spaces of that space run on the town line
  unknown_space,       ///< phase: no scene of kind space has that id
  not_in_space,        ///< phase: leave for a player that is in no phase
  instance_private,    ///< the line is the private instance of another party
  not_in_instance,     ///< leave-party: the player is on no private instance of its party
  node_unavailable,    ///< cluster: no live node took the request, or the player's node did not answer
  count_               ///< not a code: how many there are
};

/// How many codes there are, for tables indexed by code.
inline constexpr std::size_t world_errc_count = static_cast<std::size_t>(world_errc::count_);

/// Every code's name, by code; a code added above without a name here fails to compile.
inline constexpr std::array<const char*, world_errc_count> world_errc_names = {"ok",
                                                                               "line_full",
                                                                               "unknown_scene",
                                                                               "unknown_line",
                                                                               "stale_line",
                                                                               "already_in_scene",
                                                                               "not_in_scene",
                                                                               "switching",
                                                                               "same_line",
                                                                               "line_quarantined",
                                                                               "teammate_not_found",
                                                                               "shutting_down",
                                                                               "space_in_space",
                                                                               "request_pending",
                                                                               "wrong_town",
                                                                               "space_full",
                                                                               "unknown_space",
                                                                               "not_in_space",
                                                                               "instance_private",
                                                                               "not_in_instance",
                                                                               "node_unavailable"};
static_assert(std::ranges::none_of(world_errc_names, [](const char* n) { return n == nullptr; }),
              "world_errc_names: name every code");

/// Name of an error code, for logs and messages.
[[nodiscard]] constexpr const char* to_string(world_errc code) noexcept {
  const auto i = static_cast<std::size_t>(code);
  return i < world_errc_count ? world_errc_names[i] : "unknown";
}

class scene;
class scene_group;
class scene_module;
class phase_host;
class line_directory;
class world;

}  // namespace scenert
