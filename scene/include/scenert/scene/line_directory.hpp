#pragma once
/// line_directory: the world's bookkeeping of lines and players — which lines of each scene are
/// open, how full they are, and where every player is. Kept behind this narrow interface so that
/// several processes could later share one directory in a store; the world holds no other copy.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <scenert/config/scene_table.hpp>
#include <scenert/runtime/result.hpp>
#include <scenert/scene/fwd.hpp>

namespace scenert {

/// Where a line stands. Only `open` lines take players.
enum class line_state : std::uint8_t { free, open, quarantined, closing };

/// Name of a line state, for logs and the admin endpoint.
[[nodiscard]] const char* to_string(line_state state) noexcept;

/// Where a player stands: nowhere, on one line, or switching from `line` to `target`.
struct location {
  enum class state : std::uint8_t { none, in_line, switching };
  state where = state::none;
  line_handle line{};          ///< in_line: the line; switching: the line it leaves
  line_handle target{};        ///< switching: the line it goes to
  scene_id space = 0;          ///< in_line: the space of the phase it is in on that line (0: none)
  phase_id phase = 0;          ///< in_line: the phase it is in on that line (0: none)
  bool phase_pending = false;  ///< in_line: entering or leaving a phase right now (switching into it)
};

/// One line as the directory sees it.
struct line_info {
  line_handle handle{};
  line_state state = line_state::free;
  std::uint32_t players = 0;  ///< including players switching in or out
  party_id owner = 0;         ///< the party whose private instance it is (0: a shared line)
};

/// Per scene definition counters.
struct line_counts {
  std::uint32_t live = 0;  ///< open + quarantined + closing: never above max_lines
  std::uint32_t open = 0;
  std::uint32_t open_private = 0;  ///< open lines that are private instances (part of `open`)
  std::uint64_t opened = 0;
  std::uint64_t opened_private = 0;  ///< private instances opened (part of `opened`)
  std::uint64_t closed = 0;
};

/// Thread-safety: none; used by the world's thread only.
class line_directory {
 public:
  virtual ~line_directory() = default;

  // ---- lines --------------------------------------------------------------------------
  /// Opens the lowest free line id of a scene with a new generation; nullopt at max_lines. A line
  /// with an `owner` is that party's private instance: pick() never offers it.
  virtual std::optional<line_handle> open_line(scene_id scene, party_id owner) = 0;
  /// Opens line `line` of a scene at `generation`, as a cluster's store decided them; nullopt when
  /// that line is not free here or the generation is older than its last. A directory opens its
  /// lines either all this way or all by open_line().
  virtual std::optional<line_handle> open_line_at(scene_id scene, std::uint32_t line,
                                                  std::uint32_t generation, party_id owner) = 0;
  /// An open line stops taking players (its scene failed); it still counts as live.
  virtual void quarantine_line(line_handle line) = 0;
  /// An empty line starts closing: its handle is stale from now on.
  virtual void close_line(line_handle line) = 0;
  /// A closing line finished closing: its id may be reopened.
  virtual void free_line(scene_id scene, std::uint32_t line) = 0;
  /// The line named by a handle: unknown_scene, unknown_line or stale_line when it is not live.
  [[nodiscard]] virtual result<line_info, world_errc> check(line_handle line) const = 0;
  /// A shared open line of the scene holding fewer than `below` players, by the scene's policy.
  [[nodiscard]] virtual std::optional<line_handle> pick(scene_id scene, std::uint32_t below) const = 0;
  /// Counters of a scene's lines (zeros for an unknown scene).
  [[nodiscard]] virtual line_counts counts(scene_id scene) const = 0;
  /// Calls fn for every live line of a scene, in line order.
  virtual void for_each_line(scene_id scene, const std::function<void(const line_info&)>& fn) const = 0;

  // ---- players ------------------------------------------------------------------------
  /// Where a player is.
  [[nodiscard]] virtual location locate(player_id player) const = 0;
  /// Places a player who is nowhere on a live line.
  virtual void place(player_id player, line_handle line) = 0;
  /// A placed player starts switching to `target` (counted on both lines until it lands); it
  /// leaves any phase of its line.
  virtual void begin_switch(player_id player, line_handle target) = 0;
  /// A switching player lands on its target.
  virtual void finish_switch(player_id player) = 0;
  /// A switching player goes back to its source line (the target is given up).
  virtual void cancel_switch(player_id player) = 0;
  /// Records the phase a player on a line is in (or going into / out of, while `pending`).
  virtual void set_phase(player_id player, scene_id space, phase_id phase, bool pending) = 0;
  /// The player stands on its line itself again.
  virtual void clear_phase(player_id player) = 0;
  /// Takes a placed (not switching) player off its line.
  virtual void remove(player_id player) = 0;
  /// The players on a line, switching ones included.
  [[nodiscard]] virtual std::vector<player_id> players(line_handle line) const = 0;
  /// Players known to the directory.
  [[nodiscard]] virtual std::size_t player_count() const = 0;
};

/// The in-process directory over a scene table (which must outlive it).
[[nodiscard]] std::unique_ptr<line_directory> make_local_line_directory(const scene_table& table);

}  // namespace scenert
