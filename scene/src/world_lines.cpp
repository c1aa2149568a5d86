// The world's line hosting: line objects created lazily and pooled on close, scene groups keyed by
// frame rate, the idle grace before an empty line closes, shutdown and the published snapshot.

#include <algorithm>

#include <fmt/format.h>

#include "world_impl.hpp"

namespace scenert {

// Requests come in runs for one scene: the last answer is kept (containers never move).
world::impl::container* world::impl::find(scene_id id) {
  if (last_found && last_found->def->id == id) return last_found;
  auto it = containers.find(id);
  if (it == containers.end()) return nullptr;
  return last_found = &it->second;
}

world::impl::container& world::impl::get(scene_id id) {
  auto* c = find(id);
  SCENERT_ASSERT(c != nullptr, "world: a line of an unknown scene");
  return *c;
}

world::impl::hosted_line& world::impl::hosted(line_handle line) {
  return get(line.scene).lines[line.line - 1];
}

scene& world::impl::object(line_handle line) {
  auto& obj = hosted(line).object;
  SCENERT_ASSERT(obj != nullptr, "world: a live line has no scene object");
  return *obj;
}

// A player who enters and leaves a line within one tick never stands on it: the leave takes the
// enter's place, so the line neither puts it on its grid nor reports it, and still hears the leave
// (it tells the world when the batch leaves it empty).
void world::impl::send(line_handle line, const roster_change& change) {
  scene* to = &object(line);
  if (change.what == roster_change::kind::leave && !staged.empty() && staged_to.back() == to &&
      staged.back().what == roster_change::kind::enter && staged.back().player == change.player) {
    staged.back() = change;
    return;
  }
  staged_to.push_back(to);
  staged.push_back(change);
}

// Consecutive changes for one line go over in one post: a busy line's changes of a tick cost one
// claim on its inbox, not one each.
void world::impl::flush_roster() {
  const std::size_t n = staged.size();
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && staged_to[j] == staged_to[i]) ++j;
    staged_to[i]->post_roster(std::span(staged).subspan(i, j - i));
    i = j;
  }
  staged_to.clear();
  staged.clear();
}

// ---- straight to a line: a client's moves and messages skip the world's tick -----------------

namespace {
std::uint64_t live_key(line_handle l) { return std::uint64_t{l.scene} << 32 | l.line; }
}  // namespace

void world::impl::show_line(line_handle line, scene* object) {
  std::unique_lock lock(live_m);
  live_lines[live_key(line)] = {object, line.generation};
}

void world::impl::hide_line(line_handle line) {
  std::unique_lock lock(live_m);
  live_lines.erase(live_key(line));
}

// Any thread. The line checks the rest when it applies it (the player may have gone elsewhere since),
// after everything the world sent it before: a leave posted before this is applied first.
bool world::impl::post_to_line(const world_request& r) {
  roster_change c{
      r.what == world_request::kind::message ? roster_change::kind::message : roster_change::kind::move,
      r.player, r.to};
  c.meant_line = r.line;
  if (c.what == roster_change::kind::message) {
    c.opcode = r.opcode;
    if (r.bytes) c.bytes = *r.bytes;
  } else {
    c.meant_for = r.phase;
  }
  std::shared_lock lock(live_m);
  auto it = live_lines.find(live_key(r.line));
  if (it == live_lines.end() || it->second.generation != r.line.generation) return false;
  it->second.object->post_roster(c);
  return true;
}

// A player was put on the line: it is not waiting to close any more.
void world::impl::filled(line_handle line) { hosted(line).empty_since = -1; }

std::optional<line_handle> world::impl::open_line(container& c, party_id owner) {
  if (shutting_down) return std::nullopt;
  auto line = dir->open_line(c.def->id, owner);
  if (!line) return std::nullopt;
  std::size_t index = line->line - 1;
  if (c.lines.size() <= index) c.lines.resize(index + 1);
  std::shared_ptr<scene> s;
  if (!c.spare.empty()) {
    s = std::move(c.spare.back());
    c.spare.pop_back();
  } else {
    s = std::make_shared<scene>(*c.def, c.map, this, c.nav);
    if (opt.on_new_line) opt.on_new_line(*s);
  }
  s->assign_line(*line);
  show_line(*line, s.get());
  auto& h = c.lines[index];
  h = {s, -1, 0};
  if (c.def->structure == scene_structure::group) {
    h.group = assign_group(s);
  } else {
    auto added = pool.add(s, c.def->frame_rate);
    SCENERT_ASSERT(added.has_value(), "world: the pool refused a scene line");
  }
  return line;
}

