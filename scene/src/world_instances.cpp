// Private dungeon instances (seed 004's doEnterCopyScene with needTeam): a party that enters a
// dungeon whose table says `instances: party` (or `both`) gets a fresh line of its own, from the
// line pool like any line; its later members join that line, nobody else enters it, and it closes
// after its idle grace once the last member left. A solo player of a `party` scene is a party of one.

#include <fmt/format.h>

#include "world_impl.hpp"

namespace scenert {
namespace {

// Party ids from 2^63 up name solo players' own instances.
constexpr party_id solo_bit = party_id{1} << 63;

party_id solo_owner(player_id p) { return solo_bit | p; }

world_result refuse(world_errc code, std::string message) {
  return world_result(fail(code, std::move(message)));
}

}  // namespace

party_id world::impl::party_of(player_id p) const {
  auto it = tickets.find(p);
  return it == tickets.end() ? 0 : it->second.owner;
}

// The owner's open instance of the scene (joined up to hard capacity), or a fresh one.
result<line_handle, world_errc> world::impl::instance_for(container& c, party_id owner, player_id p) {
  if (auto it = instances.find({owner, c.def->id}); it != instances.end()) {
    auto info = dir->check(it->second);
    if (info && info->state == line_state::open)
      return named_line(it->second, c.def->hard_capacity, p, owner);
    instances.erase(it);  // failed meanwhile: the party gets a fresh one
  }
  auto opened = open_line(c, owner);
  if (!opened) {
    ++c.line_full, ++c.line_full_at_max;
    return fail(world_errc::line_full, fmt::format("player {}: scene {} ({}): all {} lines are in use", p,
                                                   c.def->id, c.def->name, c.def->max_lines));
  }
  instances[{owner, c.def->id}] = *opened;
  return *opened;
}

void world::impl::forget_instance(line_handle line, party_id owner) {
  auto it = instances.find({owner, line.scene});
  if (it != instances.end() && it->second == line) instances.erase(it);
}

std::optional<world_result> world::impl::do_enter_instance(const world_request& r, world_reply& reply) {
  auto* c = find(r.scene);
  if (!c)
    return refuse(
        world_errc::unknown_scene,
        fmt::format("player {}: enter instance of scene {}: no such scene (or a space)", r.player, r.scene));
  if (r.party >= solo_bit)
    return refuse(world_errc::instance_private,
                  fmt::format("player {}: enter instance: party ids from 2^63 up are reserved", r.player));
  const auto mode = c->def->instances;
  const party_id owner = r.party != 0 ? r.party : mode == instance_mode::party ? solo_owner(r.player) : 0;
  auto loc = dir->locate(r.player);
  if (owner == 0 || mode == instance_mode::shared) {  // a shared line, as enter or transfer would
    if (loc.where == location::state::none) return do_enter(world_request::enter(r.player, r.scene));
    return do_transfer(world_request::transfer(r.player, r.scene), line_handle{r.scene, 0, 0}, reply);
  }
  if (loc.where == location::state::switching)
    return refuse(world_errc::switching, fmt::format("player {}: enter instance of scene {}: switching to {}",
                                                     r.player, r.scene, where(loc.target)));
  if (auto busy = phase_busy(loc, r.player, "enter instance")) return busy;
  auto to = instance_for(*c, owner, r.player);
  if (!to) return world_result(to.error());
  if (loc.where == location::state::in_line && loc.line == *to)
    return refuse(world_errc::same_line,
                  fmt::format("player {}: enter instance: already on {}", r.player, where(*to)));
  const scene_id from = loc.where == location::state::in_line ? loc.line.scene
                        : loc.where == location::state::none  ? r.line.scene  // stood there on another node
                                                              : 0;
  auto& ticket = tickets[r.player];  // from another instance of this scene: keep the way home
  ticket = {owner, from != 0 && from != r.scene ? from : ticket.return_to};
  if (loc.where == location::state::none) return place_on(r.player, *to);
  return start_switch(r.player, loc.line, *to, reply);
}

// Off the party's instance: to the scene the player came from, else the table's first town.
std::optional<world_result> world::impl::do_leave_party(const world_request& r, world_reply& reply) {
  auto it = tickets.find(r.player);
  if (it == tickets.end())
    return refuse(world_errc::not_in_instance,
                  fmt::format("player {}: leave party: entered no private instance", r.player));
  auto loc = dir->locate(r.player);
  if (loc.where == location::state::switching)
    return refuse(world_errc::switching,
                  fmt::format("player {}: leave party: switching to {}", r.player, where(loc.target)));
  const party_ticket ticket = it->second;
  tickets.erase(it);
  if (loc.where == location::state::none) return world_result(placement{});
  auto info = dir->check(loc.line);
  if (!info || info->owner != ticket.owner) return world_result(placement{loc.line});  // not on it now
  container* home = ticket.return_to != 0 ? find(ticket.return_to) : nullptr;
  for (auto* c : ordered)
    if (!home && c->def->kind == scene_kind::town) home = c;
  if (!home) {  // a table without towns: out of the world
    dir->remove(r.player);
    send(loc.line, {roster_change::kind::leave, r.player, {}});
    return world_result(placement{loc.line});
  }
  auto to = allocate(*home, r.player);
  if (!to) {
    tickets[r.player] = ticket;  // still on the instance, so still let in
    return world_result(to.error());
  }
  return start_switch(r.player, loc.line, *to, reply);
}

}  // namespace scenert
