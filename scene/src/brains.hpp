#pragma once
// A line's monster brains: one small state machine per monster (idle/wander, chase, attack,
// leash, dead) over nav/. Mobs steer (seek with wall sliding, a flow field shared per chased player,
// a cap of one monster per cell, a leash home); bosses search through the line's path queue.

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <unordered_map>
#include <vector>

#include <scenert/config/scene_table.hpp>
#include <scenert/nav/flow_field.hpp>
#include <scenert/nav/nav_map.hpp>
#include <scenert/nav/path_queue.hpp>
#include <scenert/nav/steering.hpp>
#include <scenert/scene/grid/grid.hpp>
#include <scenert/scene/scene.hpp>

namespace scenert::detail {

/// The brains of one line's monsters; owned and driven by the line's tick.
/// Thread-safety: none; the line's thread only.
class monster_brains {
 public:
  monster_brains(const scene_def& def, std::shared_ptr<const nav::nav_map> map);
  monster_brains(const monster_brains&) = delete;
  monster_brains& operator=(const monster_brains&) = delete;

  /// Whether a monster may stand on the cell: passable and under the cell cap.
  [[nodiscard]] bool can_spawn(grid::cell_point at) const;
  /// A monster appears on its home cell (the grid holds it already).
  void spawn(grid::entity_id id, grid::cell_point home);
  /// A monster dies: its search is cancelled, its cell freed; the caller takes it off the grid.
  void kill(grid::entity_id id);
  /// Forgets every monster, search and field (the line closes).
  void clear();
  /// One think of a monster on its AI batch, moving it on `g`; gives its new cell when it moved.
  std::optional<grid::cell_point> think(grid::grid& g, grid::entity_id id, std::uint64_t tick,
                                        std::minstd_rand& rng);
  /// Spends the tick's budget on the bosses' searches and the mobs' flow fields.
  void step_searches();
  /// A monster as its brain sees it.
  [[nodiscard]] std::optional<monster_view> view(grid::entity_id id) const;
  /// What a monster's brain is doing (dead for one it does not know).
  [[nodiscard]] brain_state state_of(grid::entity_id id) const;

 private:
  struct brain {
    bool live = false;
    brain_state state = brain_state::idle;
    nav::mob_steer steer;  // position, home, returning
    std::optional<grid::entity_id> target;
    std::uint64_t last_think = 0;
    bool thought = false;
    double carry = 0;  // a fraction of a step earned and not taken yet
    std::uint32_t stuck = 0;
    nav::path_handle search{};
    bool searching = false, path_ready = false;
    nav::cell path_goal;
    std::vector<nav::cell> path;
    std::size_t next = 0;
  };
  struct chase_field {
    bool live = false;
    grid::entity_id player = 0;
    std::uint64_t used_at = 0;
    nav::flow_field field;
  };
  struct count_fn {
    const monster_brains* self;
    std::uint32_t operator()(nav::cell at) const { return self->count(at); }
  };

  [[nodiscard]] std::uint32_t count(nav::cell at) const;
  [[nodiscard]] bool free_for(nav::cell at) const;
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
  nav::flow_field* field_for(grid::entity_id player, nav::cell at);
  brain* find(grid::entity_id id);

  const scene_def& def_;
  std::shared_ptr<const nav::nav_map> map_;
  nav::steer_rules rules_;
  count_fn count_fn_{this};
  nav::cell_counter counter_{count_fn_};
  std::uint32_t budget_;
  std::vector<brain> brains_;                                // by entity id
  std::unordered_map<std::uint32_t, std::uint32_t> counts_;  // monsters per cell index, none kept at 0
  std::vector<chase_field> fields_;
  std::unique_ptr<nav::path_queue> queue_;  // made by the first boss, kept across openings
  grid::grid* grid_ = nullptr;              // the grid of the think in progress
  grid::entity_id self_ = 0;
  std::uint64_t tick_ = 0;
};

}  // namespace scenert::detail
