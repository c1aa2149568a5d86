#pragma once
/// The invariants of `scenert loadtest`, checked against the world's own directory on the world's
/// thread (so the directory and the answered requests are seen at one instant).

#include <cstdint>
#include <string>
#include <vector>

#include <scenert/config/scene_table.hpp>
#include <scenert/scene/line_directory.hpp>
#include <scenert/scene/world.hpp>

namespace scenert::loadtest {

/// Per scene definition, what the checks saw.
struct scene_watch {
  const scene_def* def = nullptr;
  std::uint32_t max_open_lines = 0;
  std::uint32_t max_players_on_line = 0;
  std::uint32_t max_phases_on_line = 0;  ///< towns: most phases with players on one line at once
};

/// Thread-safety: check() on the world's thread (inside world::query); the readers after the
/// query's completion was observed (a future or a promise orders them).
class invariant_checker {
 public:
  /// Messages kept at most; violations beyond it are counted only.
  static constexpr std::size_t max_messages = 100;

  explicit invariant_checker(const scene_table& table);

  /// One check: every player the answers placed is on exactly one line (two while switching) and
  /// nobody else is; no line above its hard capacity; open lines within min..max of each scene;
  /// no town line running more phases of a space than its max_spaces.
  void check(const line_directory& dir, const std::vector<std::uint8_t>& online);
  /// After the world shut down (its last snapshot): every line closed.
  void check_closed(const world_snapshot& last);
  /// A violation found elsewhere (e.g. counts that do not add up at the end).
  void add_violation(std::string message);

  [[nodiscard]] std::uint64_t checks() const noexcept { return checks_; }
  [[nodiscard]] std::uint64_t violation_count() const noexcept { return violations_; }
  [[nodiscard]] const std::vector<std::string>& messages() const noexcept { return messages_; }
  [[nodiscard]] const std::vector<scene_watch>& scenes() const noexcept { return scenes_; }

 private:
  void check_lines(const line_directory& dir, scene_watch& w);
  void check_phases(const line_directory& dir, scene_watch& w, const line_info& line);
  void check_players(const line_directory& dir, const std::vector<std::uint8_t>& online);

  const scene_table& table_;
  std::vector<scene_watch> scenes_;
  std::uint64_t checks_ = 0, violations_ = 0;
  std::vector<std::string> messages_;
  std::vector<std::uint32_t> seen_;  // scratch: lines each player was found on, by player index
  std::uint64_t strangers_ = 0;      // scratch: players on lines that no answer placed
};

}  // namespace scenert::loadtest
