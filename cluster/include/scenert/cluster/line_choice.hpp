#pragma once
/// Which line a player entering a scene goes to across the cluster: the scene's policy over every
/// node's open lines, as one process's world picks among its own, so that no node opens a line
/// while another node's line of the scene has room.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include <scenert/config/scene_table.hpp>

namespace scenert::cluster {

/// An open line as a gateway last heard it.
struct line_load {
  std::string_view node;
  std::uint32_t line = 0;
  std::uint32_t players = 0;  ///< heard on the line (every phase of it) plus those sent there since
};

/// The index in `lines` of the line the policy picks among those with fewer than `below` players:
/// fill-first the fullest, least-loaded the emptiest; a tie goes to a line on `own` (the node the
/// player stands on: no journey), then to the lowest line id. None when every line is full.
[[nodiscard]] std::optional<std::size_t> choose_line(allocation_policy policy, std::uint32_t below,
                                                     std::span<const line_load> lines, std::string_view own);

/// Where a scene's next line opens when every open line is full (a gateway's setting).
enum class line_opening : std::uint8_t {
  least_loaded_node,  ///< on the live node with the fewest players
  player_node,        ///< on the node the player stands on (no journey); a new player's: least loaded
};

}  // namespace scenert::cluster
