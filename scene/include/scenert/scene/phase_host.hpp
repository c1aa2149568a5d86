#pragma once
/// phase_host: what the world asks of a town line that hosts phases. The space library implements
/// it as a scene module; the world finds it among the town scene's modules.

#include <cstdint>

#include <scenert/runtime/result.hpp>
#include <scenert/scene/fwd.hpp>
#include <scenert/scene/grid/types.hpp>

namespace scenert {

/// Thread-safety: every call runs on the town line's thread (posted to its mailbox by the world).
class phase_host {
 public:
  virtual ~phase_host() = default;
  /// Moves a player of the town into a new phase of `space`: the phase's child id, or why not
  /// (space_in_space, wrong_town, space_full, unknown_space).
  [[nodiscard]] virtual result<std::uint32_t, world_errc> enter_phase(scene& town, player_id player,
                                                                      scene_id space) = 0;
  /// Moves a player out of its phase back onto the town (not_in_space when it is in none).
  [[nodiscard]] virtual result<std::uint32_t, world_errc> leave_phase(scene& town, player_id player) = 0;
  /// Walks a player inside its phase.
  virtual void move_in_phase(player_id player, grid::cell_point to) = 0;
  /// Forgets a player that leaves the town line from inside a phase (leave, transfer, eviction).
  virtual void drop_from_phase(player_id player) = 0;
  /// Phases running on the line, for snapshots.
  [[nodiscard]] virtual std::uint32_t running_phases() const = 0;
};

/// The phase host among a scene's modules, or null.
[[nodiscard]] phase_host* find_phase_host(scene& s) noexcept;

}  // namespace scenert
