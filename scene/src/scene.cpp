#include <scenert/scene/scene.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>

#include <limits>
#include <scenert/scene/phase_host.hpp>
#include <utility>

#include <fmt/format.h>

#include "brains.hpp"
#include "module_runner.hpp"

namespace scenert {

scene::scene(const scene_def& def, std::shared_ptr<const grid::map_data> map, scene_host* host,
             std::shared_ptr<const nav::nav_map> nav)
    : service(fmt::format("{}#{}", def.name, def.id)),
      def_(def),
      map_(std::move(map)),
      nav_(std::move(nav)),
      host_(host) {
  SCENERT_ASSERT(map_ != nullptr, "scene: map data is null");
  if (!nav_) nav_ = make_nav_map(*map_);
}

scene::~scene() = default;

void scene::assign_line(line_handle line) {
  SCENERT_ASSERT(!active(), "assign_line: the scene is active");
  line_ = line;
}

void scene::add_module(std::unique_ptr<scene_module> module) {
  SCENERT_ASSERT(!initialized(), "add_module: the scene was activated already");
  if (auto* host = dynamic_cast<phase_host*>(module.get())) phases_ = host;  // looked up once, here
  modules_.push_back(std::move(module));
}

void scene::post_enter(player_id player) { post_roster({roster_change::kind::enter, player, {}}); }
void scene::post_leave(player_id player, bool ack) {
  post_roster({ack ? roster_change::kind::leave_ack : roster_change::kind::leave, player, {}});
}
void scene::post_move(player_id player, grid::cell_point to) {
  post_roster({roster_change::kind::move, player, to});
}

void scene::post_roster(const roster_change& change) { post_roster({&change, 1}); }

// The roster inbox stays open while the line is closed: what reaches a closed line is dropped at
// its on_inactive or applied by nobody, and the world sends nothing to a line it closed.
void scene::post_roster(std::span<const roster_change> changes) {
  if (changes.empty()) return;
  (void)roster_.post_all(changes);
  roster_pending_.store(true, std::memory_order_release);
}

std::optional<grid::entity_id> scene::entity_of(player_id player) const {
  auto it = players_.find(player);
  if (it == players_.end()) return std::nullopt;
  return it->second;
}

bool scene::open_chest() {
  if (!chest_.present || chest_.opened) return false;
  chest_.opened = true;
  return true;
}

// ---- lifecycle -------------------------------------------------------------------------

void scene::on_init() {
  ++inits_;
  reports_ = host_ != nullptr && host_->wants_line_events();
  grid_ = std::make_unique<grid::grid>(map_);
  auto centre = grid::cell_point{map_->width() / 2, map_->height() / 2};
  entry_ = free_cell_near(centre).value_or(centre);
  guarded([&] {
    for (auto& m : modules_) m->on_init(*this);
  });
  if (game_) game_->init();
}

void scene::on_active() {
  ++activations_;
  // Seeded by the line, not by history: a reopened line spawns exactly what a fresh one would.
  rng_.seed(static_cast<std::uint_fast32_t>(def_.id * 7919u + line_.line * 104729u + 1u));
  if (def_.monster_total() != 0) (void)brains();
  for (std::uint32_t group = 0; group < def_.monster_group_count(); ++group) {
    for (std::uint32_t i = 0; i < def_.monster_group_at(group).count; ++i) {
      auto at = free_cell_near(random_cell(), true, group);
      if (!at || !place_monster(*at, {}, group)) break;
    }
  }
  chest_ = {};
  if (auto at = free_cell_near(grid::cell_point{map_->width() / 4, map_->height() / 4})) {
    auto id = new_entity();
    if (grid_->add(id, grid::entity_type::item, *at, grid::ignore_view{})) chest_ = {true, false, id, *at};
  }
  guarded([&] {
    for (auto& m : modules_) m->on_active(*this);
  });
  if (game_) game_->activate();
}

void scene::on_inactive() {
  ++deactivations_;
  for (auto& m : modules_) m->on_inactive(*this);
  if (game_) game_->deactivate();
  // The line is closing: the world sends it nothing more, and what is left nets to nobody.
  roster_pending_.store(false, std::memory_order_relaxed);
  (void)roster_.drain([](roster_change&) {});
  if (reports_) {  // whoever still stands here is gone for the viewers too
    for (const auto& [player, entity] : players_) events_.push_back({line_event::kind::left, player, {}});
    for (grid::entity_id m : monsters_) events_.push_back({line_event::kind::left, m, {}, true});
    for (grid::entity_id m : entities_) events_.push_back({line_event::kind::left, m, {}, true});
    publish_events();
  }
  frames_.clear();
  clear_entities();
  players_.clear();
  monsters_.clear();
  if (brains_) brains_->clear();
  free_ids_.clear();
  next_id_ = 0;
  chest_ = {};
  grid_->clear();
  broken_ = false;
  emptied_ = false;
}

// A module that throws while the line opens leaves it unusable: it is reported like a quarantine
// (the world moves nobody in and closes it) instead of letting the exception leave the library.
template <class F>
void scene::guarded(F&& hooks) {
  try {
    hooks();
  } catch (...) {
    broken_ = true;
    if (host_) host_->scene_quarantined(line_);
  }
}

void scene::on_quarantine() {
  if (host_) host_->scene_quarantined(line_);
}

void scene::on_tick(const tick_context& ctx) {
  if (broken_) return;
  now_ = ctx.now;
  if (game_) game_->start_tick();
  const auto batch = static_cast<std::uint32_t>(ctx.index % grid::grid::ai_batch_count);
  // The AI's first reads load while the roster is applied (the group fetched the grid's fields).
  if (!players_.empty() && !monsters_.empty()) grid_->prefetch_batch(batch);
  apply_roster();
  run_ai(batch, ctx.index);
  for (auto& m : modules_) m->on_tick(*this, ctx);
  if (game_) game_->tick(ctx);
  if (reports_) publish_events();
}

// Listeners hear each player's events in the order it went: before a player goes elsewhere (another
// line, a phase), what this line has to say up to its `left` is reported, so that no event of its
// new place (reported by another thread, maybe first) can overtake it.
// A module's frames of the tick follow its events: an entity it spawned is seen before a frame about it.
void scene::publish_events() {
  if (!events_.empty()) {
    host_->line_events(line_, 0, events_);
    events_.clear();
  }
  if (!frames_.empty()) {
    host_->module_frames(line_, frames_);
    frames_.clear();
  }
}

// ---- roster ----------------------------------------------------------------------------

void scene::apply_roster() {
  // Most ticks of most lines have no roster change: the flag keeps them off the inbox. A post
  // racing with the exchange sets it again, and the next tick drains what it brought.
  if (!roster_pending_.load(std::memory_order_relaxed) ||
      !roster_pending_.exchange(false, std::memory_order_acquire))
    return;
  (void)roster_.drain([this](roster_change& c) { apply(c); });
  // One notice per batch, not per leave: a busy line emptied and refilled many times in one tick
  // tells the host once, and only when it ends the batch empty.
  bool closes_itself = def_.kind != scene_kind::guild && def_.kind != scene_kind::space;
  if (std::exchange(emptied_, false) && players_.empty() && closes_itself && host_) host_->scene_empty(line_);
}

void scene::apply(const roster_change& c) {
  const bool phased = phases_ != nullptr && phases_->in_phase(c.player);
  switch (c.what) {
    case roster_change::kind::enter:
      return add_player(c.player);
    case roster_change::kind::leave:
    case roster_change::kind::leave_ack:
      if (phased) phases_->drop_from_phase(c.player);
      return remove_player(c.player, c.what == roster_change::kind::leave_ack);
    case roster_change::kind::move:
      if (!meant_here(c, phased)) return;
      if (c.meant_for && *c.meant_for != (phased ? phases_->phase_of(c.player).value_or(0) : 0))
        return count_stale(c.player);
      if (phased) return phases_->move_in_phase(c.player, c.to);
      return move_player(c.player, c.to);
    case roster_change::kind::enter_phase:
    case roster_change::kind::leave_phase:
      return answer_phase(c);
    case roster_change::kind::message:
      if (!meant_here(c, phased))
        return send_frame({module_frame::audience::player, c.player, c.opcode,
                           fmt::format("player {}: the message was meant for {} line {} (generation {}), "
                                       "which it no longer stands on",
                                       c.player, name(), c.meant_line.line, c.meant_line.generation),
                           static_cast<std::uint8_t>(module_errc::not_in_scene)});
      return deliver(c);
  }
}

// A client's move or message that came straight from the front (world::to_line) is for this opening
// of the line and for a player it holds, on its grid or in one of its phases. Otherwise the player
// went elsewhere after its client sent it, or the object was closed and opened again as another
// line meanwhile: it is stale, dropped and counted, never applied where the client did not mean it.
bool scene::meant_here(const roster_change& c, bool phased) {
  if (c.meant_line.scene == 0) return true;  // the world's own: it checked where the player stands
  if (c.meant_line == line_ && (phased || players_.count(c.player) != 0)) return true;
  count_stale(c.player);
  return false;
}

void scene::count_stale(player_id player) {
  dropped_stale_.fetch_add(1, std::memory_order_relaxed);
  if (host_) host_->dropped_stale(player);
}

void scene::answer_phase(const roster_change& c) {
  const bool entering = c.what == roster_change::kind::enter_phase;
  result<phase_id, world_errc> answer = fail(entering ? world_errc::wrong_town : world_errc::not_in_space,
                                             fmt::format("{} hosts no phases", name()));
  if (phases_ != nullptr)
    answer =
        entering ? phases_->enter_phase(*this, c.player, c.space) : phases_->leave_phase(*this, c.player);
  if (host_) host_->phase_answered(line_, c.player, std::move(answer), entering);
}

void scene::place_player(player_id player, std::optional<grid::cell_point> at) { add_player(player, at); }

void scene::take_player(player_id player) {
  remove_player(player, false);
  if (reports_) publish_events();
}

// Straight onto its cell (one entered event there: its viewers and its own client see it where it
// stands), or the entry point when none is given or the cell is not walkable.
void scene::add_player(player_id player, std::optional<grid::cell_point> cell) {
  if (players_.count(player)) return;
  auto id = new_entity();
  const bool walkable = cell && map_->contains(*cell) && !map_->is_block(*cell);
  auto at = walkable ? *cell : free_cell_near(entry_).value_or(entry_);
  const bool added = grid_->add(id, grid::entity_type::player, at, grid::ignore_view{}).has_value();
  SCENERT_ASSERT(added, "scene: a player could not be put on the grid");
  if (reports_) events_.push_back({line_event::kind::entered, player, at});
  if (spare_players_.empty()) {
    players_.emplace(player, id);
  } else {
    auto node = std::move(spare_players_.back());
    spare_players_.pop_back();
    node.key() = player;
    node.mapped() = id;
    players_.insert(std::move(node));
  }
  for (auto& m : modules_) m->on_player_enter(*this, player);
  if (game_) game_->entered(player);
}

void scene::remove_player(player_id player, bool ack) {
  auto it = players_.find(player);
  if (it != players_.end()) {
    for (auto& m : modules_) m->on_player_leave(*this, player);
    if (game_) game_->leaving(player);
    (void)grid_->remove(it->second, grid::ignore_view{});
    if (reports_) events_.push_back({line_event::kind::left, player, {}});
    free_ids_.push_back(it->second);
    if (spare_players_.size() < def_.hard_capacity)
      spare_players_.push_back(players_.extract(it));
    else
      players_.erase(it);
  }
  if (ack && host_) {
    if (reports_) publish_events();  // the world places it elsewhere once told
    host_->player_left(line_, player);
  }
  emptied_ = emptied_ || players_.empty();
}

void scene::move_player(player_id player, grid::cell_point to) {
  auto it = players_.find(player);
  if (it == players_.end() || !map_->contains(to) || map_->is_block(to)) return;
  (void)grid_->move(it->second, to, grid::ignore_view{});
  if (reports_) events_.push_back({line_event::kind::moved, player, to});
}

namespace {

// CPU time of the calling thread: the AI's costs without the waits of a shared machine.
std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace

// ---- NPC AI: one of the ten batches of effective areas per tick (seed 000) -------------

void scene::run_ai(std::uint32_t batch, std::uint64_t tick) {
  if (players_.empty() || monsters_.empty()) return;  // no player: no area is covered
  // The thread's CPU clock is a system call: read only when a bench asked for the times.
  // Two reads back to back first: what one read adds to a part, measured where the parts are
  // (a tight loop of reads elsewhere finds the clock's code hot and gives less).
  const std::uint64_t c0 = time_ai_ ? thread_cpu_ns() : 0;
  const std::uint64_t t0 = time_ai_ ? thread_cpu_ns() : 0;
  // Where the players stand, for the brains' perception (and their occupancy, where a mask stops
  // at players): every player of the line is on its grid.
  player_cells_.clear();
  for (const auto& [player, entity] : players_) player_cells_.push_back(grid_->position_of(entity));
  brains_->see_players(player_cells_);
  (void)grid_->for_each_active_npc(
      batch, [&](grid::entity_id npc) { step_npc(npc, tick); },
      [&](grid::entity_id npc) { brains_->prefetch(npc); });
  const std::uint64_t t1 = time_ai_ ? thread_cpu_ns() : 0;
  ai_cost_.steps = brains_->steps_taken();
  ai_cost_.still_thinks = brains_->still_thinks();
  const auto work = brains_->step_searches();
  const std::uint64_t t2 = time_ai_ ? thread_cpu_ns() : 0;
  ai_cost_.timed_ticks += time_ai_ ? 1 : 0;
  ai_cost_.clock_ns += t0 - c0;
  ai_cost_.think_ns += t1 - t0;
  ai_cost_.search_ns += t2 - t1;
  ai_cost_.expansions += work.expansions;
  ai_cost_.field_cells += work.field_cells;
}

void scene::prefetch_ai() const noexcept {
  const auto lines = [](const void* object, std::size_t bytes) {
    const auto* p = static_cast<const char*>(object);
    for (std::size_t at = 0; p != nullptr && at < bytes; at += 64) __builtin_prefetch(p + at);
  };
  lines(grid_.get(), sizeof(grid::grid));
  lines(brains_.get(), std::min<std::size_t>(sizeof(detail::monster_brains), 256));
  if (!players_.empty()) __builtin_prefetch(&*players_.begin());
}

void scene::step_npc(grid::entity_id npc, std::uint64_t tick) {
  ++ai_steps_;
  const auto before = brains_->state_of(npc);
  auto to = brains_->think(*grid_, npc, tick, rng_);
  if (to && reports_) events_.push_back({line_event::kind::moved, npc, *to, true});
  if (const auto now = brains_->state_of(npc); now != before) show_state(npc, now);
}

// A table's monster (look kind 0) shows its brain's state to its viewers; a module's entity shows
// what its module sets.
void scene::show_state(grid::entity_id npc, brain_state state) {
  entity_look look = looks_.contains(npc) ? looks_[npc] : entity_look{};
  if (look.kind != 0) return;
  look.state = static_cast<std::uint16_t>(state);
  looks_[npc] = look;
  if (auto at = entity_at(npc); at && reports_)
    events_.push_back({line_event::kind::changed, npc, *at, true, look});
}

detail::monster_brains& scene::brains() {
  if (!brains_) brains_ = std::make_unique<detail::monster_brains>(def_, map_, nav_);
  return *brains_;
}

std::optional<grid::entity_id> scene::place_monster(grid::cell_point at, entity_look look,
                                                    std::uint32_t group) {
  if (group >= def_.monster_group_count() || !map_->contains(at) || !brains().can_spawn(at, group))
    return std::nullopt;
  auto id = new_entity();
  if (!grid_->add(id, grid::entity_type::npc, at, grid::ignore_view{}))
    return free_ids_.push_back(id), std::nullopt;
  brains_->spawn(id, at, group);
  monsters_.push_back(id);
  if (look != entity_look{}) looks_[id] = look;
  if (reports_) events_.push_back({line_event::kind::entered, id, at, true, look});
  return id;
}

// A dead monster's id is not reused until the line closes, so that its brain can still be read.
bool scene::kill_monster(grid::entity_id monster) {
  auto it = std::find(monsters_.begin(), monsters_.end(), monster);
  if (it == monsters_.end()) return false;
  monsters_.erase(it);
  looks_.erase(monster);
  brains_->kill(monster);
  (void)grid_->remove(monster, grid::ignore_view{});
  if (reports_) events_.push_back({line_event::kind::left, monster, {}, true});
  return true;
}

std::optional<monster_view> scene::monster(grid::entity_id monster) const {
  return brains_ ? brains_->view(monster) : std::nullopt;
}

const char* to_string(brain_state state) noexcept {
  switch (state) {
    case brain_state::idle:
      return "idle";
    case brain_state::chase:
      return "chase";
    case brain_state::attack:
      return "attack";
    case brain_state::leash:
      return "leash";
    case brain_state::dead:
      return "dead";
  }
  return "unknown";
}

// ---- helpers ---------------------------------------------------------------------------

grid::entity_id scene::new_entity() {
  if (!free_ids_.empty()) {
    auto id = free_ids_.back();
    free_ids_.pop_back();
    return id;
  }
  return next_id_++;
}

grid::cell_point scene::random_cell() {
  return {static_cast<std::uint32_t>(rng_() % map_->width()),
          static_cast<std::uint32_t>(rng_() % map_->height())};
}

// The first unblocked cell in growing squares around `at`.
std::optional<grid::cell_point> scene::free_cell_near(grid::cell_point at, bool for_monster,
                                                      std::uint32_t group) const {
  std::uint32_t limit = std::max(map_->width(), map_->height());
  for (std::uint32_t r = 0; r < limit; ++r) {
    for (std::uint32_t y = at.y >= r ? at.y - r : 0; y <= at.y + r; ++y) {
      for (std::uint32_t x = at.x >= r ? at.x - r : 0; x <= at.x + r; ++x) {
        grid::cell_point c{x, y};
        if (map_->contains(c) && !map_->is_block(c) && (!for_monster || brains_->can_spawn(c, group)))
          return c;
      }
    }
  }
  return std::nullopt;
}

std::shared_ptr<const grid::map_data> make_map_data(const map_def& map) {
  grid::map_spec spec;
  spec.width = map.width;
  spec.height = map.height;
  spec.area_width = map.area_width;
  spec.area_height = map.area_height;
  spec.eyesight_x = map.eyesight_x;
  spec.eyesight_y = map.eyesight_y;
  if (!map.blocks.empty()) {
    spec.cell_flags.assign(std::size_t{map.width} * map.height, 0);
    for (const auto& b : map.blocks)
      for (std::uint32_t y = b.y; y < std::min(b.y + b.height, map.height); ++y)
        for (std::uint32_t x = b.x; x < std::min(b.x + b.width, map.width); ++x)
          spec.cell_flags[std::size_t{y} * map.width + x] = grid::cell_block;
  }
  auto made = grid::map_data::create(std::move(spec));
  SCENERT_ASSERT(made.has_value(), "make_map_data: the map definition is invalid (validate the table first)");
  return std::move(made).value();
}

std::shared_ptr<const nav::nav_map> make_nav_map(const grid::map_data& map) {
  std::vector<std::uint8_t> blocked(map.cell_count(), 0);
  for (std::uint32_t y = 0; y < map.height(); ++y)
    for (std::uint32_t x = 0; x < map.width(); ++x)
      blocked[std::size_t{y} * map.width() + x] = map.is_block({x, y});
  auto made = nav::nav_map::create(map.width(), map.height(), blocked);
  SCENERT_ASSERT(made.has_value(), "make_nav_map: the map data is invalid");
  return std::move(made).value();
}

}  // namespace scenert