void world::impl::close_line(line_handle line) {
  flush_roster();  // what the line was sent reaches it before it leaves the pool
  auto& c = get(line.scene);
  auto& h = hosted(line);
  if (auto info = dir->check(line); info && info->owner != 0) forget_instance(line, info->owner);
  dir->close_line(line);
  hide_line(line);
  h.empty_since = -1;
  auto s = h.object;
  auto notify = [this, line] { notice(world_event::type::line_closed, line); };
  if (c.def->structure == scene_structure::group) {
    groups[h.group].g->remove_member(s, std::move(notify));
  } else {
    auto removed = pool.remove(*s, std::move(notify));
    SCENERT_ASSERT(removed.has_value(), "world: the pool lost a scene line");
  }
}

void world::impl::maybe_close_quarantined(line_handle line) {
  auto info = dir->check(line);
  if (info && info->state == line_state::quarantined && info->players == 0) close_line(line);
}

void world::impl::on_line_closed(line_handle line) {
  auto& c = get(line.scene);
  auto& h = hosted(line);
  dir->free_line(line.scene, line.line);
  auto s = std::move(h.object);
  if (c.def->structure == scene_structure::group) release_group(h.group, weight_of(*c.def));
  // A failed line's object is not trusted again; the pool is bounded so memory follows the peak.
  if (!s->broken() && c.spare.size() < opt.line_pool) c.spare.push_back(std::move(s));
}

// ---- scene groups: keyed by frame rate, each holds up to group_budget players' worth ----

std::uint32_t world::impl::weight_of(const scene_def& def) const {
  return std::clamp<std::uint32_t>(def.capacity, 1, std::max<std::uint32_t>(1, table.runtime.group_budget));
}

std::uint32_t world::impl::assign_group(const std::shared_ptr<scene>& s) {
  const auto& def = s->def();
  std::uint32_t w = weight_of(def);
  std::uint32_t budget = std::max<std::uint32_t>(1, table.runtime.group_budget);
  auto& candidates = room[def.frame_rate];
  std::optional<std::uint32_t> chosen;
  while (!candidates.empty() && !chosen) {
    std::uint32_t gi = candidates.back();
    auto& g = groups[gi];
    if (!g.removing && g.weight + w <= budget) {
      chosen = gi;
    } else {
      candidates.pop_back();
      g.in_room = false;
    }
  }
  if (!chosen) {
    scene_group_options o;
    o.hz = def.frame_rate;
    o.slots = group_slots(budget, def.capacity);
    o.quarantine_after = pool.options().quarantine_after;
    o.mailbox_batch = pool.options().mailbox_batch;
    o.time = time;
    chosen = static_cast<std::uint32_t>(groups.size());
    groups.push_back({std::make_shared<scene_group>(fmt::format("group@{}Hz#{}", def.frame_rate, *chosen), o),
                      def.frame_rate});
    offer_room(*chosen);
  }
  auto& g = groups[*chosen];
  if (!g.in_pool) {
    auto added = pool.add(g.g, g.hz);
    SCENERT_ASSERT(added.has_value(), "world: the pool refused a scene group");
    g.in_pool = true;
    ++groups_in_pool;
  }
  g.weight += w;
  ++g.members;
  g.g->add_member(s);  // a group left full stays in the room list until assign_group passes it over
  return *chosen;
}

void world::impl::offer_room(std::uint32_t gi) {
  auto& g = groups[gi];
  if (g.in_room || g.removing) return;
  g.in_room = true;
  room[g.hz].push_back(gi);
}

// A member left: an empty group leaves the pool (it joins again with its next member).
void world::impl::release_group(std::uint32_t gi, std::uint32_t weight) {
  auto& g = groups[gi];
  g.weight -= weight;
  --g.members;
  if (g.members == 0) {
    g.removing = true;
    auto removed = pool.remove(*g.g, [this, gi] {
      world_event e;
      e.what = world_event::type::group_removed;
      e.index = gi;
      push(std::move(e));
    });
    SCENERT_ASSERT(removed.has_value(), "world: the pool lost a scene group");
    return;
  }
  offer_room(gi);
}

// ---- idle grace: an empty line above min_lines closes once it stayed empty that long ----

void world::impl::on_scene_empty(line_handle line) {
  auto info = dir->check(line);
  if (!info || info->state != line_state::open || info->players != 0) return;  // refilled or gone
  auto& since = hosted(line).empty_since;
  if (since >= 0) return;  // already waiting
  since = now_ns();
  grace.push_back({line, since, since + std::chrono::nanoseconds(table.runtime.idle_grace).count()});
}

