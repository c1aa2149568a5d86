#pragma once
/// Views are the truth: what the server's scenes hold (the admin endpoint's /lines/SCENE/LINE)
/// against what each bot saw (202, 200 Tp 2 and Tp 4, 201). A bot must see exactly the players
/// whose area is within the map's eyesight of its own (Chebyshev distance in areas, on its own
/// line or phase), each at the cell the scene holds it in.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <scenert/runtime/result.hpp>

namespace scenert::bots {

/// A view's map, in cells and world units, as /lines/SCENE/LINE gives it.
struct view_geometry {
  std::uint32_t width = 0, height = 0;  ///< cells
  double cell_size = 1, origin_x = 0, origin_z = 0;
  std::uint32_t area_width = 1, area_height = 1;  ///< cells per area
  std::uint32_t eyesight_x = 1, eyesight_y = 1;   ///< areas: (1,1) the 9-grid, (2,2) the 25-grid
};

/// A player as its scene holds it: on a cell.
struct true_player {
  std::int32_t pid = 0;
  std::uint32_t x = 0, y = 0;
};

/// One line, or one phase of a town line (`phase` 0: the line itself), as the scene holds it.
struct true_view {
  std::uint32_t scene = 0, line = 0, phase = 0;
  view_geometry geometry;
  std::vector<true_player> players;
};

/// Parses one /lines/SCENE/LINE document into its views: the line's own, then one per phase.
/// Errors name the JSON path and the reason.
[[nodiscard]] result<std::vector<true_view>, std::string> parse_line_document(std::string_view json);

/// A player as a bot last heard of it, in world units.
struct seen_player {
  std::int32_t pid = 0;
  float x = 0, z = 0;
};

/// What one bot believes: where it stands (from its answers, its own entry in its 202 and its own
/// 200 Tp 2/4) and whom it sees (itself left out).
struct bot_view {
  std::int32_t pid = 0;
  std::uint32_t scene = 0, line = 0, phase = 0;
  float x = 0, z = 0;
  std::vector<seen_player> seen;
};

/// The comparison's counts; every mismatch is one of these.
struct view_check {
  std::uint64_t bots = 0;            ///< bots compared
  std::uint64_t pairs = 0;           ///< (bot, true neighbour) pairs checked
  std::uint64_t missing = 0;         ///< a true neighbour the bot does not see
  std::uint64_t extra = 0;           ///< a player the bot sees that is not its neighbour
  std::uint64_t wrong_position = 0;  ///< a neighbour (or the bot itself) seen on another cell
  std::uint64_t misplaced = 0;       ///< a bot not found on the line and phase it believes it is on
  /// Players left out, not mismatches: their views changed while the truth was read (line by line,
  /// over many ticks), so the truth may hold either side of the change (a last attempt only).
  std::uint64_t changed = 0;
  std::vector<std::string> examples;  ///< the first few mismatches, each naming bot, player, scene/line/phase
  [[nodiscard]] std::uint64_t mismatches() const noexcept {
    return missing + extra + wrong_position + misplaced;
  }
};

/// Leaves the `changed` players out of a check: from the truth, from every bot's view and as bots
/// themselves. Returns how many of them the truth or a view held.
std::uint64_t leave_out_changed(std::vector<true_view>& truth, std::vector<bot_view>& views,
                                const std::unordered_set<std::int32_t>& changed);
/// Compares every bot's view with the truth.
[[nodiscard]] view_check compare_views(std::span<const true_view> truth, std::span<const bot_view> bots);

}  // namespace scenert::bots
