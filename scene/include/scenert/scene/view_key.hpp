#pragma once
/// view_key: one view of the world (a line, or one phase of a town line) as the front's mirrors, a
/// node's published views and a gateway's table of lines all name it; entity_of: who a line event is
/// about, players and monsters apart.

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>

#include <scenert/scene/fwd.hpp>
#include <scenert/scene/line_event.hpp>

namespace scenert {

/// A line (phase 0) or one phase of a town line. No generation: a view follows its line across
/// openings.
struct view_key {
  scene_id scene = 0;
  std::uint32_t line = 0;
  phase_id phase = 0;  ///< 0: the line itself
  /// The view of `line`'s phase `phase`.
  static constexpr view_key of(line_handle line, phase_id phase) noexcept {
    return {line.scene, line.line, phase};
  }
  friend constexpr auto operator<=>(const view_key&, const view_key&) = default;
};

/// Hashes a view_key for unordered maps (and for spreading views over shards: lines differ in their
/// low bits).
struct view_key_hash {
  std::size_t operator()(const view_key& k) const noexcept {
    return std::hash<std::uint64_t>{}((std::uint64_t{k.scene} << 32 | k.line) ^
                                      (std::uint64_t{k.phase} << 20));
  }
};

/// Who a line event is about, as one key: a monster's id with the top bit set, a player's as it is.
constexpr std::uint64_t entity_of(const line_event& e) noexcept {
  return e.player ^ (e.monster ? (std::uint64_t{1} << 63) : 0);
}

}  // namespace scenert
