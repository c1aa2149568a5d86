// node_endpoint: journeys between nodes. The node a player leaves drives its journey: it asks the
// node the player goes to to place it, and lets the player go only once that node placed it; a
// hand-over not answered in time is given up (the player stays here) and the other node is told to
// let go of it, again until it confirms.

#include "node_endpoint_impl.hpp"
#include "subjects.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace scenert::cluster {

// A request that takes its player to another node: that node is asked to place it; the player
// stands here meanwhile (its gateway holds its next requests).
void node_endpoint::impl::hand_over(std::shared_ptr<const std::string> gateway,
                                    const wire::request_entry& e) {
  if (!valid_name(e.to) || e.to == node) {
    bad_batches.fetch_add(1, std::memory_order_relaxed);
    return answer(*gateway, e.ticket,
                  fail(world_errc::node_unavailable, fmt::format("player {}: no journey from node {} to '{}'",
                                                                 e.request.player, node, e.to)));
  }
  std::uint64_t id = 0;
  {
    std::lock_guard lock(travel_m);
    id = next_handoff++;
    handoffs.emplace(id, handoff{e.request.player, gateway, e.ticket, e.to, clock::now() + handoff_timeout});
  }
  handoffs_out.fetch_add(1, std::memory_order_relaxed);
  if (!link.publish(subjects::arrive(e.to), wire::encode(wire::arrival{id, node, *gateway, e.request}),
                    subjects::arrived(node)))
    publish_failures.fetch_add(1, std::memory_order_relaxed);  // given up at its deadline
}

