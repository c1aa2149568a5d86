#include "brains.hpp"

#include <algorithm>
#include <cmath>

#include <scenert/config/table_loader.hpp>

namespace scenert::detail {
namespace {

constexpr std::uint32_t cell_cap = 1;  // monsters per cell
static_assert(cell_cap == 1, "the per-cell counts are bits");
constexpr std::uint32_t max_fields = 4;  // players chased by flow field at once per line
constexpr double replan_distance = 3;    // a target this far from a path's goal asks for a new path
constexpr double field_slack = 2;        // a target this far from its field's cell rebuilds it
constexpr double field_restart = 8;      // ... or restarts its build before it completes
// A field reaches this far past its chasers (by path): the next build's target is up to
// field_slack + 1 off this one's, so a chaser inside this one is still inside the next.
constexpr double field_margin = field_slack + 1;
constexpr double min_field_reach = 8;
constexpr double field_shrink =
    0.75;  // a field's reach left unasked by its chasers shrinks this much a build
constexpr std::uint32_t max_steps = 16;     // per think: a long sleep earns no burst past this
constexpr std::uint32_t evade_after = 10;   // steps stuck on the way home before it is put home
constexpr std::uint32_t wander_radius = 4;  // cells from home an idle monster strays

nav::cell to_nav(grid::cell_point c) { return {c.x, c.y}; }
grid::cell_point to_grid(nav::cell c) { return {c.x, c.y}; }

std::uint32_t chebyshev(nav::cell a, nav::cell b) {
  return std::max(a.x > b.x ? a.x - b.x : b.x - a.x, a.y > b.y ? a.y - b.y : b.y - a.y);
}

}  // namespace

monster_brains::monster_brains(const scene_def& def, std::shared_ptr<const grid::map_data> cells,
                               std::shared_ptr<const nav::nav_map> map)
    : def_(def),
      map_(std::move(map)),
      budget_(def.path_budget != 0 ? def.path_budget : default_path_budget(def.kind)),
      counts_((map_->cell_count() + 63) / 64, 0) {
  bool barriers = false;
  for (std::size_t i = 0; i < def.monster_group_count(); ++i) {
    const grid::barrier_mask mask = grid::barrier_mask_of(def.monster_of(i).barrier);
    barriers = barriers || mask.marks || grid::tests_occupants(mask);
    tracks_players_ = tracks_players_ || mask.test_player;
  }
  if (barriers) occupancy_ = std::make_unique<grid::occupancy>(std::move(cells));
}

nav::steer_rules monster_brains::rules_of(const brain& b) const {
  return {static_cast<double>(monster_of(b).leash), cell_cap};
}

// The filter of a monster's next step: empty (the map alone) without a barrier. Unlike a search's,
// it lets no goal cell through: a step never enters a cell the mask blocks.
nav::cell_filter monster_brains::step_filter(brain& b) {
  if (!b.masked) return {};
  grid::occupancy_passability& steps = route(b).steps;
  steps.own = steps.goal = b.steer.position;
  return nav::cell_filter(steps);
}

// A monster whose mask marks occupies its cell in the occupancy (a barrier-free one does not).
void monster_brains::mark(nav::cell at, const brain& b, bool on) {
  if (!occupancy_ || !grid::barrier_mask_of(monster_of(b).barrier).marks) return;
  if (on)
    (void)occupancy_->occupy(to_grid(at), grid::occupant::monster, {true, false, false, false, false, false});
  else
    (void)occupancy_->release(to_grid(at), grid::occupant::monster);
}

void monster_brains::see_players(std::span<const grid::cell_point> cells) {
  players_ = cells;
  if (!occupancy_ || !tracks_players_) return;
  for (const auto c : player_cells_) (void)occupancy_->release(c, grid::occupant::player);
  player_cells_.assign(cells.begin(), cells.end());
  for (const auto c : player_cells_)
    (void)occupancy_->occupy(c, grid::occupant::player, {true, false, false, false, false, false});
}

std::uint32_t monster_brains::count(nav::cell at) const {
  if (!map_->contains(at.x, at.y)) return 0;
  const std::uint32_t i = map_->index(at);
  return static_cast<std::uint32_t>((counts_[i >> 6] >> (i & 63)) & 1);
}

bool monster_brains::free_for(nav::cell at) const { return count(at) < cell_cap; }

bool monster_brains::can_spawn(grid::cell_point at, std::uint32_t group) const {
  if (!map_->passable(at.x, at.y) || !free_for(to_nav(at))) return false;
  const grid::barrier_mask mask = grid::barrier_mask_of(def_.monster_of(group).barrier);
  return !occupancy_ || occupancy_->can_stand(at, mask);
}

monster_brains::brain* monster_brains::find(grid::entity_id id) {
  return id < brains_.size() && brains_[id].live ? &brains_[id] : nullptr;
}

void monster_brains::spawn(grid::entity_id id, grid::cell_point home, std::uint32_t group) {
  if (brains_.size() <= id) brains_.resize(id + 1), routes_.resize(id + 1);
  brain& b = brains_[id];
  b = brain{};
  routes_[id] = brain_route{};
  b.live = true;
  b.group = group < def_.monster_group_count() ? group : 0;
  b.steer = {to_nav(home), to_nav(home), false};
  const grid::barrier_mask mask = grid::barrier_mask_of(monster_of(b).barrier);
  if (occupancy_ && grid::tests_occupants(mask)) {
    b.masked = true;
    routes_[id].steps = routes_[id].search_pass = {occupancy_.get(), mask, {}, {}};
  }
  count_on(b.steer.position, true);
  mark(b.steer.position, b, true);
}

void monster_brains::kill(grid::entity_id id) {
  brain* b = find(id);
  if (b == nullptr || b->state == brain_state::dead) return;
  drop_search(*b);
  count_on(b->steer.position, false);
  mark(b->steer.position, *b, false);
  b->state = brain_state::dead;
  b->target.reset();
}

void monster_brains::clear() {
  for (auto& b : brains_) drop_search(b);
  brains_.clear();
  routes_.clear();
  std::fill(counts_.begin(), counts_.end(), std::uint64_t{0});
  if (occupancy_) occupancy_->clear();
  player_cells_.clear();
  players_ = {};
  for (auto& f : fields_) f.live = false;
}

std::optional<monster_view> monster_brains::view(grid::entity_id id) const {
  if (id >= brains_.size() || !brains_[id].live) return std::nullopt;
  const brain& b = brains_[id];
  std::optional<grid::cell_point> goal;
  if (b.searching || routes_[id].path_ready) goal = to_grid(routes_[id].path_goal);
  return monster_view{b.state, to_grid(b.steer.home), b.target, b.searching, goal};
}

brain_state monster_brains::state_of(grid::entity_id id) const {
  return id < brains_.size() && brains_[id].live ? brains_[id].state : brain_state::dead;
}

// ---- thinking ---------------------------------------------------------------------------

std::optional<grid::cell_point> monster_brains::think(grid::grid& g, grid::entity_id id, std::uint64_t tick,
                                                      std::minstd_rand& rng) {
  brain* b = find(id);
  if (b == nullptr || b->state == brain_state::dead) return std::nullopt;
  grid_ = &g, self_ = id, tick_ = tick;
  const nav::cell before = b->steer.position;
  const std::uint64_t steps_before = steps_taken_;
  prefetch_around(*b);
  perceive(*b, id);
  const std::uint32_t steps = due_steps(*b, tick);
  for (std::uint32_t i = 0; i < steps; ++i)
    if (!act(*b, rng, i == 0)) break;
  still_thinks_ += steps_taken_ == steps_before ? 1 : 0;
  if (b->steer.position == before) return std::nullopt;
  return to_grid(b->steer.position);
}

// Speed is in cells per second and a monster thinks about once per ten ticks: each think takes the
// steps earned since the last one, the fraction carried over.
std::uint32_t monster_brains::due_steps(brain& b, std::uint64_t tick) {
  const double rate = std::max<std::uint32_t>(def_.frame_rate, 1);
  const double period = grid::grid::ai_batch_count / rate;
  double dt = b.thought ? static_cast<double>(tick - b.last_think) / rate : period;
  if (dt > 2 * period) dt = period;  // it slept (no player near): it does not catch up
  b.thought = true, b.last_think = tick;
  b.carry += monster_of(b).speed * dt;
  const auto steps = static_cast<std::uint32_t>(std::floor(b.carry));
  b.carry -= steps;
  return std::min(steps, max_steps);
}

// A target is kept while it is a player on the grid (the leash ends a chase); a new one is the
// nearest player in view within the aggro radius.
void monster_brains::perceive(brain& b, grid::entity_id self) {
  if (b.state == brain_state::leash) return;
  if (b.target && grid_->contains(*b.target) && grid_->type_of(*b.target) == grid::entity_type::player)
    return;
  b.target.reset();
  b.state = brain_state::idle;
  double best = monster_of(b).aggro_radius + 0.5;
  const auto at = grid_->position_of(self);
  // No player near enough anywhere on the line: the view's areas need no scan.
  if (std::none_of(players_.begin(), players_.end(),
                   [&](grid::cell_point p) { return nav::octile_distance(to_nav(at), to_nav(p)) < best; }))
    return;
  (void)grid_->for_each_in_view(at, grid::type_mask::player, [&](grid::entity_id p) {
    const double d = nav::octile_distance(to_nav(at), to_nav(grid_->position_of(p)));
    if (d < best) best = d, b.target = p;
  });
  if (b.target) b.state = brain_state::chase;
}

bool monster_brains::act(brain& b, std::minstd_rand& rng, bool first) {
  if (b.state == brain_state::leash) return walk_home(b);
  if (nav::octile_distance(b.steer.position, b.steer.home) > rules_of(b).leash) {
    enter_leash(b);
    return walk_home(b);
  }
  if (!b.target) return first && wander(b, rng);
  const nav::cell target = to_nav(grid_->position_of(*b.target));
  if (in_reach(b, target)) {
    b.state = brain_state::attack;
    return false;
  }
  b.state = brain_state::chase;
  return chase(b, target);
}

// Next to the target, and a step there would be allowed: no attack across a wall's corner.
bool monster_brains::in_reach(const brain& b, nav::cell target) const {
  return b.steer.position == target ||
         (chebyshev(b.steer.position, target) <= 1 && nav::can_step(*map_, b.steer.position, target));
}

bool monster_brains::chase(brain& b, nav::cell target) {
  return monster_of(b).kind == monster_kind::boss ? boss_step(b, target) : mob_chase(b, target);
}

// A complete field of the target leads around walls; until then, and outside it, the mob steers.
// The field is the map's, shared by every chaser: a step it gives that the mob's own mask forbids
// is steered instead.
bool monster_brains::mob_chase(brain& b, nav::cell target) {
  const nav::cell_filter filter = step_filter(b);
  if (nav::flow_field* f = field_for(*b.target, target, b.steer.position))
    if (auto to = f->next_step(b.steer.position, counter_, cell_cap);
        to && (filter.empty() || nav::can_step(*map_, b.steer.position, *to, filter)))
      return move(b, *to);
  const nav::cell from = b.steer.position;
  (void)nav::steer(*map_, b.steer, target, rules_of(b), counter_, filter);
  const nav::cell to = b.steer.position;
  b.steer.position = from;  // move() books the step
  if (to == from) widen_field(*b.target, from);
  return !(to == from) && move(b, to);
}

bool monster_brains::wander(brain& b, std::minstd_rand& rng) {
  if (rng() % 4 != 0) return false;
  const auto r = static_cast<std::uint32_t>(rng());
  const nav::cell to{b.steer.position.x + (r % 3) - 1, b.steer.position.y + ((r / 3) % 3) - 1};
  const bool near_home = chebyshev(to, b.steer.home) <= std::min(wander_radius, monster_of(b).leash);
  return near_home && nav::can_step(*map_, b.steer.position, to, step_filter(b)) && free_for(to) &&
         move(b, to);
}

void monster_brains::enter_leash(brain& b) {
  b.state = brain_state::leash;
  b.target.reset();
  b.steer.returning = true;
  b.stuck = 0;
  drop_search(b);
}

// Home by steering (a mob) or by a searched path (a boss); a monster stuck on the way is put home,
// as MMO mobs evade, so that no leashed monster stays stranded.
bool monster_brains::walk_home(brain& b) {
  bool moved = false;
  if (!(b.steer.position == b.steer.home)) {
    moved = monster_of(b).kind == monster_kind::boss ? boss_step(b, b.steer.home) : steer_home(b);
    if (!moved && ++b.stuck >= evade_after) moved = evade_home(b);
  }
  if (b.steer.position == b.steer.home) {
    b.state = brain_state::idle;
    b.steer.returning = false;
    drop_search(b);
  }
  return moved;
}

bool monster_brains::steer_home(brain& b) {
  const nav::cell from = b.steer.position;
  (void)nav::steer(*map_, b.steer, std::nullopt, rules_of(b), counter_, step_filter(b));
  const nav::cell to = b.steer.position;
  b.steer.position = from;  // move() books the step
  return !(to == from) && move(b, to);
}

bool monster_brains::evade_home(brain& b) {
  const nav::cell_filter filter = step_filter(b);
  return free_for(b.steer.home) && !filter.blocks(b.steer.home) && move(b, b.steer.home);
}

// ---- bosses: searched paths, followed cell by cell ---------------------------------------

bool monster_brains::boss_step(brain& b, nav::cell goal) {
  brain_route& r = route(b);
  const bool stale =
      !r.path_ready || r.next >= r.path.size() || nav::octile_distance(r.path_goal, goal) > replan_distance;
  if (b.searching && nav::octile_distance(r.path_goal, goal) > replan_distance) drop_search(b);
  if (!b.searching && stale) request(b, goal);
  poll(b);
  if (!r.path_ready || r.next >= r.path.size()) return false;
  const nav::cell to = r.path[r.next];
  if (!free_for(to)) return false;  // another monster stands there: wait for it
  // The occupancy moved since the search: a cell the mask blocks now asks for a new path.
  if (const nav::cell_filter filter = step_filter(b);
      !filter.empty() && !nav::can_step(*map_, b.steer.position, to, filter))
    return r.path_ready = false, false;
  ++r.next;
  return move(b, to);
}

void monster_brains::request(brain& b, nav::cell goal) {
  if (!queue_) queue_ = std::make_unique<nav::path_queue>(map_);
  brain_route& r = route(b);
  nav::cell_filter filter;
  if (r.search_pass.layer != nullptr) {
    r.search_pass.own = b.steer.position, r.search_pass.goal = goal;
    filter = nav::cell_filter(r.search_pass);
  }
  auto handle = queue_->submit(b.steer.position, goal, filter);
  r.path_ready = false;
  if (!handle) return;  // the queue is full: asked again at the next think
  r.search = *handle;
  b.searching = true;
  r.path_goal = goal;
}

// A found path is read and its request freed; an unreachable goal drops the target.
void monster_brains::poll(brain& b) {
  if (!b.searching) return;
  brain_route& r = route(b);
  auto state = queue_->state(r.search);
  if (!state) return void(b.searching = false);
  if (*state == nav::request_state::found) {
    (void)queue_->path(r.search, r.path);
    r.path_ready = true;
    r.next = 1;  // path[0] is where the boss stood, and still stands: it waits while searching
  }
  if (*state == nav::request_state::found || *state == nav::request_state::unreachable ||
      *state == nav::request_state::out_of_map) {
    drop_search(b);
    if (!r.path_ready && b.state != brain_state::leash) b.target.reset();
  }
}

void monster_brains::drop_search(brain& b) {
  if (b.searching && queue_) (void)queue_->cancel(route(b).search);
  b.searching = false;
}

monster_brains::search_work monster_brains::step_searches() {
  search_work work;
  if (queue_ && queue_->size() != 0) work.expansions = queue_->step(budget_);
  for (auto& f : fields_) {
    if (!f.live || f.complete) continue;
    const std::uint32_t before = f.field->settled();
    f.complete = f.field->build(budget_);
    work.field_cells += f.field->settled() - before;
  }
  return work;
}

// ---- shared pieces ----------------------------------------------------------------------

// Books a step in the counts and on the grid; callers only ask for allowed steps.
bool monster_brains::move(brain& b, nav::cell to) {
  if (!grid_->move(self_, to_grid(to), grid::ignore_view{}).has_value()) return false;
  count_on(b.steer.position, false);
  count_on(to, true);
  mark(b.steer.position, b, false);
  mark(to, b, true);
  b.steer.position = to;
  b.stuck = 0;
  ++steps_taken_;
  return true;
}

// The rows around a monster in the cell counts and in its target's field, the step's reads: their
// loads start before perceive() and overlap with it.
void monster_brains::prefetch_around(const brain& b) const noexcept {
  const std::uint32_t width = map_->width(), at = map_->index(b.steer.position);
  const std::uint32_t above = at >= width ? at - width : at,
                      below = at + width < map_->cell_count() ? at + width : at;
  for (const std::uint32_t row : {above, at, below}) __builtin_prefetch(&counts_[row >> 6]);
  if (!b.target) return;
  for (const auto& f : fields_)
    if (f.live && f.complete && f.player == *b.target) f.field->prefetch(b.steer.position);
}

// One field per chased player, rebuilt when the player walked off its cell by more than a little
// (a build under way goes on unless it walked far: the field completes, and its chasers use it);
// the least recently used slot goes to a new player. A field reaches as far as its chasers inside
// it need (their distance in it, plus a margin); one outside it steers, and widens it only when
// steering leaves it stuck (see widen_field). Null while the field is being built.
nav::flow_field* monster_brains::field_for(grid::entity_id player, nav::cell at, nav::cell from) {
  chase_field* slot = nullptr;
  for (auto& f : fields_)
    if (f.live && f.player == player) slot = &f;
  if (slot == nullptr) {
    if (fields_.size() < max_fields)
      fields_.push_back({false, false, 0, {}, 0, 0, std::make_unique<nav::flow_field>()});
    slot = &*std::min_element(fields_.begin(), fields_.end(), [](const chase_field& a, const chase_field& b) {
      return (a.live ? a.used_at + 1 : 0) < (b.live ? b.used_at + 1 : 0);
    });
    slot->live = false;
  }
  slot->used_at = tick_;
  if (!slot->live) {
    slot->player = player;
    start_field(*slot, at, nav::octile_distance(from, at) + field_margin);
    return slot->complete ? slot->field.get() : nullptr;
  }
  const double moved = nav::octile_distance(slot->target, at);
  if (!slot->complete) {
    if (moved > field_restart) start_field(*slot, at, slot->need);
    return nullptr;
  }
  if (const double d = slot->field->distance(from); !std::isinf(d))
    slot->need = std::max(slot->need, d + field_margin);
  if (moved > field_slack || slot->need > slot->field->reach()) start_field(*slot, at, slot->need);
  return slot->complete ? slot->field.get() : nullptr;
}

// A chaser outside its target's complete field that steering leaves stuck (a wall across its way)
// asks for a field twice as far, up to a reach that holds every path of the map (no path is longer
// than one diagonal step a cell): built at the next think of a chaser, it leads around the wall.
void monster_brains::widen_field(grid::entity_id player, nav::cell from) {
  for (auto& f : fields_)
    if (f.live && f.player == player && f.complete && std::isinf(f.field->distance(from))) {
      const double whole_map = nav::diagonal_cost * static_cast<double>(map_->cell_count());
      f.need = std::max(f.need, std::min(2 * f.field->reach(), whole_map));
    }
}

void monster_brains::start_field(chase_field& slot, nav::cell at, double reach) {
  reach = std::max(reach, min_field_reach);
  slot.field->begin(*map_, at, {}, reach);
  slot.live = true;
  slot.complete = slot.field->complete();
  slot.target = at;
  slot.need = field_shrink * reach;
}

}  // namespace scenert::detail
