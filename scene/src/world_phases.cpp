// Phases through the world: a player on a town line goes into a phase of a space bound to that town
// and comes back. The town's phase host does the moving on the town's thread; the world marks the
// player as switching into (or out of) the phase until the host answers, so the player is always
// in exactly one place.

#include <fmt/format.h>

#include <scenert/scene/phase_host.hpp>

#include "world_impl.hpp"

namespace scenert {
namespace {

std::string where(line_handle l) {
  return fmt::format("scene {} line {} (generation {})", l.scene, l.line, l.generation);
}

world_result refuse(world_errc code, std::string message) {
  return world_result(fail(code, std::move(message)));
}

}  // namespace

phase_host* find_phase_host(scene& s) noexcept {
  for (const auto& m : s.modules())
    if (auto* h = dynamic_cast<phase_host*>(m.get())) return h;
  return nullptr;
}

// Answers requests that cannot act while a phase request is under way or while the player is nowhere.
std::optional<world_result> world::impl::phase_busy(const location& loc, player_id p, const char* what) {
  if (loc.phase_pending)
    return refuse(world_errc::request_pending,
                  fmt::format("player {}: {}: a phase request is under way on {}", p, what, where(loc.line)));
  return std::nullopt;
}

// The player leaves its line from inside a phase: the town's phase host forgets it first.
void world::impl::drop_from_phase(player_id p, const location& loc) {
  if (loc.phase == 0) return;
  scene& town = object(loc.line);
  flush_roster();  // the roster first, as if it had been posted at once
  if (auto* host = find_phase_host(town)) (void)town.post([host, p] { host->drop_from_phase(p); });
  dir->clear_phase(p);
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
  scene& town = object(loc.line);
  phase_host* host = find_phase_host(town);
  if (host == nullptr)
    return refuse(world_errc::wrong_town, fmt::format("player {}: enter phase {}: {} hosts no phases",
                                                      r.player, r.scene, where(loc.line)));
  const scene_id space = r.scene;
  return hand_to_town(loc, r.player, space, reply, true,
                      [host, &town, p = r.player, space] { return host->enter_phase(town, p, space); });
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
  scene& town = object(loc.line);
  phase_host* host = find_phase_host(town);
  if (host == nullptr)
    return refuse(world_errc::not_in_space,
                  fmt::format("player {}: leave phase: {} hosts no phases", r.player, where(loc.line)));
  return hand_to_town(loc, r.player, loc.space, reply, false,
                      [host, &town, p = r.player] { return host->leave_phase(town, p); });
}

// Runs `move` (the phase host's part) on the town's thread and hands its answer back to the world's
// thread; meanwhile the player is marked as switching into or out of its phase.
std::optional<world_result> world::impl::hand_to_town(const location& loc, player_id p, scene_id space,
                                                      world_reply& reply, bool entering, phase_move move) {
  const line_handle line = loc.line;
  flush_roster();
  const bool posted = object(line).post([this, p, line, entering, move = std::move(move)]() mutable {
    world_event e;
    e.what = world_event::type::run;
    e.fn = std::make_unique<world_event::directory_fn>(
        [this, p, line, entering, answer = move()](const line_directory&) mutable {
          phase_answered(p, line, std::move(answer), entering);
        });
    push(std::move(e));
  });
  if (!posted)
    return refuse(world_errc::stale_line, fmt::format("player {}: {} phase: {} is closing", p,
                                                      entering ? "enter" : "leave", where(line)));
  dir->set_phase(p, space, loc.phase, true);
  phase_pending[p] = std::move(reply);
  return std::nullopt;
}

void world::impl::do_move_in_phase(const location& loc, const world_request& r) {
  scene& town = object(loc.line);
  if (auto* host = find_phase_host(town)) {
    flush_roster();
    (void)town.post([host, p = r.player, to = r.to] { host->move_in_phase(p, to); });
  }
}

// The town's phase host answered. The player may have been moved on meanwhile (its line failed, the
// world shut down): then the answer is stale and the player stays where the world put it.
void world::impl::phase_answered(player_id p, line_handle line, result<std::uint32_t, world_errc> answer,
                                 bool entering) {
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
  } else if (!answer) {
    dir->clear_phase(p);
    out = answer.error();
  } else {
    dir->set_phase(p, loc.space, *answer, false);
    out = placement{line, loc.space, *answer};
  }
  if (!out) ++errors;
  if (reply) reply(std::move(out));
}

// A failed phase sent its players back onto the town line (on the town's thread); they are out of
// it. One with a leave request under way keeps its switching state: the answer clears it.
void world::impl::phase_closed(line_handle line, std::uint32_t phase, std::vector<player_id> players) {
  world_event e;
  e.what = world_event::type::run;
  e.fn = std::make_unique<world_event::directory_fn>(
      [this, line, phase, players = std::move(players)](const line_directory&) {
        for (player_id p : players) {
          auto loc = dir->locate(p);
          if (loc.where == location::state::in_line && loc.line == line && loc.phase == phase &&
              !loc.phase_pending)
            dir->clear_phase(p);
        }
      });
  push(std::move(e));
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
