#include <scenert/space/space_module.hpp>

#include <algorithm>
#include <functional>
#include <vector>

#include <fmt/format.h>

namespace scenert {

/// One space definition bound to the town: its parked phases and how many run.
struct space_module::kind {
  const scene_def* def = nullptr;
  std::vector<std::unique_ptr<scene>> cache;
  std::uint32_t running = 0;
};

space_module::space_module(const scene_table& table, const scene_def& town, space_limits limits)
    : table_(table), town_def_(town), limits_(std::move(limits)) {
  for (const auto& s : table.scenes) {
    if (s.kind != scene_kind::space || !s.space || s.space->bind_town != town.id) continue;
    auto k = std::make_unique<kind>();
    k->def = &s;
    kinds_.push_back(std::move(k));
  }
}

space_module::~space_module() = default;

std::vector<scene_id> space_module::spaces() const {
  std::vector<scene_id> ids;
  for (const auto& k : kinds_) ids.push_back(k->def->id);
  return ids;
}

space_module::kind* space_module::find(scene_id space) {
  for (auto& k : kinds_)
    if (k->def->id == space) return k.get();
  return nullptr;
}

std::unique_ptr<scene> space_module::make_child(kind& k) {
  auto child = std::make_unique<scene>(*k.def, map_, static_cast<scene_host*>(this));
  if (limits_.on_new_phase) limits_.on_new_phase(*town_, *child);
  child->init();
  ++created_;
  return child;
}

// Parks min_spaces of each space, as a fresh line's on_init does (and a reopened line's on_active).
void space_module::fill_caches() {
  for (auto& k : kinds_)
    while (k->cache.size() < k->def->space->min_spaces) k->cache.push_back(make_child(*k));
}

void space_module::on_init(scene& town) {
  town_ = &town;
  map_ = town.map();
  fill_caches();
}

void space_module::on_active(scene&) { fill_caches(); }

result<child_id, world_errc> space_module::create_child(scene_id space) {
  const scene_def* def = table_.find_scene(space);
  if (def == nullptr || def->kind != scene_kind::space || !def->space)
    return fail(world_errc::unknown_space, fmt::format("scene {} is not a space", space));
  kind* k = find(space);
  if (k == nullptr)
    return fail(world_errc::wrong_town,
                fmt::format("space {} ({}) binds to town {}, not to {} ({})", space, def->name,
                            def->space->bind_town, town_def_.id, town_def_.name));
  if (def->space->max_spaces != 0 && k->running >= def->space->max_spaces)
    return fail(world_errc::space_full, fmt::format("space {} ({}): {} of {} running on this town line",
                                                    space, def->name, k->running, def->space->max_spaces));
  std::unique_ptr<scene> obj;
  if (!k->cache.empty()) {
    obj = std::move(k->cache.back());
    k->cache.pop_back();
  } else {
    obj = make_child(*k);
  }
  const child_id id = next_child_++;
  obj->assign_line(line_handle{space, id, 1});
  obj->activate();
  ++k->running;
  running_.push_back({id, k, std::move(obj), false});
  return id;
}

result<child_id, world_errc> space_module::enter(scene& town, player_id player, scene_id space) {
  if (visits_.count(player))
    return fail(world_errc::space_in_space,
                fmt::format("player {} is in phase {} already", player, visits_[player].child));
  auto made = create_child(space);
  if (!made) return made;
  visit v{*made, std::nullopt};
  if (auto e = town.entity_of(player)) v.entered_at = town.grid().position_of(*e);
  visits_.emplace(player, v);
  town.post_leave(player, false);
  child(*made)->post_enter(player);
  return made;
}

result<child_id, world_errc> space_module::leave(scene& town, player_id player) {
  auto it = visits_.find(player);
  if (it == visits_.end())
    return fail(world_errc::not_in_space, fmt::format("player {} is in no phase of {}", player, town.name()));
  const visit v = it->second;
  visits_.erase(it);
  std::optional<grid::cell_point> at = v.entered_at;
  if (scene* c = child(v.child)) {
    if (auto e = c->entity_of(player)) at = c->grid().position_of(*e);
    c->post_leave(player, true);
  }
  town.post_enter(player);
  if (at) town.post_move(player, *at);
  return v.child;
}

void space_module::drop(player_id player) {
  auto it = visits_.find(player);
  if (it == visits_.end()) return;
  if (scene* c = child(it->second.child)) c->post_leave(player, true);
  visits_.erase(it);
}

result<std::uint32_t, world_errc> space_module::enter_phase(scene& town, player_id player, scene_id space) {
  auto made = enter(town, player, space);
  if (!made) return made.error();
  return *made;
}

result<std::uint32_t, world_errc> space_module::leave_phase(scene& town, player_id player) {
  auto left = leave(town, player);
  if (!left) return left.error();
  return *left;
}

void space_module::move_in_phase(player_id player, grid::cell_point to) {
  if (auto id = child_of(player))
    if (scene* c = child(*id)) c->post_move(player, to);
}

std::optional<child_id> space_module::child_of(player_id player) const {
  auto it = visits_.find(player);
  if (it == visits_.end()) return std::nullopt;
  return it->second.child;
}

space_module::running_child* space_module::running_entry(child_id id) {
  for (auto& c : running_)
    if (c.id == id) return &c;
  return nullptr;
}

scene* space_module::child(child_id id) const {
  for (const auto& c : running_)
    if (c.id == id && !c.removed) return c.obj.get();
  return nullptr;
}

std::size_t space_module::running(scene_id space) const {
  std::size_t n = 0;
  for (const auto& k : kinds_)
    if (space == 0 || k->def->id == space) n += k->running;
  return n;
}

std::size_t space_module::cached(scene_id space) const {
  for (const auto& k : kinds_)
    if (k->def->id == space) return k->cache.size();
  return 0;
}

// A phase's last player left: flagged now, closed on the town's next tick.
void space_module::player_left(line_handle line, player_id) {
  running_child* c = running_entry(line.line);
  if (c != nullptr && c->obj->player_count() == 0) c->removed = true;
}

// A phase that keeps failing sends its players back to the town and closes.
void space_module::scene_quarantined(line_handle line) {
  running_child* c = running_entry(line.line);
  if (c != nullptr) c->removed = true;
}

void space_module::park(running_child& c) {
  c.obj->deactivate();
  --c.of->running;
  const std::size_t limit = std::max<std::size_t>(limits_.cache_limit, c.of->def->space->min_spaces);
  if (c.of->cache.size() < limit && !c.obj->quarantined()) c.of->cache.push_back(std::move(c.obj));
}

void space_module::on_tick(scene& town, const tick_context& ctx) {
  // Close what was flagged on the previous tick, then tick the rest in creation order.
  for (auto& c : running_) {
    if (!c.removed) continue;
    std::vector<player_id> home;
    for (auto it = visits_.begin(); it != visits_.end();) {  // a quarantined phase's players go home
      if (it->second.child != c.id) {
        ++it;
        continue;
      }
      town.post_enter(it->first);
      if (it->second.entered_at) town.post_move(it->first, *it->second.entered_at);
      home.push_back(it->first);
      it = visits_.erase(it);
    }
    // The world still has them in the phase: tell it, so their next request starts from the town.
    if (!home.empty() && town.host() != nullptr)
      town.host()->phase_closed(town.line(), c.id, std::move(home));
    park(c);
  }
  std::erase_if(running_, [](const running_child& c) { return c.removed; });
  for (auto& c : running_) (void)c.obj->tick(ctx, limits_.quarantine_after, limits_.mailbox_batch);
}

void space_module::on_inactive(scene&) {
  // The town line closes: its world already took every player off; close the phases, drop the cache.
  for (auto& c : running_) {
    c.obj->deactivate();
    --c.of->running;
  }
  running_.clear();
  visits_.clear();
  for (auto& k : kinds_) k->cache.clear();
}

std::function<void(scene&)> attach_space_modules(const scene_table& table, space_limits limits) {
  return [&table, limits = std::move(limits)](scene& s) {
    if (s.def().kind != scene_kind::town) return;
    auto m = std::make_unique<space_module>(table, s.def(), limits);
    if (!m->spaces().empty()) s.add_module(std::move(m));
  };
}

space_module* find_space_module(scene& town) noexcept {
  for (const auto& m : town.modules())
    if (auto* s = dynamic_cast<space_module*>(m.get())) return s;
  return nullptr;
}

}  // namespace scenert
