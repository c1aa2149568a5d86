#pragma once
/// space_module: the phases (位面) of one town line — running copies of the spaces bound to the town,
/// pre-created at the line's on_init, created on demand, ticked by the town's own tick, and returned to a
/// bounded cache when their last player leaves.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include <scenert/config/scene_table.hpp>
#include <scenert/runtime/result.hpp>
#include <scenert/scene/phase_host.hpp>
#include <scenert/scene/scene.hpp>

namespace scenert {

struct space_limits {
  std::uint32_t cache_limit = 16;  ///< parked phases kept per space (at least its min_spaces)
  unsigned quarantine_after = 10;  ///< consecutive failing ticks of a phase before it is closed
  std::size_t mailbox_batch = 1024;
  /// Called once per new phase object, before its on_init, with its town line: add modules
  /// (quest scripts) to the phase.
  std::function<void(scene& town, scene& phase)> on_new_phase;
};

/// Thread-safety: none; every call runs on the town line's thread (its tick or its mailbox).
class space_module final : public scene_module, public phase_host, private scene_host {
 public:
  /// The phases of lines of `town`; `table` must outlive the module.
  space_module(const scene_table& table, const scene_def& town, space_limits limits = {});
  ~space_module() override;

  /// Takes a parked phase of `space` or creates one (on_init), gives it a phase id and activates it.
  [[nodiscard]] result<phase_id, world_errc> open_phase(scene_id space);

  // phase_host: the world's requests, on the town's thread.
  /// Moves a player of the town into a new phase of `space`.
  [[nodiscard]] result<phase_id, world_errc> enter_phase(scene& town, player_id player,
                                                         scene_id space) override;
  /// Moves a player out of its phase back onto the town, where it stood in the phase (or where it
  /// entered); the phase closes on the town's next tick when it was the last player.
  [[nodiscard]] result<phase_id, world_errc> leave_phase(scene& town, player_id player) override;
  void move_in_phase(player_id player, grid::cell_point to) override;
  void drop_from_phase(player_id player) override;
  [[nodiscard]] bool in_phase(player_id player) const override { return visits_.count(player) != 0; }
  [[nodiscard]] std::uint32_t running_phases() const override { return running_phases(0); }

  [[nodiscard]] std::optional<phase_id> phase_of(player_id player) const override;
  /// A running phase; null when it is not running.
  [[nodiscard]] scene* phase(phase_id id) const;
  /// Running phases of a space (of every space when 0).
  [[nodiscard]] std::uint32_t running_phases(scene_id space) const;
  /// Parked phases of a space.
  [[nodiscard]] std::size_t parked(scene_id space) const;
  /// Phase objects created so far (on_init runs), across spaces.
  [[nodiscard]] std::uint64_t created() const noexcept { return created_; }
  /// The spaces bound to this town.
  [[nodiscard]] std::vector<scene_id> spaces() const;

  void on_init(scene& town) override;
  void on_active(scene& town) override;
  void on_inactive(scene& town) override;
  void on_tick(scene& town, const tick_context& ctx) override;

 private:
  struct bound_space;
  struct running_phase {
    phase_id id = 0;
    bound_space* space = nullptr;
    std::unique_ptr<scene> obj;
    bool closing = false;  // its last player left: it closes on the town's next tick
  };
  struct visit {
    phase_id phase = 0;
    std::optional<grid::cell_point> entered_at;
  };

  bound_space* find(scene_id space);
  std::unique_ptr<scene> make_phase(bound_space& b);
  void park_min_spaces();
  void park(running_phase& r);
  void send_home(scene& town, running_phase& r);
  running_phase* find_running(phase_id id);
  void take_from(scene& phase, phase_id id, player_id player);
  void close_if_empty(phase_id id);

  void scene_empty(line_handle) override {}
  // A phase's events go to the town line's host as the town line's, with the phase's id.
  bool wants_line_events() const override;
  void line_events(line_handle phase_line, phase_id, std::span<const line_event> events) override;
  void player_left(line_handle line, player_id player) override;
  void scene_quarantined(line_handle line) override;

  const scene_table& table_;
  const scene_def& town_def_;
  space_limits limits_;
  std::shared_ptr<const grid::map_data> map_;  // the town's: phases share its static data
  std::shared_ptr<const nav::nav_map> nav_;    // and its monsters' passability
  scene* town_ = nullptr;                      // the line object this module belongs to (set at on_init)
  std::vector<std::unique_ptr<bound_space>> spaces_;
  std::vector<running_phase> running_;
  std::unordered_map<player_id, visit> visits_;
  phase_id next_phase_ = 1;
  std::uint64_t created_ = 0;
};

/// A world_options::on_new_line hook: gives every town line that has spaces bound to it a space_module.
[[nodiscard]] std::function<void(scene&)> attach_space_modules(const scene_table& table,
                                                               space_limits limits = {});

/// The space module of a town line, or null.
[[nodiscard]] space_module* find_space_module(scene& town) noexcept;

}  // namespace scenert
