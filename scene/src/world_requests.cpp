// The world's requests: each is O(1) work on the world's thread, answered at once, except a
// switch between two lines, which is answered when the player's state has left its old line.

#include <fmt/format.h>

#include "world_impl.hpp"

namespace scenert {

std::optional<world_result> world::impl::apply(const world_request& r, world_reply& reply) {
  if (shutting_down)
    return world_result(
        fail(world_errc::shutting_down, fmt::format("player {}: the world is shutting down", r.player)));
  switch (r.what) {
    case world_request::kind::enter:
      return do_enter(r);
    case world_request::kind::enter_line:
      return do_enter_line(r);
    case world_request::kind::leave:
      return do_leave(r);
    case world_request::kind::transfer: {
      auto* c = find(r.scene);
      if (!c)
        return world_result(fail(
            world_errc::unknown_scene,
            fmt::format("player {}: transfer to scene {}: no such scene (or a space)", r.player, r.scene)));
      return do_transfer(r, line_handle{r.scene, 0, 0}, reply);
    }
    case world_request::kind::transfer_line:
      return do_transfer(r, r.line, reply);
    case world_request::kind::join_team:
      return do_join_team(r, reply);
    case world_request::kind::move:
      return do_move(r);
    case world_request::kind::enter_phase:
      return do_enter_phase(r, reply);
    case world_request::kind::leave_phase:
      return do_leave_phase(r, reply);
    case world_request::kind::enter_instance:
      return do_enter_instance(r, reply);
    case world_request::kind::leave_party:
      return do_leave_party(r, reply);
    case world_request::kind::message:
      return do_message(r);
  }
  return std::nullopt;
}

result<line_handle, world_errc> world::impl::allocate(container& c, player_id p) {
  if (auto line = dir->pick(c.def->id, c.def->capacity)) return *line;
  if (auto line = open_line(c)) return *line;
  ++c.line_full, ++c.line_full_at_max;
  return fail(world_errc::line_full, fmt::format("player {}: scene {} ({}): all {} lines are full", p,
                                                 c.def->id, c.def->name, c.def->max_lines));
}

// A line named by the caller, with room below `below` players, open to a member of `member_of`.
result<line_handle, world_errc> world::impl::named_line(line_handle line, std::uint32_t below, player_id p,
                                                        party_id member_of) {
  if (line.generation == 0 && find(line.scene))  // a client knows a line by its number: the one open now
    dir->for_each_line(line.scene, [&line](const line_info& l) {
      if (l.handle.line == line.line) line.generation = l.handle.generation;
    });
  auto info = dir->check(line);
  if (!info) return fail(info.code(), fmt::format("player {}: {}", p, info.error().message));
  if (info->owner != 0 && info->owner != member_of)
    return fail(world_errc::instance_private,
                fmt::format("player {}: {} is the private instance of another party", p, where(line)));
  if (info->state == line_state::quarantined)
    return fail(world_errc::line_quarantined, fmt::format("player {}: {} is quarantined", p, where(line)));
  if (info->players >= below) {
    ++find(line.scene)->line_full;
    return fail(world_errc::line_full,
                fmt::format("player {}: {} is full ({} of {})", p, where(line), info->players, below));
  }
  return line;
}

std::optional<world_result> world::impl::do_enter(const world_request& r) {
  auto loc = dir->locate(r.player);
  if (loc.where != location::state::none)
    return world_result(
        fail(world_errc::already_in_scene,
             fmt::format("player {}: enter scene {}: already on {}", r.player, r.scene, where(loc.line))));
  auto* c = find(r.scene);
  if (!c)
    return world_result(
        fail(world_errc::unknown_scene,
             fmt::format("player {}: enter scene {}: no such scene (or a space)", r.player, r.scene)));
  if (c->def->instances == instance_mode::party) {  // a solo player's own instance
    world_reply none;
    return do_enter_instance(world_request::enter_instance(r.player, r.scene, 0), none);
  }
  auto line = allocate(*c, r.player);
  if (!line) return world_result(line.error());
  return place_on(r.player, *line);
}

world_result world::impl::place_on(player_id p, line_handle line) {
  dir->place(p, line);
  filled(line);
  send(line, {roster_change::kind::enter, p, {}});
  return placement{line};
}

std::optional<world_result> world::impl::do_enter_line(const world_request& r) {
  auto loc = dir->locate(r.player);
  if (loc.where != location::state::none)
    return world_result(
        fail(world_errc::already_in_scene,
             fmt::format("player {}: enter {}: already on {}", r.player, where(r.line), where(loc.line))));
  auto* c = find(r.line.scene);
  auto line = named_line(r.line, c ? c->def->capacity : 0, r.player, party_of(r.player));
  if (!line) return world_result(line.error());
  return place_on(r.player, *line);
}

std::optional<world_result> world::impl::do_leave(const world_request& r) {
  auto loc = dir->locate(r.player);
  if (loc.where == location::state::none)
    return world_result(
        fail(world_errc::not_in_scene, fmt::format("player {}: leave: not in any scene", r.player)));
  if (loc.where == location::state::switching)
    return world_result(
        fail(world_errc::switching, fmt::format("player {}: leave: switching from {} to {}", r.player,
                                                where(loc.line), where(loc.target))));
  if (auto busy = phase_busy(loc, r.player, "leave")) return busy;
  tickets.erase(r.player);
  dir->remove(r.player);  // the town drops the player from its phase when the leave reaches it
  send(loc.line, {roster_change::kind::leave, r.player, {}});
  return world_result(placement{loc.line});
}

// Transfer to a scene (target.line == 0: allocate) or to a named line.
std::optional<world_result> world::impl::do_transfer(const world_request& r, line_handle target,
                                                     world_reply& reply) {
  auto loc = dir->locate(r.player);
  if (loc.where == location::state::none)
    return world_result(
        fail(world_errc::not_in_scene, fmt::format("player {}: transfer: not in any scene", r.player)));
  if (loc.where == location::state::switching)
    return world_result(
        fail(world_errc::switching,
             fmt::format("player {}: transfer: already switching to {}", r.player, where(loc.target))));
  if (auto busy = phase_busy(loc, r.player, "transfer")) return busy;
  result<line_handle, world_errc> to = target;
  if (target.line == 0) {
    if (loc.line.scene == target.scene)
      return world_result(
          fail(world_errc::already_in_scene,
               fmt::format("player {}: transfer to scene {}: already on {} (name a line to change lines)",
                           r.player, target.scene, where(loc.line))));
    auto& c = *find(target.scene);
    if (c.def->instances == instance_mode::party)  // a solo player's own instance
      return do_enter_instance(world_request::enter_instance(r.player, target.scene, 0), reply);
    to = allocate(c, r.player);
  } else {
    if (target == loc.line)
      return world_result(fail(world_errc::same_line,
                               fmt::format("player {}: transfer: already on {}", r.player, where(target))));
    auto* c = find(target.scene);
    to = named_line(target, c ? c->def->capacity : 0, r.player, party_of(r.player));
  }
  if (!to) return world_result(to.error());
  return start_switch(r.player, loc.line, *to, reply);
}

std::optional<world_result> world::impl::do_join_team(const world_request& r, world_reply& reply) {
  auto mate = dir->locate(r.mate);
  if (mate.where != location::state::in_line)
    return world_result(fail(world_errc::teammate_not_found,
                             fmt::format("player {}: join team-mate {}: the mate is {}", r.player, r.mate,
                                         mate.where == location::state::none ? "in no scene" : "switching")));
  auto loc = dir->locate(r.player);
  if (loc.where == location::state::switching)
    return world_result(
        fail(world_errc::switching,
             fmt::format("player {}: join team-mate {}: already switching", r.player, r.mate)));
  if (loc.where == location::state::in_line && loc.line == mate.line)
    return world_result(fail(world_errc::same_line, fmt::format("player {}: join team-mate {}: already on {}",
                                                                r.player, r.mate, where(loc.line))));
  if (auto busy = phase_busy(loc, r.player, "join team-mate")) return busy;
  auto to = named_line(mate.line, find(mate.line.scene)->def->hard_capacity, r.player, party_of(r.player));
  if (!to) return world_result(to.error());
  if (loc.where == location::state::in_line) return start_switch(r.player, loc.line, *to, reply);
  return place_on(r.player, *to);
}

std::optional<world_result> world::impl::do_move(const world_request& r) {
  auto loc = dir->locate(r.player);
  if (loc.where != location::state::in_line)
    return world_result(
        fail(loc.where == location::state::none ? world_errc::not_in_scene : world_errc::switching,
             fmt::format("player {}: move: not standing on a line", r.player)));
  roster_change c{roster_change::kind::move, r.player, r.to};
  if (r.line.scene != 0) {  // move_on: meant for a line, maybe one the player left since
    if (!(r.line == loc.line))
      return world_result(
          fail(world_errc::stale_line, fmt::format("player {}: move meant for {}: it stands on {}", r.player,
                                                   where(r.line), where(loc.line))));
    c.meant_for = r.phase;
  }
  // The town walks a player in one of its phases inside that phase.
  send(loc.line, c);
  return world_result(placement{loc.line, loc.space, loc.phase});
}

// Staged with the player's moves, so that its line hears its moves and messages in the order sent.
std::optional<world_result> world::impl::do_message(const world_request& r) {
  auto loc = dir->locate(r.player);
  if (loc.where != location::state::in_line || !(r.line == loc.line))
    return world_result(fail(
        world_errc::stale_line,
        fmt::format(
            "player {}: message {} meant for {}: it stands {}", r.player, r.opcode, where(r.line),
            loc.where == location::state::in_line ? "on " + where(loc.line) : std::string("on no line"))));
  roster_change c{roster_change::kind::message, r.player, {}};
  c.opcode = r.opcode;
  if (r.bytes) c.bytes = *r.bytes;
  send(loc.line, c);
  return world_result(placement{loc.line, loc.space, loc.phase});
}

// The player is counted on both lines until its old scene confirms that its state left (a town
// drops it from its phase first).
std::optional<world_result> world::impl::start_switch(player_id p, line_handle from, line_handle to,
                                                      world_reply& reply) {
  dir->begin_switch(p, to);
  filled(to);
  pending.emplace(p, std::move(reply));
  send(from, {roster_change::kind::leave_ack, p, {}});
  return std::nullopt;
}

void world::impl::land(player_id p) {
  dir->finish_switch(p);
  auto loc = dir->locate(p);
  send(loc.line, {roster_change::kind::enter, p, {}});
  auto it = pending.find(p);
  if (it == pending.end()) return;
  auto reply = std::move(it->second);
  pending.erase(it);
  if (reply) reply(world_result(placement{loc.line}));
}

void world::impl::on_player_left(line_handle line, player_id p) {
  auto loc = dir->locate(p);
  if (loc.where != location::state::switching || !(loc.line == line)) return;  // answered already
  auto target = dir->check(loc.target);
  if (target && target->state == line_state::open) return land(p);
  // The target failed while the player was on its way: find it another line of that scene.
  auto old_target = loc.target;
  dir->cancel_switch(p);
  auto other = replacement(old_target, p);
  if (other) {
    dir->begin_switch(p, *other);
    filled(*other);
    land(p);
  } else {
    send(line, {roster_change::kind::enter, p, {}});  // back where it was
    auto it = pending.find(p);
    if (it != pending.end()) {
      auto reply = std::move(it->second);
      pending.erase(it);
      ++errors;
      if (reply)
        reply(world_result(fail(world_errc::line_quarantined,
                                fmt::format("player {}: {} failed while switching; stays on {}", p,
                                            where(old_target), where(line)))));
    }
  }
  maybe_close_quarantined(old_target);
}

void world::impl::on_quarantined(line_handle line) {
  auto info = dir->check(line);
  if (!info || info->state != line_state::open) return;
  dir->quarantine_line(line);
  ++find(line.scene)->quarantined;
  for (player_id p : dir->players(line)) {
    auto loc = dir->locate(p);
    // The failed town will not answer a phase request: it is answered here.
    if (loc.where == location::state::in_line && loc.phase_pending)
      refuse_phase_request(p, world_errc::line_quarantined, where(line) + " failed");
    if (loc.where == location::state::in_line) evacuate(p, line);
    // Leaving the failed line: its scene will never confirm, the state is taken as handed over.
    else if (loc.line == line)
      land(p);
    // Coming to it: on_player_left finds it another line when its old scene confirms.
  }
  maybe_close_quarantined(line);
}

// Another line of a failed line's scene: the owner's fresh instance when it was a private one.
result<line_handle, world_errc> world::impl::replacement(line_handle failed, player_id p) {
  auto& c = get(failed.scene);
  auto info = dir->check(failed);
  if (info && info->owner != 0) return instance_for(c, info->owner, p);
  return allocate(c, p);
}

void world::impl::evacuate(player_id p, line_handle from) {
  auto* c = find(from.scene);
  auto to = replacement(from, p);
  if (to) {
    dir->begin_switch(p, *to);
    filled(*to);
    land(p);
    return;
  }
  dir->remove(p);
  ++c->evicted;
  if (opt.on_evicted) opt.on_evicted(p, from, to.error().message);
}

}  // namespace scenert
