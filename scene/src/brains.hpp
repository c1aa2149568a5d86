#pragma once
// A line's monster brains: one small state machine per monster (idle/wander, chase, attack,
// leash, dead) over nav/. Mobs steer (seek with wall sliding, a flow field shared per chased player,
// a cap of one monster per cell, a leash home); bosses search through the line's path queue.
// A monster whose group names a barrier also keeps off the cells its mask blocks in the line's
// occupancy (players, monsters), in its searches and its steps.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include <scenert/config/scene_table.hpp>
#include <scenert/nav/flow_field.hpp>
#include <scenert/nav/nav_map.hpp>
#include <scenert/nav/path_queue.hpp>
#include <scenert/nav/steering.hpp>
#include <scenert/scene/grid/grid.hpp>
#include <scenert/scene/grid/occupancy.hpp>
#include <scenert/scene/grid/passability.hpp>
#include <scenert/scene/scene.hpp>

namespace scenert::detail {

/// The brains of one line's monsters; owned and driven by the line's tick.
/// Thread-safety: none; the line's thread only.
class monster_brains {
 public:
  /// Brains over the map's passability; `cells` is the map's data, for the occupancy layer that a
  /// group with a barrier needs.
  monster_brains(const scene_def& def, std::shared_ptr<const grid::map_data> cells,
                 std::shared_ptr<const nav::nav_map> map);
  monster_brains(const monster_brains&) = delete;
  monster_brains& operator=(const monster_brains&) = delete;

  /// Whether a monster of a group may stand on the cell: passable, under the cell cap, and free
  /// of what its barrier mask tests.
  [[nodiscard]] bool can_spawn(grid::cell_point at, std::uint32_t group = 0) const;
  /// A monster of a group appears on its home cell (the grid holds it already).
  void spawn(grid::entity_id id, grid::cell_point home, std::uint32_t group = 0);
  /// Where every player of the line stands this tick (read by the thinks until the next call, the
  /// span kept), marked in the occupancy when it tracks players.
  void see_players(std::span<const grid::cell_point> cells);
  /// A monster dies: its search is cancelled, its cell freed; the caller takes it off the grid.
  void kill(grid::entity_id id);
  /// Forgets every monster, search and field (the line closes).
  void clear();
  /// Starts loading a monster's brain: called for each monster of a batch before the first think.
  void prefetch(grid::entity_id id) const noexcept {
    if (id < brains_.size()) __builtin_prefetch(&brains_[id]);
  }
  /// One think of a monster on its AI batch, moving it on `g`; gives its new cell when it moved.
  std::optional<grid::cell_point> think(grid::grid& g, grid::entity_id id, std::uint64_t tick,
                                        std::minstd_rand& rng);
  /// What one step_searches did.
  struct search_work {
    std::uint32_t expansions = 0;   ///< by the path queue
    std::uint32_t field_cells = 0;  ///< settled by the flow fields
  };
  /// Spends the tick's budget on the bosses' searches and the mobs' flow fields.
  search_work step_searches();
  /// Steps taken by every think so far (cells moved), and thinks that took none: never reset.
  [[nodiscard]] std::uint64_t steps_taken() const noexcept { return steps_taken_; }
  /// Thinks that took no step so far.
  [[nodiscard]] std::uint64_t still_thinks() const noexcept { return still_thinks_; }
  /// A monster as its brain sees it.
  [[nodiscard]] std::optional<monster_view> view(grid::entity_id id) const;
  /// What a monster's brain is doing (dead for one it does not know).
  [[nodiscard]] brain_state state_of(grid::entity_id id) const;

