// Resume tokens across gateways: a token is written to the sessions bucket, and a gateway the
// player comes back through claims it there and asks the live nodes where the player stands.

#include "records.hpp"
#include "remote_world_impl.hpp"
#include "subjects.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace scenert::cluster {

using detail::claim_timeout;
using detail::clock;
using detail::pending_request;
using detail::stand;

namespace {

std::string token_key(std::string_view token) { return fmt::format("token.{}", token); }

// A resume token is 32 hex digits (the front's); anything else is nobody's.
bool valid_token(std::string_view t) {
  return t.size() == 32 && std::all_of(t.begin(), t.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

void remote_world::impl::remember(const std::string& token, player_id player, const std::string& name) {
  auto made = opt.sessions->create(token_key(token),
                                   detail::encode(detail::session_record{player, name, opt.gateway}));
  if (!made)
    warn(fmt::format("gateway {}: player {}: resume token not shared: {}", opt.gateway, player,
                     made.error().message));
}

void remote_world::impl::forget(const std::string& token) {
  if (auto gone = opt.sessions->erase(token_key(token)); !gone)
    warn(fmt::format("gateway {}: {}", opt.gateway, gone.error().message));
}

// Every node asked is asked: a gateway that died in the middle of a journey left the player on both
// its nodes. It goes on where the first says; the others let it go.
remote_world::impl::claim_round remote_world::impl::claim_on_nodes(player_id player, const std::string& ask,
                                                                   const std::vector<std::string>& asked) {
  claim_round round;
  for (const auto& node : asked) {
    auto answer = link.request(subjects::claim(node), ask, claim_timeout);
    if (!answer) {  // down (its players wait for it to be declared dead) or slow: asked again
      round.silent.push_back(node);
      continue;
    }
    auto a = wire::decode_claim_answer(*answer);
    if (!a) {
      bad_messages.fetch_add(1, std::memory_order_relaxed);
      warn(fmt::format("gateway {}: {}", opt.gateway, a.error().message));
      continue;
    }
    if (!a->result) continue;
    std::lock_guard lock(m);
    if (!round.found) {
      round.found.emplace(node, *a->result);
      // On a line of a dungeon of private instances it holds a ticket there, its way home not
      // known here: when it leaves the party, the world's (the table's first town) is taken.
      const scene_id scene = a->result->line.scene;
      const scene_def* d = opt.table ? opt.table->find_scene(scene) : nullptr;
      const bool instance = d != nullptr && d->instances == instance_mode::party;
      node_of[player] = stand{node, scene, instance ? scene : 0, 0};
      continue;
    }
    const std::uint64_t ticket = next_ticket++;
    pending.emplace(ticket, pending_request{{},
                                            player,
                                            world_request::kind::leave,
                                            node,
                                            clock::now() + opt.answer_timeout,
                                            0,
                                            {},
                                            true,
                                            {}});
    push(node, ticket, world_request::leave(player));
  }
  return round;
}

// The live nodes, then those of them that stayed silent (still live), up to claim_rounds: the
// player is on no node only when every live node said so.
std::optional<std::pair<std::string, placement>> remote_world::impl::find_claimed(player_id player,
                                                                                  const std::string& ask) {
  std::vector<std::string> asked;
  {
    std::lock_guard lock(m);
    for (const auto& [name, n] : nodes) asked.push_back(name);
  }
  for (int round = 0; round < detail::claim_rounds && !asked.empty(); ++round) {
    auto r = claim_on_nodes(player, ask, asked);
    if (r.found) return r.found;
    std::lock_guard lock(m);
    std::erase_if(r.silent, [this](const std::string& node) { return !nodes.contains(node); });
    asked = std::move(r.silent);
  }
  return std::nullopt;
}

result<claimed_player, world_errc> remote_world::impl::claim(const std::string& token) {
  auto refuse = [this](std::string why) {
    claims_refused.fetch_add(1, std::memory_order_relaxed);
    return fail(world_errc::not_in_scene, std::move(why));
  };
  if (!opt.sessions || !valid_token(token)) return refuse("resume token unknown");
  const std::string key = token_key(token);
  auto got = opt.sessions->get(key);
  if (!got) return refuse(fmt::format("resume token unknown: {}", got.error().message));
  auto record = detail::decode_session(key, got->value);
  if (!record) return refuse(record.error().message);
  const std::string held_by = record->gateway;
  // The record names this gateway from now on: of two gateways claiming it at once, one wins.
  record->gateway = opt.gateway;
  if (auto taken = opt.sessions->update(key, detail::encode(*record), got->revision); !taken)
    return refuse(fmt::format("player {}: {}", record->player, taken.error().message));
  const std::string ask = wire::encode(wire::claim{record->player, opt.gateway});
  const auto found = find_claimed(record->player, ask);
  if (!found) {
    forget(token);
    return refuse(fmt::format("player {}: on no live scene node", record->player));
  }
  if (held_by != opt.gateway) (void)link.publish(subjects::claimed(held_by), ask);
  claims.fetch_add(1, std::memory_order_relaxed);
  const placement& at = found->second;
  return claimed_player{record->player, record->name, at.line, at.space, at.phase};
}

void remote_world::impl::on_claimed(std::string_view data) {
  auto c = wire::decode_claim(data);
  if (!c) {
    bad_messages.fetch_add(1, std::memory_order_relaxed);
    return warn(fmt::format("gateway {}: {}", opt.gateway, c.error().message));
  }
  if (c->gateway == opt.gateway) return;
  {
    std::lock_guard lock(m);
    node_of.erase(c->player);
  }
  claimed_elsewhere.fetch_add(1, std::memory_order_relaxed);
  if (opt.on_claimed_elsewhere) opt.on_claimed_elsewhere(c->player);
}

}  // namespace scenert::cluster
