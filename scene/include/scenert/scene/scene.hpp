#pragma once
/// scene: one line of a scene definition — a service with its players, its grid on the map's
/// shared static data, its monsters, its treasure chest and its modules.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <scenert/config/scene_table.hpp>
#include <scenert/nav/nav_map.hpp>
#include <scenert/runtime/inbox.hpp>
#include <scenert/runtime/result.hpp>
#include <scenert/runtime/service.hpp>
#include <scenert/scene/fwd.hpp>
#include <scenert/scene/game_module.hpp>
#include <scenert/scene/grid/grid.hpp>
#include <scenert/scene/grid/map_data.hpp>
#include <scenert/scene/line_event.hpp>

namespace scenert {

namespace detail {
class monster_brains;
class module_runner;
}  // namespace detail

/// What a monster's brain is doing.
enum class brain_state : std::uint8_t {
  idle,    ///< no target: wanders near home
  chase,   ///< walking toward its target (a mob steers, a boss follows a searched path)
  attack,  ///< next to its target: it stays
  leash,   ///< pulled too far from home: walking back, its target forgotten
  dead,    ///< killed: off the grid until the line reopens
};

/// Name of a brain state ("idle", "chase", ...), for logs and the wire.
[[nodiscard]] const char* to_string(brain_state state) noexcept;

/// A monster as its brain sees it.
struct monster_view {
  brain_state state = brain_state::idle;  ///< what it is doing
  grid::cell_point home{};                ///< where it spawned and returns to
  std::optional<grid::entity_id> target;  ///< the player entity it chases or attacks
  bool searching = false;                 ///< a boss whose path search is in the line's queue
  std::optional<grid::cell_point> goal;   ///< a boss: the cell its search or its path leads to
};

/// Where a line's monster AI spends its time: the monsters' thinks (steering, flow-field steps,
/// path following) and the tick's searches (the bosses' path queue and the flow fields' builds),
/// each timed once per tick by the thread's CPU clock when scene::time_ai asked (time waiting for a
/// core stays out).
struct ai_costs {
  std::uint64_t think_ns = 0;     ///< the AI batches' thinks
  std::uint64_t search_ns = 0;    ///< step_searches: path queue and flow-field builds
  std::uint64_t expansions = 0;   ///< search nodes expanded by the bosses' path queue
  std::uint64_t field_cells = 0;  ///< cells settled by flow-field builds
  /// Monster steps taken by the thinks (cells moved: a think of a monster of speed 2 takes up to 2).
  std::uint64_t steps = 0;
  /// Thinks that took no step (idle, attacking, waiting for a path or a free cell): their time is
  /// in think_ns, so a time per step charges them to the steps taken.
  std::uint64_t still_thinks = 0;
  /// AI ticks timed: each of the two times holds about one clock read per timed tick (a reader
  /// subtracts its own measure of a read).
  std::uint64_t timed_ticks = 0;
  /// An empty part timed before each timed tick's parts: one read of the clock as it adds to
  /// each of the two times, measured in place (a reader subtracts it from each).
  std::uint64_t clock_ns = 0;
};

/// What a scene tells whoever hosts it (the world). Calls come from the scene's thread.
/// Thread-safety: implementations must accept calls from any thread.
class scene_host {
 public:
  virtual ~scene_host() = default;
  /// The scene's last player left (never sent by guild scenes and spaces).
  virtual void scene_empty(line_handle line) = 0;
  /// A leave that asked for an acknowledgement is done: the player's state left the scene.
  virtual void player_left(line_handle line, player_id player) = 0;
  /// The scene failed too many ticks in a row: it takes no players and its players must move.
  virtual void scene_quarantined(line_handle line) = 0;
  /// A phase of this town line failed and closed; its players stand on the town line again.
  virtual void phase_closed(line_handle /*town_line*/, phase_id /*phase*/,
                            std::vector<player_id> /*players*/) {}
  /// The town line applied an enter_phase or leave_phase change: the phase, or why not.
  virtual void phase_answered(line_handle /*town_line*/, player_id /*player*/,
                              result<phase_id, world_errc> /*answer*/, bool /*entering*/) {}
  /// A client's move or message posted straight to the line was dropped as stale: meant for another
  /// opening of the line, for a player it does not hold (gone elsewhere) or for another phase.
  virtual void dropped_stale(player_id /*player*/) {}
  /// Whether the host hears line_events (asked once per line object, when it is first activated).
  [[nodiscard]] virtual bool wants_line_events() const { return false; }
  /// What a tick did to the players of a line or of one of its phases (`phase` 0: the line itself):
  /// entered, left, moved on its grid, once per tick that changed something, in the order it happened.
  virtual void line_events(line_handle /*line*/, phase_id /*phase*/, std::span<const line_event> /*events*/) {
  }
  /// The frames a line's game module sent in a tick (and its refusals of client messages), after
  /// that tick's line_events; asked only of hosts that hear line events.
  virtual void module_frames(line_handle /*line*/, std::span<const module_frame> /*frames*/) {}
};

/// A piece of scene behaviour (e.g. a town's phases). Hooks run on the scene's thread, in the
/// scene's own lifecycle order; modules are added before the scene's first activation.
class scene_module {
 public:
  virtual ~scene_module() = default;
  /// Once per line object, after the scene's own on_init.
  virtual void on_init(scene&) {}
  /// Each time the line opens, after the scene spawned its content.
  virtual void on_active(scene&) {}
  /// Each time the line closes, before the scene clears its content.
  virtual void on_inactive(scene&) {}
  /// Each tick, after the scene's own work.
  virtual void on_tick(scene&, const tick_context&) {}
  /// A player entered (its grid entity exists).
  virtual void on_player_enter(scene&, player_id) {}
  /// A player is leaving (its grid entity still exists).
  virtual void on_player_leave(scene&, player_id) {}
};

/// The treasure chest of seed 004: closed when placed, opened for good by a player.
struct treasure_chest {
  bool present = false;
  bool opened = false;
  grid::entity_id entity = 0;
  grid::cell_point at{};
};

/// One change to a scene's roster, as the world sends it. A town line routes the changes of a
/// player who stands in one of its phases to its phase host.
struct roster_change {
  enum class kind : std::uint8_t { enter, leave, leave_ack, move, enter_phase, leave_phase, message };
  kind what = kind::enter;
  player_id player = 0;
  grid::cell_point to{};  ///< move: the cell walked to
  scene_id space = 0;     ///< enter_phase: the space whose new phase the player goes into
  /// move: the phase (0: the line itself) the client walked in, when it said; a move that finds the
  /// player in another one (it entered or left a phase meanwhile) is dropped, not walked there.
  std::optional<phase_id> meant_for{};
  module_opcode opcode = 0;  ///< message: a client's message to the line's game module
  std::string bytes{};       ///< message: its payload, as the client sent it
  /// move, message: posted straight to the line (world::to_line) for this line as the front knew it
  /// (scene 0: sent by the world, which checked it). Lines are pooled: one meant for another opening
  /// of this object (another generation), or for a player it does not hold now, is dropped.
  line_handle meant_line{};
};

/// One line of a scene definition. Each tick runs, in this order: its service mailbox (closures),
/// its roster inbox (roster changes and phase requests, in the order the world sent them), the
/// NPC AI, then its modules (a town's phases tick here); then it reports the tick's line events.
/// Thread-safety: post_* from any thread; everything else from the thread that drives the scene
/// (its tick), or from the world's thread while the scene is not active (assign_line).
class scene : public service {
 public:
  /// `def` and `host` must outlive the scene; `map` is the map's shared static data and `nav` its
  /// shared passability for the monsters (built from `map` for this object when null).
  scene(const scene_def& def, std::shared_ptr<const grid::map_data> map, scene_host* host,
        std::shared_ptr<const nav::nav_map> nav = nullptr);
  ~scene() override;