 private:
  // What every think reads, one cache line a monster in a flat array; a boss's route and a masked
  // monster's passability live apart (brain_route), touched only by those that have them.
  struct alignas(64) brain {
    bool live = false;
    bool masked = false;  // its steps test a barrier mask: its route's `steps` is set
    bool thought = false;
    bool searching = false;  // its route's search is in the path queue
    brain_state state = brain_state::idle;
    std::uint32_t group = 0;
    std::uint32_t stuck = 0;
    nav::mob_steer steer;  // position, home, returning
    std::optional<grid::entity_id> target;
    std::uint64_t last_think = 0;
    double carry = 0;  // a fraction of a step earned and not taken yet
  };
  struct brain_route {
    nav::path_handle search{};
    bool path_ready = false;
    nav::cell path_goal;
    std::vector<nav::cell> path;
    std::size_t next = 0;
    // The monster's passability (its barrier mask against the occupancy) for its steps, and a copy
    // for its running search, which holds a pointer to it: routes_ is a deque, so it stays put.
    grid::occupancy_passability steps, search_pass;
  };
  // A field's slot: what a think looks up kept apart from the field's 1.5 KB of build state, so
  // that finding a chased player's field reads one cache line for all the slots.
  struct chase_field {
    bool live = false;
    bool complete = false;  // the field's, mirrored after each build
    grid::entity_id player = 0;
    nav::cell target;
    std::uint64_t used_at = 0;
    double need = 0;  // the reach the next build takes: what its chasers asked of this one

    std::unique_ptr<nav::flow_field> field;
  };
  struct count_fn {
    const monster_brains* self;
    std::uint32_t operator()(nav::cell at) const { return self->count(at); }
  };

  [[nodiscard]] std::uint32_t count(nav::cell at) const;
  [[nodiscard]] bool free_for(nav::cell at) const;
  [[nodiscard]] const monster_def& monster_of(const brain& b) const { return def_.monster_of(b.group); }
  [[nodiscard]] nav::steer_rules rules_of(const brain& b) const;
  nav::cell_filter step_filter(brain& b);
  void mark(nav::cell at, const brain& b, bool on);
  std::uint32_t due_steps(brain& b, std::uint64_t tick);
  void perceive(brain& b, grid::entity_id self);
  bool act(brain& b, std::minstd_rand& rng, bool first);
  [[nodiscard]] bool in_reach(const brain& b, nav::cell target) const;
  bool chase(brain& b, nav::cell target);
  bool mob_chase(brain& b, nav::cell target);
  bool wander(brain& b, std::minstd_rand& rng);
  void enter_leash(brain& b);
  bool walk_home(brain& b);
  bool steer_home(brain& b);
  bool evade_home(brain& b);
  bool boss_step(brain& b, nav::cell goal);
  void request(brain& b, nav::cell goal);
  void poll(brain& b);
  void drop_search(brain& b);
  bool move(brain& b, nav::cell to);
  nav::flow_field* field_for(grid::entity_id player, nav::cell at, nav::cell from);
  void start_field(chase_field& slot, nav::cell at, double reach);
  void widen_field(grid::entity_id player, nav::cell from);
  void prefetch_around(const brain& b) const noexcept;
  brain* find(grid::entity_id id);
  brain_route& route(const brain& b) { return routes_[static_cast<std::size_t>(&b - brains_.data())]; }

  const scene_def& def_;
  std::shared_ptr<const nav::nav_map> map_;
  count_fn count_fn_{this};
  nav::cell_counter counter_{count_fn_};
  std::uint32_t budget_;
  std::vector<brain> brains_;       // by entity id
  std::deque<brain_route> routes_;  // by entity id, beside brains_; a deque: see brain_route
  // Monsters per cell, one bit a cell (the cap is one: every step checks): a map's cells / 8 bytes a
  // line, no allocation per step.
  std::vector<std::uint64_t> counts_;
  void count_on(nav::cell at, bool on) noexcept {
    const std::uint32_t i = map_->index(at);
    if (on)
      counts_[i >> 6] |= std::uint64_t{1} << (i & 63);
    else
      counts_[i >> 6] &= ~(std::uint64_t{1} << (i & 63));
  }
  std::vector<chase_field> fields_;
  std::unique_ptr<nav::path_queue> queue_;      // made by the first boss, kept across openings
  std::unique_ptr<grid::occupancy> occupancy_;  // when a group names a barrier
  bool tracks_players_ = false;
  std::vector<grid::cell_point> player_cells_;  // marked in the occupancy
  std::span<const grid::cell_point> players_;   // this tick's, from see_players
  grid::grid* grid_ = nullptr;                  // the grid of the think in progress
  grid::entity_id self_ = 0;
  std::uint64_t tick_ = 0;
  std::uint64_t steps_taken_ = 0, still_thinks_ = 0;
};

}  // namespace scenert::detail
