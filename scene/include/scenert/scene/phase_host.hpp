#pragma once
/// phase_host: what a town line asks of the module that hosts its phases. The space library
/// implements it as a scene module; the scene finds it once, when the module is added.

#include <cstdint>
#include <optional>

#include <scenert/runtime/result.hpp>
#include <scenert/scene/fwd.hpp>
#include <scenert/scene/grid/types.hpp>

namespace scenert {

/// Thread-safety: every call runs on the town line's thread (while it applies its roster).
class phase_host {
 public:
  virtual ~phase_host() = default;
  /// Moves a player of the town into a new phase of `space`: the phase's id, or why not
  /// (space_in_space, wrong_town, space_full, unknown_space).
  [[nodiscard]] virtual result<phase_id, world_errc> enter_phase(scene& town, player_id player,
                                                                 scene_id space) = 0;
  /// Moves a player out of its phase back onto the town (not_in_space when it is in none).
  [[nodiscard]] virtual result<phase_id, world_errc> leave_phase(scene& town, player_id player) = 0;
  /// Walks a player inside its phase.
  virtual void move_in_phase(player_id player, grid::cell_point to) = 0;
  /// Forgets a player that leaves the town line from inside a phase (leave, transfer, eviction).
  virtual void drop_from_phase(player_id player) = 0;
  /// Whether a player of the town stands in one of its phases.
  [[nodiscard]] virtual bool in_phase(player_id player) const = 0;
  /// The phase a player of the town stands in, if any.
  [[nodiscard]] virtual std::optional<phase_id> phase_of(player_id player) const = 0;
  /// Phases running on the line, for snapshots.
  [[nodiscard]] virtual std::uint32_t running_phases() const = 0;
};

}  // namespace scenert