  [[nodiscard]] const scene_def& def() const noexcept { return def_; }  ///< the definition
  [[nodiscard]] line_handle line() const noexcept { return line_; }     ///< the line it runs as
  [[nodiscard]] scene_host* host() const noexcept { return host_; }     ///< whom it tells
  /// Gives the object the line it opens as next; only while it is not active.
  void assign_line(line_handle line);
  /// Adds a module; only before the first activation.
  void add_module(std::unique_ptr<scene_module> module);
  /// The modules, in the order they were added.
  [[nodiscard]] const std::vector<std::unique_ptr<scene_module>>& modules() const noexcept {
    return modules_;
  }
  /// Gives the line its game module, its random source seeded from `seed` (the table's
  /// runtime.seed) and the player store its grants go through (null: none); only before the first
  /// activation. The store must outlive the scene.
  void set_game_module(std::unique_ptr<game_module> module, std::uint32_t seed,
                       player_store* store = nullptr);
  /// The line's game module, or null.
  [[nodiscard]] game_module* game() const noexcept;
  /// The module hosting this line's phases, or null; fixed once the line was first activated.
  [[nodiscard]] phase_host* phases() const noexcept { return phases_; }

  // ---- roster, from the world: applied at the start of the scene's next tick ----------
  /// A player arrives (it appears at the map's entry point).
  void post_enter(player_id player);
  /// A player goes; with `ack`, the host hears player_left once its state is gone.
  void post_leave(player_id player, bool ack);
  /// A player walks to a cell (ignored when the player or the cell is not valid).
  void post_move(player_id player, grid::cell_point to);
  /// Any roster change, phase requests included (answered through scene_host::phase_answered).
  void post_roster(const roster_change& change);
  /// Several roster changes at once, applied in order like the single posts.
  void post_roster(std::span<const roster_change> changes);