// The node the player went to answered: placed there, it leaves here; refused, it stays.
void node_endpoint::impl::on_arrived(std::string_view data) {
  auto a = wire::decode_arrival_answer(data);
  if (!a) {
    bad_batches.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  handoff h;
  {
    std::lock_guard lock(travel_m);
    auto it = handoffs.find(a->id);
    if (it == handoffs.end() || it->second.to != a->node) return;  // given up already: released there
    h = std::move(it->second);
    handoffs.erase(it);
    if (a->result) handed.insert(h.player);
  }
  if (!a->result) {
    handoffs_failed.fetch_add(1, std::memory_order_relaxed);
    return answer(*h.gateway, h.ticket, std::move(a->result));
  }
  {
    std::lock_guard lock(gateways_m);
    gateway_of.erase(h.player);
  }
  w->submit(world_request::leave(h.player), [weak = weak_from_this(), p = h.player](world_result) {
    if (auto self = weak.lock()) {
      std::lock_guard lock(self->travel_m);
      self->handed.erase(p);
    }
  });
  answer(*h.gateway, h.ticket, std::move(a->result));
}

// Hand-overs not answered in time: the player stays, and the other node lets go of it if it
// placed it after all (told until it confirms, or forgot the arrival).
void node_endpoint::impl::give_up_handoffs(clock::time_point now) {
  std::vector<std::pair<std::string, std::string>> say;  // releases: (node, message)
  std::vector<std::pair<std::uint64_t, handoff>> late;
  {
    std::lock_guard lock(travel_m);
    late = take_late_handoffs(now, say);
  }
  for (const auto& [to, message] : say)
    if (!link.publish(subjects::release(to), message, subjects::released(node)))
      publish_failures.fetch_add(1, std::memory_order_relaxed);
  for (auto& [id, h] : late) {
    handoffs_failed.fetch_add(1, std::memory_order_relaxed);
    answer(*h.gateway, h.ticket,
           fail(world_errc::node_unavailable, fmt::format("player {}: node {} did not take it within {} ms",
                                                          h.player, h.to, handoff_timeout.count())));
  }
}

std::vector<std::pair<std::uint64_t, handoff>> node_endpoint::impl::take_late_handoffs(
    clock::time_point now, std::vector<std::pair<std::string, std::string>>& say) {
  std::vector<std::pair<std::uint64_t, handoff>> late;
  for (auto it = handoffs.begin(); it != handoffs.end();) {
    if (it->second.deadline > now) {
      ++it;
      continue;
    }
    late.emplace_back(it->first, std::move(it->second));
    it = handoffs.erase(it);
  }
  std::erase_if(arrivals, [&](const auto& a) { return now - a.second.heard >= arrival_memory; });
  std::erase_if(releasing, [&](const auto& r) { return r.second.until <= now; });
  for (auto& [id, r] : releasing)
    if (r.again <= now) {
      r.again = now + release_again;
      say.emplace_back(r.to, r.message);
    }
  releases_again.fetch_add(say.size(), std::memory_order_relaxed);
  for (auto& [id, h] : late) {
    auto message = wire::encode(wire::arrival{id, node, *h.gateway, world_request::leave(h.player)});
    releasing.insert_or_assign(id, release_due{h.to, message, now + release_again, now + arrival_memory});
    say.emplace_back(h.to, std::move(message));
  }
  return late;
}

// A player handed over by the node it stands on: placed here, then that node is told.
void node_endpoint::impl::on_arrive(std::string_view data, std::string_view reply) {
  auto a = wire::decode_arrival(data);
  if (!a || !valid_name(a->from) || !valid_name(a->gateway) || reply.empty()) {
    bad_batches.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  {
    std::lock_guard lock(travel_m);
    auto [it, fresh] = arrivals.try_emplace({a->from, a->id}, arrival_state{a->request.player, clock::now()});
    if (!fresh) return;  // heard twice, or released before it came
  }
  handoffs_in.fetch_add(1, std::memory_order_relaxed);
  bool new_here = false;
  {
    std::lock_guard lock(gateways_m);
    heard(a->gateway, clock::now());
    new_here = gateway_of.insert_or_assign(a->request.player, a->gateway).second;
  }
  {
    std::lock_guard lock(travel_m);
    arrivals[{a->from, a->id}].new_here = new_here;
  }
  w->submit(a->request, [weak = weak_from_this(), key = arrival_key{a->from, a->id}, p = a->request.player,
                         reply = std::string(reply)](world_result r) {
    if (auto self = weak.lock()) self->placed_here(key, p, reply, std::move(r));
  });
}

// On the world's thread: nothing here waits for the world.
void node_endpoint::impl::placed_here(const arrival_key& key, player_id p, const std::string& reply,
                                      world_result r) {
  bool released = false, new_here = false;
  {
    std::lock_guard lock(travel_m);
    auto& a = arrivals[key];
    a.answered = true;
    a.placed = r.has_value();
    released = a.released;
    new_here = a.new_here;
  }
  if (released) {
    if (r) let_go_here(p);
    return;
  }
  if (!r && new_here) {  // refused, and never this node's before
    std::lock_guard lock(gateways_m);
    gateway_of.erase(p);
  }
  publish(reply, wire::encode(wire::arrival_answer{key.second, node, std::move(r)}));
}

// The node a player came from gave up waiting: if it was placed here, it leaves again. Said
// again until confirmed: only the first one counts.
void node_endpoint::impl::on_release(std::string_view data, std::string_view reply) {
  auto a = wire::decode_arrival(data);
  if (!a) {
    bad_batches.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  bool placed = false;
  {
    std::lock_guard lock(travel_m);
    auto [it, fresh] = arrivals.try_emplace({a->from, a->id}, arrival_state{a->request.player, clock::now()});
    placed = !it->second.released && it->second.answered && it->second.placed;
    it->second.released = true;
  }
  if (placed) let_go_here(a->request.player);
  if (!reply.empty()) publish(std::string(reply), data);
}

// A release this node said reached its node (the confirmation is the release itself).
void node_endpoint::impl::on_released(std::string_view data) {
  auto a = wire::decode_arrival(data);
  if (!a || a->from != node) {
    bad_batches.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  std::lock_guard lock(travel_m);
  releasing.erase(a->id);
}

void node_endpoint::impl::let_go_here(player_id p) {
  {
    std::lock_guard lock(gateways_m);
    gateway_of.erase(p);
  }
  w->submit(world_request::leave(p), {});
}

// Whether a player is being handed over from here or to here (claims wait).
bool node_endpoint::impl::in_transit(player_id p) {
  std::lock_guard lock(travel_m);
  return std::any_of(handoffs.begin(), handoffs.end(), [p](const auto& h) { return h.second.player == p; }) ||
         std::any_of(arrivals.begin(), arrivals.end(), [p](const auto& a) {
           return a.second.player == p && !a.second.answered && !a.second.released;
         });
}

// Whether a player was handed over from here and has not left yet.
bool node_endpoint::impl::handed_over(player_id p) {
  std::lock_guard lock(travel_m);
  return handed.contains(p);
}

}  // namespace scenert::cluster
