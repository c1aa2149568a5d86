// node_endpoint: the gateways as this node hears them, their requests and the answers back.

#include "node_endpoint_impl.hpp"
#include "subjects.hpp"

#include <boost/asio/post.hpp>

namespace scenert::cluster {

void node_endpoint::impl::heard(const std::string& gateway, clock::time_point now) {
  auto& g = gateways[gateway];
  g.heard = now;
  g.dead_since.reset();  // a gateway that was only slow: its players are its own again
}

void node_endpoint::impl::on_beat(std::string_view subject) {
  const auto gateway = subjects::gateway_of_beat(subject);
  if (!valid_name(gateway)) return;
  std::lock_guard lock(gateways_m);
  heard(std::string(gateway), clock::now());
}

void node_endpoint::impl::poll(clock::time_point now) {
  std::vector<player_id> abandoned;
  {
    std::lock_guard lock(gateways_m);
    // Across a link outage nobody could be heard: silence says nothing, the clocks start again.
    if (const auto ups = link.reconnects(); ups != link_ups || !link.connected()) {
      link_ups = ups;
      for (auto& [name, g] : gateways) g.heard = now;
      return;
    }
    for (auto& [name, g] : gateways)
      if (!g.dead_since && now - g.heard >= opt.gateway_dead_after) {
        g.dead_since = now;
        gateways_lost.fetch_add(1, std::memory_order_relaxed);
      }
    auto gone = [&](const gateway_state& g) { return g.dead_since && now - *g.dead_since >= opt.resume; };
    std::erase_if(gateway_of, [&](const auto& held) {
      const auto g = gateways.find(held.second);
      if (g == gateways.end() || !gone(g->second)) return false;
      abandoned.push_back(held.first);
      return true;
    });
    std::erase_if(gateways, [&](const auto& g) { return gone(g.second); });
  }
  players_abandoned.fetch_add(abandoned.size(), std::memory_order_relaxed);
  for (player_id p : abandoned) w->submit(world_request::leave(p), {});
  give_up_handoffs(now);
}

void node_endpoint::impl::on_requests(std::string_view data) {
  auto batch = wire::decode_request_batch(data);
  if (!batch || !valid_name(batch->gateway)) {
    bad_batches.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  request_batches.fetch_add(1, std::memory_order_relaxed);
  requests.fetch_add(batch->requests.size(), std::memory_order_relaxed);
  auto gateway = std::make_shared<const std::string>(std::move(batch->gateway));
  {
    std::lock_guard lock(gateways_m);
    heard(*gateway, clock::now());
    for (const auto& r : batch->requests) {
      if (r.request.what == world_request::kind::leave)
        gateway_of.erase(r.request.player);
      else
        gateway_of[r.request.player] = *gateway;
    }
  }
  for (const auto& r : batch->requests) {
    if (!r.to.empty()) {
      hand_over(gateway, r);
      continue;
    }
    // A client's move or message goes straight to its line here too (world_port::to_line).
    w->to_line(r.request, [weak = weak_from_this(), gateway, ticket = r.ticket](world_result answer) {
      if (auto self = weak.lock()) self->answer(*gateway, ticket, std::move(answer));
    });
  }
}

// From the world's thread (and the journeys'): held for the linger, which the first of a batch arms
// on the endpoint's executor, so that a world tick's answers reach each gateway as one message.
// Handlers on the executor hold `this`: they run only on its thread, which stop() joins.
void node_endpoint::impl::answer(const std::string& gateway, std::uint64_t ticket, world_result r) {
  bool first = false;
  {
    std::lock_guard lock(answers_m);
    first = outbox.empty();
    outbox[gateway].push_back({ticket, std::move(r)});
  }
  if (!first) return;
  asio::post(io, [this] {
    linger.expires_after(answer_linger);
    linger.async_wait([this](boost::system::error_code) { flush_answers(); });
  });
}

void node_endpoint::impl::flush_answers() {
  std::unordered_map<std::string, std::vector<wire::answer_entry>> batch;
  {
    std::lock_guard lock(answers_m);
    batch = std::exchange(outbox, {});
  }
  for (auto& [gateway, entries] : batch) {
    answers.fetch_add(entries.size(), std::memory_order_relaxed);
    answer_batches.fetch_add(1, std::memory_order_relaxed);
    publish(subjects::answers(gateway), wire::encode(wire::answer_batch{node, epoch, std::move(entries)}));
  }
}

}  // namespace scenert::cluster