  // ---- on the scene's thread: its modules move players between the line and its phases ----
  /// Puts a player on the grid now, walked to `at` when given (the entry point otherwise).
  void place_player(player_id player, std::optional<grid::cell_point> at = std::nullopt);
  /// Takes a player off the grid now; where it goes is the caller's business. The line's events so
  /// far are reported first, so its `left` comes before any event of where it goes.
  void take_player(player_id player);

  // ---- state, on the scene's thread ------------------------------------------------------
  [[nodiscard]] std::size_t player_count() const noexcept { return players_.size(); }
  [[nodiscard]] bool has_player(player_id player) const { return players_.count(player) != 0; }
  /// The grid entity of a player in the scene.
  [[nodiscard]] std::optional<grid::entity_id> entity_of(player_id player) const;
  [[nodiscard]] grid::grid& grid() noexcept { return *grid_; }
  [[nodiscard]] const grid::grid& grid() const noexcept { return *grid_; }
  [[nodiscard]] const std::shared_ptr<const grid::map_data>& map() const noexcept { return map_; }
  /// The map's passability as the monsters search and steer on it.
  [[nodiscard]] const std::shared_ptr<const nav::nav_map>& nav_map() const noexcept { return nav_; }
  /// The living monsters, in spawn order.
  [[nodiscard]] const std::vector<grid::entity_id>& monsters() const noexcept { return monsters_; }
  /// Puts a monster of one of the scene's groups (0: the first) on a cell (its home); none when the
  /// cell is blocked or full, or the scene has no such group.
  std::optional<grid::entity_id> place_monster(grid::cell_point at, entity_look look = {},
                                               std::uint32_t group = 0);
  /// Kills a monster: off the grid, its search cancelled; false when it is no living monster.
  bool kill_monster(grid::entity_id monster);
  /// A monster's brain, living or dead, until the line closes.
  [[nodiscard]] std::optional<monster_view> monster(grid::entity_id monster) const;
  [[nodiscard]] const treasure_chest& chest() const noexcept { return chest_; }
  // ---- a game module's entities and frames, on the scene's thread (module_context uses these) ----
  /// Puts an entity on the grid (with a brain: a monster of the scene's kind); none when it cannot stand
  /// there.
  std::optional<grid::entity_id> place_entity(const entity_spec& spec);
  /// Takes an entity (or monster) off the grid; false when it is not there.
  bool remove_entity(grid::entity_id entity);
  /// Changes an entity's look; false when it is not there.
  bool set_entity_look(grid::entity_id entity, entity_look look);
  /// Moves an entity without a brain; false when it is not there or the cell is off the map or blocked.
  bool move_entity(grid::entity_id entity, grid::cell_point to);
  /// An entity's (or monster's) look and cell, when it is there.
  [[nodiscard]] std::optional<entity_look> look_of(grid::entity_id entity) const;
  [[nodiscard]] std::optional<grid::cell_point> entity_at(grid::entity_id entity) const;
  /// Queues a frame to clients, reported after this tick's line events.
  void send_frame(module_frame frame);
  /// The start of the tick being run (of the last one between ticks).
  [[nodiscard]] time_point now() const noexcept { return now_; }
  /// The players on the line.
  [[nodiscard]] std::vector<player_id> player_list() const;
  /// A module failed on the line's thread: the line takes no more ticks and its host hears it as
  /// quarantined (its players move out, it closes).
  void fail_module();

  /// A player opens the chest: true the first time, false when it is absent or open already.
  bool open_chest();
  /// Ticks whose AI ran at least one NPC, and NPC AI steps run (for tests and load figures).
  [[nodiscard]] std::uint64_t ai_steps() const noexcept { return ai_steps_; }
  /// What the monsters' AI cost the line so far (for load figures); the line's thread only. The
  /// times stay 0 unless time_ai(true) was called.
  [[nodiscard]] const ai_costs& ai_cost() const noexcept { return ai_cost_; }
  /// Whether the line times its AI (two CPU clock reads a part, each a system call): for benches.
  void time_ai(bool on) noexcept { time_ai_ = on; }
  /// Times the line opened (on_active runs).
  [[nodiscard]] std::uint64_t activations() const noexcept { return activations_; }
  /// Times the line closed (on_inactive runs).
  [[nodiscard]] std::uint64_t deactivations() const noexcept { return deactivations_; }
  /// Client moves and messages posted straight to the line and dropped as stale (see dropped_stale).
  [[nodiscard]] std::uint64_t dropped_stale() const noexcept {
    return dropped_stale_.load(std::memory_order_relaxed);
  }
  /// Times on_init ran (1 once the object was activated).
  [[nodiscard]] std::uint64_t inits() const noexcept { return inits_; }
  /// Member ticks that ran over their budget in a scene group (counted by the group).
  [[nodiscard]] std::uint64_t overruns() const noexcept { return overruns_.load(std::memory_order_relaxed); }
  /// The line failed: a module threw while it opened, or its ticks were quarantined.
  [[nodiscard]] bool broken() const noexcept { return broken_ || quarantined(); }
  /// Starts loading what the line's next AI pass reads first (its grid's and brains' fields, its
  /// first player's entry): a scene group calls it for the member after the one it ticks, so that
  /// those loads overlap with that tick. A hint, no effect.
  void prefetch_ai() const noexcept;
  /// Counts an overrun (the scene group calls this).
  void count_overrun() noexcept { overruns_.fetch_add(1, std::memory_order_relaxed); }