void world::impl::run_grace() {
  const std::int64_t now = now_ns();
  const std::int64_t period = std::chrono::nanoseconds(table.runtime.idle_grace).count();
  std::size_t n = grace.size();  // entries pushed back below wait for the next round
  while (n-- > 0 && !grace.empty() && grace.front().deadline <= now) {
    auto e = grace.front();
    grace.pop_front();
    auto info = dir->check(e.line);
    auto& c = get(e.line.scene);
    if (!info || info->state != line_state::open || info->players != 0) continue;
    if (c.lines[e.line.line - 1].empty_since != e.since) continue;  // refilled and emptied since
    // min_lines counts shared lines: an empty private instance always closes.
    auto counts = dir->counts(e.line.scene);
    if (info->owner != 0 || counts.open - counts.open_private > c.def->min_lines) {
      close_line(e.line);
    } else {
      grace.push_back({e.line, e.since, now + period});  // needed for min_lines; look again later
    }
  }
}

void world::impl::ensure_min_lines() {
  for (auto* c : ordered)
    while (dir->counts(c->def->id).open - dir->counts(c->def->id).open_private < c->def->min_lines)
      if (!open_line(*c)) break;
}

// ---- shutdown --------------------------------------------------------------------------

void world::impl::begin_shutdown(unique_function<void(const line_directory&)> done) {
  if (shutting_down) {
    if (done) done(*dir);  // a second call: nothing more to wait for than the first
    return;
  }
  shutting_down = true;
  answer_phase_requests_at_shutdown();
  shutdown_done = std::move(done);
  grace.clear();
  for (auto* c : ordered) {
    std::vector<line_handle> live;
    dir->for_each_line(c->def->id, [&](const line_info& l) {
      if (l.state != line_state::closing) live.push_back(l.handle);
    });
    for (auto line : live) {
      for (player_id p : dir->players(line)) {
        auto loc = dir->locate(p);
        if (loc.where == location::state::switching) dir->cancel_switch(p);
        if (!(loc.line == line)) continue;  // taken off with its source line
        dir->remove(p);
        send(line, {roster_change::kind::leave, p, {}});
        auto it = pending.find(p);
        if (it != pending.end()) {
          auto reply = std::move(it->second);
          pending.erase(it);
          if (reply)
            reply(world_result(
                fail(world_errc::shutting_down, fmt::format("player {}: the world shut down", p))));
        }
      }
    }
    for (auto line : live) close_line(line);
  }
  check_shut_down();
}

void world::impl::check_shut_down() {
  if (!shutting_down || shut_down || groups_in_pool != 0) return;
  for (auto* c : ordered)
    if (dir->counts(c->def->id).live != 0) return;
  shut_down = true;
  publish(true);
  if (shutdown_done) std::exchange(shutdown_done, {})(*dir);
}

// ---- snapshot --------------------------------------------------------------------------

void world::impl::publish(bool force) {
  const std::int64_t now = now_ns();
  if (!force && now - last_publish < opt.snapshot_period.count()) return;
  last_publish = now;
  auto s = std::make_shared<world_snapshot>();
  s->at = time->now();
  // Only look into the line objects of groups that saw an overrun (only group members count
  // overruns): 100,000 objects are 100,000 cache misses.
  std::vector<bool> overran(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) overran[i] = groups[i].g->member_overruns() > 0;
  for (auto* c : ordered) {
    const bool grouped = c->def->structure == scene_structure::group;
    scene_snapshot sc;
    sc.def = c->def;
    auto counts = dir->counts(c->def->id);
    sc.open_lines = counts.open;
    sc.lines_opened = counts.opened;
    sc.lines_closed = counts.closed;
    sc.line_full = c->line_full;
    sc.line_full_at_max = c->line_full_at_max;
    sc.open_private = counts.open_private;
    sc.opened_private = counts.opened_private;
    sc.quarantined = c->quarantined;
    sc.evicted = c->evicted;
    sc.lines.reserve(counts.live);
    dir->for_each_line(c->def->id, [&](const line_info& l) {
      sc.lines.push_back({l.handle.line, l.handle.generation, l.state, l.players, l.owner});
      sc.players += l.players;
      c->max_players = std::max(c->max_players, l.players);
      const std::size_t index = l.handle.line - 1;
      const auto& h = c->lines[index];
      if (!grouped || !overran[h.group]) return;
      const auto& obj = h.object;
      if (obj && obj->overruns() > 0) {
        sc.overruns += obj->overruns();
        if (sc.overrunning.size() < 10)
          sc.overrunning.push_back(
              fmt::format("{} line {}: {}", obj->name(), l.handle.line, obj->overruns()));
      }
    });
    sc.max_players_on_line = c->max_players;
    s->scenes.push_back(std::move(sc));
  }
  s->players = dir->player_count();
  s->group_services = groups_in_pool;
  s->requests = requests;
  s->errors = errors;
  s->stale_posts = stale_posts.load(std::memory_order_relaxed);
  s->busy_ns = busy_ns;
  s->shutting_down = shutting_down;
  s->shut_down = shut_down;
  std::lock_guard lock(snap_mutex);
  snap = std::move(s);
}

}  // namespace scenert
