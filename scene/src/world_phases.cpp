// Phases through the world: a player on a town line goes into a phase of a space bound to that town
// and comes back. The request travels to the town line as a roster change (so it is applied in
// order with the player's other changes); the town's phase host moves the player on the town's
// thread and the answer comes back as an event in the world's inbox. Meanwhile the player is marked
// as switching into (or out of) the phase, so it is always in exactly one place.

#include <fmt/format.h>

#include <scenert/scene/phase_host.hpp>

#include "world_impl.hpp"

namespace scenert {
namespace {

world_result refuse(world_errc code, std::string message) {
  return world_result(fail(code, std::move(message)));
}

}  // namespace

// Answers requests that cannot act while a phase request is under way.
std::optional<world_result> world::impl::phase_busy(const location& loc, player_id p, const char* what) {
  if (loc.phase_pending)
    return refuse(world_errc::request_pending,
                  fmt::format("player {}: {}: a phase request is under way on {}", p, what, where(loc.line)));
  return std::nullopt;
}

std::optional<world_result> world::impl::do_enter_phase(const world_request& r, world_reply& reply) {
  const scene_def* def = table.find_scene(r.scene);
  if (def == nullptr || def->kind != scene_kind::space || !def->space)
    return refuse(
        world_errc::unknown_space,
        fmt::format("player {}: enter phase {}: no scene of kind space has that id", r.player, r.scene));
  auto loc = dir->locate(r.player);
  if (loc.where == location::state::none)
    return refuse(world_errc::not_in_scene,
                  fmt::format("player {}: enter phase {}: not in any scene", r.player, r.scene));
  if (loc.where == location::state::switching)
    return refuse(world_errc::switching, fmt::format("player {}: enter phase {}: switching to {}", r.player,
                                                     r.scene, where(loc.target)));
  if (auto busy = phase_busy(loc, r.player, "enter phase")) return busy;
  if (loc.phase != 0)
    return refuse(world_errc::space_in_space,
                  fmt::format("player {}: enter phase {}: already in phase {} of space {} on {}", r.player,
                              r.scene, loc.phase, loc.space, where(loc.line)));
  if (loc.line.scene != def->space->bind_town)
    return refuse(world_errc::wrong_town,
                  fmt::format("player {}: enter phase {} ({}): it binds to town {}, the player is on {}",
                              r.player, r.scene, def->name, def->space->bind_town, where(loc.line)));
  if (object(loc.line).phases() == nullptr)
    return refuse(world_errc::wrong_town, fmt::format("player {}: enter phase {}: {} hosts no phases",
                                                      r.player, r.scene, where(loc.line)));
  return phase_request(loc, r, r.scene, reply);
}

std::optional<world_result> world::impl::do_leave_phase(const world_request& r, world_reply& reply) {
  auto loc = dir->locate(r.player);
  if (loc.where == location::state::none)
    return refuse(world_errc::not_in_scene,
                  fmt::format("player {}: leave phase: not in any scene", r.player));
  if (loc.where == location::state::switching)
    return refuse(world_errc::switching,
                  fmt::format("player {}: leave phase: switching to {}", r.player, where(loc.target)));
  if (auto busy = phase_busy(loc, r.player, "leave phase")) return busy;
  if (loc.phase == 0)
    return refuse(world_errc::not_in_space,
                  fmt::format("player {}: leave phase: in no phase on {}", r.player, where(loc.line)));
  return phase_request(loc, r, loc.space, reply);
}

// Sends the request to the town line; the player is marked as switching into or out of its phase
// until the town answers (on_phase_answer).
std::optional<world_result> world::impl::phase_request(const location& loc, const world_request& r,
                                                       scene_id space, world_reply& reply) {
  const bool entering = r.what == world_request::kind::enter_phase;
  send(loc.line,
       {entering ? roster_change::kind::enter_phase : roster_change::kind::leave_phase, r.player, {}, space});
  dir->set_phase(r.player, space, loc.phase, true);
  phase_pending[r.player] = std::move(reply);
  return std::nullopt;
}

// On the town's thread: the answer goes into the world's inbox.
void world::impl::phase_answered(line_handle line, player_id player, result<phase_id, world_errc> answer,
                                 bool entering) {
  world_event e;
  e.what = world_event::type::phase_answer;
  e.req = entering ? world_request::enter_phase(player, 0) : world_request::leave_phase(player);
  e.req.line = line;
  if (answer)
    e.index = *answer;
  else
    e.carried = std::make_unique<world_event::payload>(answer.error());
  push(std::move(e));
}

// The town answered. The player may have been moved on meanwhile (its line failed, the world shut
// down): then the answer is stale and the player stays where the world put it.
void world::impl::on_phase_answer(world_event& e) {
  const player_id p = e.req.player;
  const line_handle line = e.req.line;
  const bool entering = e.req.what == world_request::kind::enter_phase;
  world_reply reply;
  if (auto it = phase_pending.find(p); it != phase_pending.end()) {
    reply = std::move(it->second);
    phase_pending.erase(it);
  }
  auto loc = dir->locate(p);
  const bool current = loc.where == location::state::in_line && loc.line == line && loc.phase_pending;
  world_result out = placement{line};
  if (!current) {
    out = fail(world_errc::stale_line, fmt::format("player {}: {} phase: the player left {} meanwhile", p,
                                                   entering ? "enter" : "leave", where(line)));
  } else if (!entering) {
    dir->clear_phase(p);  // out, or sent home already by the host when its phase failed
  } else if (e.carried) {
    dir->clear_phase(p);
    out = std::get<error<world_errc>>(*e.carried);
  } else {
    dir->set_phase(p, loc.space, e.index, false);
    out = placement{line, loc.space, e.index};
  }
  if (!out) ++errors;
  if (reply) reply(std::move(out));
}

// On the town's thread: a failed phase sent its players back onto the town line.
void world::impl::phase_closed(line_handle line, phase_id phase, std::vector<player_id> players) {
  world_event e;
  e.what = world_event::type::phase_closed;
  e.req.line = line;
  e.index = phase;
  e.carried = std::make_unique<world_event::payload>(std::move(players));
  push(std::move(e));
}

// They are out of the phase. One with a leave request under way keeps its switching state: the
// answer clears it.
void world::impl::on_phase_closed(line_handle line, phase_id phase, const std::vector<player_id>& players) {
  for (player_id p : players) {
    auto loc = dir->locate(p);
    if (loc.where == location::state::in_line && loc.line == line && loc.phase == phase && !loc.phase_pending)
      dir->clear_phase(p);
  }
}

void world::impl::refuse_phase_request(player_id p, world_errc code, const std::string& why) {
  auto it = phase_pending.find(p);
  if (it == phase_pending.end()) return;
  auto reply = std::move(it->second);
  phase_pending.erase(it);
  ++errors;
  if (reply) reply(refuse(code, fmt::format("player {}: phase request: {}", p, why)));
}

void world::impl::answer_phase_requests_at_shutdown() {
  for (auto& [p, reply] : phase_pending) {
    ++errors;
    if (reply)
      reply(world_result(fail(world_errc::shutting_down, fmt::format("player {}: the world shut down", p))));
  }
  phase_pending.clear();
}

}  // namespace scenert