 protected:
  void on_init() override;
  void on_active() override;
  void on_inactive() override;
  void on_tick(const tick_context& ctx) override;
  void on_quarantine() override;

 private:
  template <class F>
  void guarded(F&& hooks);
  void apply_roster();
  void apply(const roster_change& change);
  bool meant_here(const roster_change& change, bool phased);
  void count_stale(player_id player);
  void answer_phase(const roster_change& change);
  void add_player(player_id player, std::optional<grid::cell_point> cell = std::nullopt);
  void remove_player(player_id player, bool ack);
  void move_player(player_id player, grid::cell_point to);
  void publish_events();
  void run_ai(std::uint32_t batch, std::uint64_t tick);
  void deliver(const roster_change& change);
  void clear_entities();
  void step_npc(grid::entity_id npc, std::uint64_t tick);
  void show_state(grid::entity_id npc, brain_state state);
  detail::monster_brains& brains();
  grid::entity_id new_entity();
  std::optional<grid::cell_point> free_cell_near(grid::cell_point at, bool for_monster = false,
                                                 std::uint32_t group = 0) const;
  grid::cell_point random_cell();

  // What every tick reads, idle or not, comes first: with the service's own fields that is two
  // cache lines per line per tick (100,000 idle lines tick a million times a second).
  std::atomic<bool> roster_pending_{false};  // set after a post: a quiet tick reads no inbox
  bool broken_ = false;
  bool reports_ = false;              // the host hears line events
  std::vector<line_event> events_;    // this tick's, reported at its end (or when a player goes elsewhere)
  std::vector<module_frame> frames_;  // this tick's module frames, reported after its events
  bool emptied_ = false;              // a player left during this roster batch: tell the host if none is left
  std::vector<std::unique_ptr<scene_module>> modules_;
  phase_host* phases_ = nullptr;
  std::vector<grid::entity_id> monsters_;
  std::unique_ptr<detail::monster_brains> brains_;          // made by the first monster
  std::vector<grid::cell_point> player_cells_;              // the players' cells, for the brains' occupancy
  std::unique_ptr<detail::module_runner> game_;             // the line's game module and its context
  std::unordered_map<grid::entity_id, entity_look> looks_;  // entities' (and looked-at monsters') looks
  std::vector<grid::entity_id> entities_;                   // a module's entities without a brain
  time_point now_{};
  using player_map = std::unordered_map<player_id, grid::entity_id>;
  player_map players_;

  const scene_def& def_;
  std::shared_ptr<const grid::map_data> map_;
  std::shared_ptr<const nav::nav_map> nav_;
  scene_host* host_;
  line_handle line_{};
  std::unique_ptr<grid::grid> grid_;

  inbox<roster_change> roster_{4};  // small ring: most lines see a change or two a tick

  std::vector<player_map::node_type> spare_players_;  // recycled map nodes, at most hard capacity
  std::vector<grid::entity_id> free_ids_;
  grid::entity_id next_id_ = 0;
  treasure_chest chest_;
  grid::cell_point entry_{};
  std::minstd_rand rng_;

  std::uint64_t ai_steps_ = 0, activations_ = 0, deactivations_ = 0, inits_ = 0;
  ai_costs ai_cost_;
  bool time_ai_ = false;
  std::atomic<std::uint64_t> overruns_{0};
  std::atomic<std::uint64_t> dropped_stale_{0};  // written by the line's thread, read by tests
};

/// Static map data for a map definition (blocks become block cells).
[[nodiscard]] std::shared_ptr<const grid::map_data> make_map_data(const map_def& map);

/// The monsters' passability for a map's static data (its block cells), built once per map and
/// shared by every line of it.
[[nodiscard]] std::shared_ptr<const nav::nav_map> make_nav_map(const grid::map_data& map);

}  // namespace scenert
