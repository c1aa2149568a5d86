#pragma once
// What the gateway tests share: fake node worlds that keep who they host, a front that records the
// line events it is handed, and a fixture with a nats-server and a gateway on it.

#include <scenert/cluster/node_endpoint.hpp>
#include <scenert/cluster/node_lease.hpp>
#include <scenert/cluster/remote_world.hpp>

#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <vector>

#include "../eventually.hpp"
#include "nats_server.hpp"

namespace scenert::cluster::test {

using namespace std::chrono_literals;

inline constexpr const char* gateway_nodes_bucket = "scenert-nodes";

// A node's world that keeps who it hosts: enters and team joins (to a mate it hosts) place, leaves
// take off, moves of players it does not host are not_in_scene; a placement names the request's scene
// (scene 1 when it names none) and the world's `line`. `full` refuses every join.
// A locator answering at once from `where` (the tests' worlds know where their players are).
template <class Where>
player_locator answer_at_once(Where where) {
  return
      [where = std::move(where)](player_id p, unique_function<void(location)> answer) { answer(where(p)); };
}

struct host_world final : world_port {
  std::mutex m;
  std::set<player_id> players;
  std::vector<world_request> heard;
  std::uint32_t line = 1;    // the line id its placements name
  scene_id where_scene = 1;  // the scene where() says its players stand in
  bool full = false;
  bool park = false;          // answers wait for answer_parked() (a slow world)
  bool park_moves = false;    // only the moves' answers wait
  bool stuck = false;         // requests are heard, never carried out nor answered (a stuck world)
  bool strict_entry = false;  // an entry of a player it holds is refused already_in_scene
  std::vector<std::pair<world_reply, world_result>> parked;
  void submit(const world_request& q, world_reply reply) override {
    world_result r = placement{line_handle{q.scene != 0 ? q.scene : 1, line, 1}, 0, 0};
    {
      std::unique_lock lock(m);
      heard.push_back(q);
      if (stuck) return;
      using k = world_request::kind;
      if (strict_entry && q.what == k::enter && players.contains(q.player)) {
        r = fail(world_errc::already_in_scene, "already here");
      } else if (q.what == k::enter || q.what == k::enter_line || q.what == k::enter_instance) {
        players.insert(q.player);
      } else if (q.what == k::join_team && full) {
        r = fail(world_errc::line_full, "full");
      } else if (q.what == k::join_team && !players.contains(q.mate)) {
        r = fail(world_errc::teammate_not_found, "no such mate here");
      } else if (q.what == k::join_team) {
        players.insert(q.player);
      } else if (q.what == k::leave) {
        players.erase(q.player);
      } else if (!players.contains(q.player)) {
        r = fail(world_errc::not_in_scene, "not here");
      }
      if (park || (park_moves && q.what == k::move)) {
        parked.emplace_back(std::move(reply), std::move(r));
        return;
      }
    }
    if (reply) reply(std::move(r));
  }
  void answer_parked() {
    std::vector<std::pair<world_reply, world_result>> now;
    {
      std::lock_guard lock(m);
      park = park_moves = false;
      now = std::exchange(parked, {});
    }
    for (auto& [reply, r] : now)
      if (reply) reply(std::move(r));
  }
  location where(player_id p) {
    std::lock_guard lock(m);
    return players.contains(p) ? location{location::state::in_line, {where_scene, line, 1}, {}, 0, 0, false}
                               : location{};
  }
  std::set<player_id> hosts() {
    std::lock_guard lock(m);
    return players;
  }
  // What it heard about one player, by kind.
  std::vector<world_request::kind> heard_of(player_id p) {
    std::lock_guard lock(m);
    std::vector<world_request::kind> out;
    for (const auto& q : heard)
      if (q.player == p) out.push_back(q.what);
    return out;
  }
};

// What a gateway handed its front, batch by batch.
struct recorder {
  struct batch {
    line_handle line;
    phase_id phase;
    std::vector<line_event> events;
  };
  std::mutex m;
  std::condition_variable cv;
  std::vector<batch> got;
  std::function<void(line_handle, phase_id, std::span<const line_event>)> sink() {
    return [this](line_handle l, phase_id p, std::span<const line_event> e) {
      std::lock_guard lock(m);
      got.push_back({l, p, {e.begin(), e.end()}});
      cv.notify_all();
    };
  }
  // The batches once there are `n` (at most 5 s).
  std::vector<batch> wait_for(std::size_t n) {
    std::unique_lock lock(m);
    cv.wait_for(lock, 5s, [&] { return got.size() >= n; });
    return got;
  }
};

// A claim's answer (at most 10 s).
inline result<claimed_player, world_errc> claim(world_port& w, std::string_view token) {
  auto answer = std::make_shared<std::promise<result<claimed_player, world_errc>>>();
  auto f = answer->get_future();
  w.claim(token, [answer](result<claimed_player, world_errc> r) { answer->set_value(std::move(r)); });
  if (f.wait_for(10s) != std::future_status::ready)
    return fail(world_errc::shutting_down, "no answer in 10 s");
  return f.get();
}

inline world_result ask(world_port& w, const world_request& q) {
  auto answer = std::make_shared<std::promise<world_result>>();
  auto f = answer->get_future();
  w.submit(q, [answer](world_result r) { answer->set_value(std::move(r)); });
  if (f.wait_for(5s) != std::future_status::ready) return fail(world_errc::shutting_down, "no answer in 5 s");
  return f.get();
}

struct Gateways : ::testing::Test {
  nats_server server;
  std::unique_ptr<nats_link> link;
  kv_bucket nodes = [this] {
    auto [l, b] = open_bucket(server, gateway_nodes_bucket);
    link = std::move(l);
    return b;
  }();
  recorder front;

  std::unique_ptr<remote_world> gateway(std::chrono::milliseconds timeout = 5s,
                                        std::function<void(remote_world_options&)> more = {}) {
    remote_world_options o;
    o.gateway = "g";
    o.answer_timeout = timeout;
    o.on_line_events = front.sink();
    if (more) more(o);
    auto w = remote_world::start(*link, nodes, std::move(o));
    EXPECT_TRUE(w) << w.error().message;
    return w ? std::move(w).value() : nullptr;
  }
};

// Nodes a and b over worlds that keep who they host; b looks busy, so new players go to a, and
// hosts player 40, of another gateway.
struct two_hosts {
  host_world on_a, on_b;
  cluster_result<node_lease> lease_a, lease_b;
  node_endpoint a, b;
  bool ok = false;
  two_hosts(nats_link& link, kv_bucket& nodes)
      : lease_a(node_lease::join(nodes, "a", 0)),
        lease_b(node_lease::join(nodes, "b", 0)),
        a(link, "a", 1),
        b(link, "b", 1) {
    on_b.players.insert(40);
    on_b.line = 2;  // line ids are the cluster's: no two nodes place on one
    ok = lease_a && lease_b && lease_b->beat(100) &&
         a.start(on_a, answer_at_once([this](player_id p) { return on_a.where(p); })) &&
         b.start(on_b, answer_at_once([this](player_id p) { return on_b.where(p); }));
  }
};

}  // namespace scenert::cluster::test
