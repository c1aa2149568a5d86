#include <scenert/space/space_module.hpp>

#include <algorithm>
#include <functional>
#include <vector>

#include <fmt/format.h>

namespace scenert {

/// One space definition bound to the town: its parked phases and how many run.
struct space_module::bound_space {
  const scene_def* def = nullptr;
  std::vector<std::unique_ptr<scene>> parked;
  std::uint32_t running = 0;
};

space_module::space_module(const scene_table& table, const scene_def& town, space_limits limits)
    : table_(table), town_def_(town), limits_(std::move(limits)) {
  for (const auto& s : table.scenes) {
    if (s.kind != scene_kind::space || !s.space || s.space->bind_town != town.id) continue;
    auto b = std::make_unique<bound_space>();
    b->def = &s;
    spaces_.push_back(std::move(b));
  }
}

space_module::~space_module() = default;

std::vector<scene_id> space_module::spaces() const {
  std::vector<scene_id> ids;
  for (const auto& b : spaces_) ids.push_back(b->def->id);
  return ids;
}

space_module::bound_space* space_module::find(scene_id space) {
  for (auto& b : spaces_)
    if (b->def->id == space) return b.get();
  return nullptr;
}

std::unique_ptr<scene> space_module::make_phase(bound_space& b) {
  auto obj = std::make_unique<scene>(*b.def, map_, static_cast<scene_host*>(this), nav_);
  if (limits_.on_new_phase) limits_.on_new_phase(*town_, *obj);
  obj->init();
  ++created_;
  return obj;
}

// Parks min_spaces of each space, as a fresh line's on_init does (and a reopened line's on_active).
void space_module::park_min_spaces() {
  for (auto& b : spaces_)
    while (b->parked.size() < b->def->space->min_spaces) b->parked.push_back(make_phase(*b));
}

bool space_module::wants_line_events() const {
  return town_ != nullptr && town_->host() != nullptr && town_->host()->wants_line_events();
}

void space_module::line_events(line_handle phase_line, phase_id, std::span<const line_event> events) {
  if (town_ != nullptr && town_->host() != nullptr)
    town_->host()->line_events(town_->line(), phase_line.line, events);
}

void space_module::on_init(scene& town) {
  town_ = &town;
  map_ = town.map();
  nav_ = town.nav_map();
  park_min_spaces();
}

void space_module::on_active(scene&) { park_min_spaces(); }

result<phase_id, world_errc> space_module::open_phase(scene_id space) {
  const scene_def* def = table_.find_scene(space);
  if (def == nullptr || def->kind != scene_kind::space || !def->space)
    return fail(world_errc::unknown_space, fmt::format("scene {} is not a space", space));
  bound_space* b = find(space);
  if (b == nullptr)
    return fail(world_errc::wrong_town,
                fmt::format("space {} ({}) binds to town {}, not to {} ({})", space, def->name,
                            def->space->bind_town, town_def_.id, town_def_.name));
  if (def->space->max_spaces != 0 && b->running >= def->space->max_spaces)
    return fail(world_errc::space_full, fmt::format("space {} ({}): {} of {} running on this town line",
                                                    space, def->name, b->running, def->space->max_spaces));
  std::unique_ptr<scene> obj;
  if (!b->parked.empty()) {
    obj = std::move(b->parked.back());
    b->parked.pop_back();
  } else {
    obj = make_phase(*b);
  }
  const phase_id id = next_phase_++;
  obj->assign_line(line_handle{space, id, 1});
  obj->activate();
  ++b->running;
  running_.push_back({id, b, std::move(obj), false});
  return id;
}

result<phase_id, world_errc> space_module::enter_phase(scene& town, player_id player, scene_id space) {
  if (auto it = visits_.find(player); it != visits_.end())
    return fail(world_errc::space_in_space,
                fmt::format("player {} is in phase {} already", player, it->second.phase));
  auto opened = open_phase(space);
  if (!opened) return opened;
  visit v{*opened, std::nullopt};
  if (auto e = town.entity_of(player)) v.entered_at = town.grid().position_of(*e);
  visits_.emplace(player, v);
  town.take_player(player);
  phase(*opened)->post_enter(player);
  return opened;
}

result<phase_id, world_errc> space_module::leave_phase(scene& town, player_id player) {
  auto it = visits_.find(player);
  if (it == visits_.end())
    return fail(world_errc::not_in_space, fmt::format("player {} is in no phase of {}", player, town.name()));
  const visit v = it->second;
  visits_.erase(it);
  std::optional<grid::cell_point> at = v.entered_at;
  if (scene* p = phase(v.phase)) {
    if (auto e = p->entity_of(player)) at = p->grid().position_of(*e);
    take_from(*p, v.phase, player);
  }
  town.place_player(player, at);
  return v.phase;
}

void space_module::drop_from_phase(player_id player) {
  auto it = visits_.find(player);
  if (it == visits_.end()) return;
  if (scene* p = phase(it->second.phase)) take_from(*p, it->second.phase, player);
  visits_.erase(it);
}

// A player leaves its phase now, on the town's thread, so the phase reports its `left` before the
// player's next place reports anything. One whose entry the phase has not applied yet (it entered
// and left within one town tick) leaves through the phase's roster, after its entry.
void space_module::take_from(scene& p, phase_id id, player_id player) {
  if (!p.has_player(player)) return p.post_leave(player, true);
  p.take_player(player);
  close_if_empty(id);
}

void space_module::move_in_phase(player_id player, grid::cell_point to) {
  if (auto id = phase_of(player))
    if (scene* p = phase(*id)) p->post_move(player, to);
}

std::optional<phase_id> space_module::phase_of(player_id player) const {
  auto it = visits_.find(player);
  if (it == visits_.end()) return std::nullopt;
  return it->second.phase;
}

space_module::running_phase* space_module::find_running(phase_id id) {
  for (auto& r : running_)
    if (r.id == id) return &r;
  return nullptr;
}

scene* space_module::phase(phase_id id) const {
  for (const auto& r : running_)
    if (r.id == id && !r.closing) return r.obj.get();
  return nullptr;
}

std::uint32_t space_module::running_phases(scene_id space) const {
  std::uint32_t n = 0;
  for (const auto& b : spaces_)
    if (space == 0 || b->def->id == space) n += b->running;
  return n;
}

std::size_t space_module::parked(scene_id space) const {
  for (const auto& b : spaces_)
    if (b->def->id == space) return b->parked.size();
  return 0;
}

// A phase's last player left: flagged now, closed on the town's next tick.
void space_module::player_left(line_handle line, player_id) { close_if_empty(line.line); }

void space_module::close_if_empty(phase_id id) {
  running_phase* r = find_running(id);
  if (r != nullptr && r->obj->player_count() == 0) r->closing = true;
}

// A phase that keeps failing sends its players back to the town and closes.
void space_module::scene_quarantined(line_handle line) {
  running_phase* r = find_running(line.line);
  if (r != nullptr) r->closing = true;
}

void space_module::park(running_phase& r) {
  r.obj->deactivate();
  --r.space->running;
  const std::size_t limit = std::max<std::size_t>(limits_.cache_limit, r.space->def->space->min_spaces);
  if (r.space->parked.size() < limit && !r.obj->quarantined()) r.space->parked.push_back(std::move(r.obj));
}

// The players still in a closing (failed) phase go back to where they entered it on the town.
void space_module::send_home(scene& town, running_phase& r) {
  std::vector<player_id> home;
  for (auto it = visits_.begin(); it != visits_.end();) {
    if (it->second.phase != r.id) {
      ++it;
      continue;
    }
    town.place_player(it->first, it->second.entered_at);
    home.push_back(it->first);
    it = visits_.erase(it);
  }
  // The world still has them in the phase: tell it, so their next request starts from the town.
  if (!home.empty() && town.host() != nullptr) town.host()->phase_closed(town.line(), r.id, std::move(home));
}

void space_module::on_tick(scene& town, const tick_context& ctx) {
  // Close what was flagged on the previous tick, then tick the rest in the order they opened.
  for (auto& r : running_) {
    if (!r.closing) continue;
    send_home(town, r);
    park(r);
  }
  std::erase_if(running_, [](const running_phase& r) { return r.closing; });
  for (auto& r : running_) (void)r.obj->tick(ctx, limits_.quarantine_after, limits_.mailbox_batch);
}

void space_module::on_inactive(scene&) {
  // The town line closes: its world already took every player off; close the phases, drop the parked.
  for (auto& r : running_) {
    r.obj->deactivate();
    --r.space->running;
  }
  running_.clear();
  visits_.clear();
  for (auto& b : spaces_) b->parked.clear();
}

std::function<void(scene&)> attach_space_modules(const scene_table& table, space_limits limits) {
  return [&table, limits = std::move(limits)](scene& s) {
    if (s.def().kind != scene_kind::town) return;
    auto m = std::make_unique<space_module>(table, s.def(), limits);
    if (!m->spaces().empty()) s.add_module(std::move(m));
  };
}

space_module* find_space_module(scene& town) noexcept {
  return dynamic_cast<space_module*>(town.phases());  // space_module is the only phase host
}

}  // namespace scenert
