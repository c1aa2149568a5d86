// Gateways and nodes over a real nats-server: requests reach the player's node and come back in
// batches, a node that does not answer is node_unavailable, a line's events arrive in order, and a
// gateway that missed a batch (or came late) is given the difference from the node's views.

#include <scenert/cluster/node_endpoint.hpp>
#include <scenert/cluster/node_lease.hpp>
#include <scenert/cluster/player_ids.hpp>
#include <scenert/cluster/remote_world.hpp>
#include <scenert/cluster/wire.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "gateway_fixture.hpp"

namespace scenert::cluster {
namespace {

using scenert::test::eventually;
using test::ask;
using test::claim;
using test::Gateways;
using test::host_world;
using test::recorder;
using test::two_hosts;

using namespace std::chrono_literals;
using kind = line_event::kind;

// A node's world that places everyone on scene 1 line 1 and remembers what it was asked.
struct echo_world final : world_port {
  std::mutex m;
  std::vector<world_request> heard;
  void submit(const world_request& q, world_reply reply) override {
    {
      std::lock_guard lock(m);
      heard.push_back(q);
    }
    if (reply) reply(placement{line_handle{1, 1, 1}, 0, 0});
  }
  std::size_t count() {
    std::lock_guard lock(m);
    return heard.size();
  }
};

// Players a gateway was told another gateway took over.
struct let_go_list {
  std::mutex m;
  std::condition_variable cv;
  std::vector<player_id> players;
  std::function<void(player_id)> sink() {
    return [this](player_id p) {
      std::lock_guard lock(m);
      players.push_back(p);
      cv.notify_all();
    };
  }
  std::vector<player_id> wait_for(std::size_t n) {
    std::unique_lock lock(m);
    cv.wait_for(lock, 5s, [&] { return players.size() >= n; });
    return players;
  }
};

TEST_F(Gateways, EachPlayersRequestsGoToTheNodeThatPlacedIt) {
  echo_world world_a, world_b;
  auto lease_a = node_lease::join(nodes, "a", 0), lease_b = node_lease::join(nodes, "b", 0);
  ASSERT_TRUE(lease_a && lease_b);
  node_endpoint a(*link, "a", 1), b(*link, "b", 1);
  ASSERT_TRUE(a.start(world_a));
  ASSERT_TRUE(b.start(world_b));
  auto g = gateway();
  ASSERT_NE(g, nullptr);
  for (player_id p = 1; p <= 10; ++p) ASSERT_TRUE(ask(*g, world_request::enter(p, 1))) << p;
  // Equal loads: the players are dealt to both nodes.
  EXPECT_EQ(world_a.count(), 5u);
  EXPECT_EQ(world_b.count(), 5u);
  for (player_id p = 1; p <= 10; ++p) ASSERT_TRUE(ask(*g, world_request::move(p, {3, 4})));
  auto players_of = [](echo_world& w) {
    std::lock_guard lock(w.m);
    std::set<player_id> entered, moved;
    for (const auto& q : w.heard) (q.what == world_request::kind::enter ? entered : moved).insert(q.player);
    return std::pair{entered, moved};
  };
  for (auto* w : {&world_a, &world_b}) {
    auto [entered, moved] = players_of(*w);
    EXPECT_EQ(entered, moved);  // every move went where its player was placed
  }
  const auto s = g->stats();
  EXPECT_EQ(s.answers, 20u);
  EXPECT_EQ(s.players, 10u);
  EXPECT_LT(s.request_batches, s.requests + 1);
}

TEST_F(Gateways, NoLiveNodeOrASilentNodeIsNodeUnavailable) {
  auto g = gateway(300ms);
  ASSERT_NE(g, nullptr);
  auto none = ask(*g, world_request::enter(1, 1));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.code(), world_errc::node_unavailable);
  EXPECT_NE(none.error().message.find("no live scene node"), std::string::npos) << none.error().message;

  auto ghost = node_lease::join(nodes, "ghost", 0);  // a record, nobody serving it
  ASSERT_TRUE(ghost);
  g->poll(std::chrono::steady_clock::now() + 2s);  // rereads the nodes
  auto answer = std::make_shared<std::promise<world_result>>();
  auto f = answer->get_future();
  g->submit(world_request::enter(2, 1), [answer](world_result r) { answer->set_value(std::move(r)); });
  const auto sent = std::chrono::steady_clock::now();
  g->poll(sent + 400ms);  // past the answer's 300 ms (the poll's clock, no wait): its node is asked
  // An entry of a player standing nowhere waits for a live node that says nothing (a busy node may
  // still place it) until settle_within (30 s), asked again at each timeout.
  EXPECT_EQ(f.wait_for(100ms), std::future_status::timeout);
  ASSERT_TRUE(eventually([&] {
    g->poll(sent + 31s);
    return f.wait_for(10ms) == std::future_status::ready;
  }));
  auto silent = f.get();
  ASSERT_FALSE(silent);
  EXPECT_EQ(silent.code(), world_errc::node_unavailable);
  EXPECT_NE(silent.error().message.find("node ghost did not place it within 30 s"), std::string::npos)
      << silent.error().message;
  EXPECT_EQ(g->stats().timeouts, 1u);
}

// The test plays node "a" itself: it publishes batches on the line's subject and answers the views.
TEST_F(Gateways, AMissedBatchIsMadeGoodFromTheNodesViewsAndOrderHolds) {
  ASSERT_TRUE(node_lease::join(nodes, "a", 0));
  const line_handle line{1, 1, 1};
  const std::string subject = "scenert.line.a.1.1";
  std::mutex m;
  wire::views truth{"a", {}};
  auto views = link->subscribe("scenert.node.a.views",
                               [&](std::string_view, std::string_view, std::string_view reply) {
                                 std::lock_guard lock(m);
                                 (void)link->publish(std::string(reply), wire::encode(truth));
                               });
  ASSERT_TRUE(views);
  auto g = gateway();
  ASSERT_NE(g, nullptr);
  std::atomic<bool> done{false};
  std::thread loop([&] {  // the gateway's own loop: a line still waiting is asked for again
    while (!done) {
      g->poll(std::chrono::steady_clock::now());
      std::this_thread::sleep_for(50ms);  // the loop's period, as the gateway command's
    }
  });
  auto publish = [&](std::uint64_t seq, std::vector<line_event> events) {
    ASSERT_TRUE(link->publish(subject, wire::encode(wire::event_batch{line, 0, seq, std::move(events)})));
  };
  publish(1, {{kind::entered, 1, {1, 1}, false},
              {kind::entered, 2, {2, 2}, false},
              {kind::entered, 9, {4, 4}, true}});
  publish(2, {{kind::moved, 1, {1, 2}, false}});
  auto got = front.wait_for(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].events.size(), 3u);
  EXPECT_EQ(got[1].events[0].at, (grid::cell_point{1, 2}));

  // Batch 3 is lost (player 2 left, player 3 came); batch 4 moves player 1. The node's views say
  // where everyone stands after batch 4.
  {
    std::lock_guard lock(m);
    truth.lines = {wire::view_state{line,
                                    0,
                                    4,
                                    {{kind::entered, 1, {5, 5}, false},
                                     {kind::entered, 3, {7, 7}, false},
                                     {kind::entered, 9, {4, 4}, true}}}};
  }
  publish(4, {{kind::moved, 1, {5, 5}, false}});
  got = front.wait_for(3);
  ASSERT_EQ(got.size(), 3u);
  std::map<player_id, line_event> diff;
  for (const auto& e : got[2].events) diff[e.player] = e;
  ASSERT_EQ(diff.size(), 3u);  // the monster stood still: not in the difference
  EXPECT_EQ(diff[1].what, kind::moved);
  EXPECT_EQ(diff[1].at, (grid::cell_point{5, 5}));
  EXPECT_EQ(diff[2].what, kind::left);
  EXPECT_EQ(diff[3].what, kind::entered);
  EXPECT_EQ(diff[3].at, (grid::cell_point{7, 7}));

  publish(5, {{kind::left, 3, {}, false}});
  got = front.wait_for(4);
  ASSERT_EQ(got.size(), 4u);  // batch 4 (held, inside the views) was not applied twice
  EXPECT_EQ(got[3].events[0].what, kind::left);
  // Batch 4 shows the gap, unless the node answered the views request the gateway made at its start
  // only after its views had moved to batch 4 (a slow handler): then batch 4 came as old news.
  EXPECT_LE(g->stats().gaps, 1u);
  done = true;
  loop.join();
}

// A gateway too slow for its line events (its handler stalled, the library's pending limit reached)
// loses batches to the slow-consumer cut-off: it goes on answering its clients' requests meanwhile,
// and once it catches up its lines are made good from the node's views.
TEST_F(Gateways, ASlowGatewayCutOffByTheLibraryResyncsItsLinesAndDoesNotHang) {
  echo_world world;
  node_endpoint a(*link, "a", 1);
  auto events = a.on_line_events();
  ASSERT_TRUE(a.start(world));
  ASSERT_TRUE(node_lease::join(nodes, "a", 0));
  std::mutex m;
  std::condition_variable cv;
  bool stalled = true;
  std::map<player_id, grid::cell_point> seen;  // the front's view of the line, batch after batch
  remote_world_options o;
  o.gateway = "slow";
  o.max_pending_event_bytes = 16u << 10;
  o.on_line_events = [&](line_handle, phase_id, std::span<const line_event> batch) {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return !stalled; });
    for (const auto& e : batch) {
      if (e.what == kind::left)
        seen.erase(e.player);
      else
        seen[e.player] = e.at;
    }
  };
  auto g = remote_world::start(*link, nodes, std::move(o));
  ASSERT_TRUE(g) << g.error().message;
  std::atomic<bool> done{false};
  std::thread loop([&] {  // the gateway's own loop
    while (!done) {
      (*g)->poll(std::chrono::steady_clock::now());
      std::this_thread::sleep_for(50ms);  // the loop's period, as the gateway command's
    }
  });
  const line_handle line{2, 1, 1};
  // 3,000 batches of a line with 40 players walking: far past the 16 KB the gateway may hold.
  std::map<player_id, grid::cell_point> truth;
  for (std::uint32_t i = 0; i < 3000; ++i) {
    const player_id p = 1 + i % 40;
    const grid::cell_point at{i % 97, i % 89};
    truth[p] = at;
    events(line, 0, std::vector<line_event>{{i < 40 ? kind::entered : kind::moved, p, at, false}});
  }
  EXPECT_TRUE(ask(**g, world_request::enter(77, 1)));  // its requests are answered all the same
  {
    std::lock_guard lock(m);
    stalled = false;
  }
  cv.notify_all();
  const bool same = eventually(
      [&] {
        std::lock_guard lock(m);
        return seen == truth;
      },
      10s, 20ms);
  EXPECT_TRUE(same) << "the gateway's view of the line never caught up with the node's";
  const auto s = (*g)->stats();
  EXPECT_GT(s.dropped, 0u);  // the cut-off did drop batches
  EXPECT_GT(s.views_applied, 0u);
  done = true;
  loop.join();
}

// A node's endpoint: what its lines published is what its views say, and its answers reach the
// gateway that asked, one batch for a burst.
TEST_F(Gateways, ANodesViewsAreWhatItsLinesPublished) {
  echo_world world;
  node_endpoint a(*link, "a", 3);
  auto events = a.on_line_events();
  ASSERT_TRUE(a.start(world));
  const line_handle line{2, 5, 7};
  events(line, 0,
         std::vector<line_event>{{kind::entered, 1, {1, 1}, false}, {kind::entered, 2, {2, 2}, false}});
  events(line, 0, std::vector<line_event>{{kind::left, 2, {}, false}, {kind::moved, 1, {3, 3}, false}});
  events(line, 4, std::vector<line_event>{{kind::entered, 8, {6, 6}, true}});
  auto answer = link->request("scenert.node.a.views", {}, 2s);
  ASSERT_TRUE(answer) << answer.error().message;
  auto v = wire::decode_views(*answer);
  ASSERT_TRUE(v) << v.error().message;
  ASSERT_EQ(v->lines.size(), 2u);
  std::sort(v->lines.begin(), v->lines.end(), [](const auto& x, const auto& y) { return x.phase < y.phase; });
  EXPECT_EQ(v->lines[0].seq, 2u);
  ASSERT_EQ(v->lines[0].standing.size(), 1u);
  EXPECT_EQ(v->lines[0].standing[0].player, 1u);
  EXPECT_EQ(v->lines[0].standing[0].at, (grid::cell_point{3, 3}));
  EXPECT_EQ(v->lines[1].phase, 4u);
  EXPECT_TRUE(v->lines[1].standing[0].monster);

  std::mutex m;
  std::condition_variable cv;
  std::vector<wire::answer_batch> batches;
  auto answers = link->subscribe("scenert.gateway.t.answers",
                                 [&](std::string_view, std::string_view data, std::string_view) {
                                   auto b = wire::decode_answer_batch(data);
                                   std::lock_guard lock(m);
                                   if (b) batches.push_back(std::move(*b));
                                   cv.notify_all();
                                 });
  ASSERT_TRUE(answers);
  wire::request_batch asks{"t", {}};
  for (std::uint64_t t = 1; t <= 50; ++t) asks.requests.push_back({t, world_request::enter(t, 1)});
  ASSERT_TRUE(link->publish("scenert.node.a.requests", wire::encode(asks)));
  std::unique_lock lock(m);
  cv.wait_for(lock, 5s, [&] {
    std::size_t n = 0;
    for (const auto& b : batches) n += b.answers.size();
    return n == 50;
  });
  std::size_t n = 0;
  for (const auto& b : batches) {
    EXPECT_EQ(b.node, "a");
    EXPECT_EQ(b.epoch, 3u);
    n += b.answers.size();
  }
  EXPECT_EQ(n, 50u);
  EXPECT_LT(batches.size(), 10u);  // the echo answers at once: a burst of 50 leaves in a few batches
  // A batch that does not decode is counted, not answered.
  ASSERT_TRUE(link->publish("scenert.node.a.requests", "junk"));
  EXPECT_TRUE(eventually([&] { return a.stats().bad_batches != 0; }));
  EXPECT_EQ(a.stats().bad_batches, 1u);
}

TEST_F(Gateways, GatewaysTakeBlocksOfPlayerIdsNoneTwice) {
  auto first = take_player_ids(nodes, 1000);
  auto second = take_player_ids(nodes, 1000);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->first, 1);
  EXPECT_EQ(first->last, 1000);
  EXPECT_EQ(second->first, 1001);
  auto too_many = take_player_ids(nodes, INT32_MAX);
  ASSERT_FALSE(too_many);
  EXPECT_EQ(too_many.code(), cluster_errc::full);
  ASSERT_TRUE(nodes.update("ids.players", "twelve", nodes.get("ids.players")->revision));
  auto bad = take_player_ids(nodes, 10);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.code(), cluster_errc::bad_record);
  EXPECT_NE(bad.error().message.find("ids.players"), std::string::npos);
}

TEST_F(Gateways, AClientResumesOnAnotherGatewayWhichClaimsItsPlayerFromItsNode) {
  echo_world world_a;
  ASSERT_TRUE(node_lease::join(nodes, "a", 0));
  node_endpoint a(*link, "a", 1);
  // Node a hosts player 7 (in phase 3 of space 9 on scene 1's line 1) and player 9 (between lines
  // for its first three looks, then on line 2).
  std::atomic<int> looks{0};
  ASSERT_TRUE(a.start(world_a, test::answer_at_once([&looks](player_id p) {
                        if (p == 7) return location{location::state::in_line, {1, 1, 1}, {}, 9, 3, false};
                        if (p == 9 && ++looks <= 3)
                          return location{location::state::switching, {1, 1, 1}, {1, 2, 1}, 0, 0, false};
                        if (p == 9) return location{location::state::in_line, {1, 2, 1}, {}, 0, 0, false};
                        return location{};
                      })));
  // Node b holds a copy of player 7 (a gateway died between a journey's two steps).
  echo_world world_b;
  auto lease_b = node_lease::join(nodes, "b", 0);
  ASSERT_TRUE(lease_b && lease_b->beat(100));  // busy: the gateways place nobody there
  node_endpoint b(*link, "b", 1);
  ASSERT_TRUE(
      b.start(world_b, test::answer_at_once([](player_id p) {
                return p == 7 ? location{location::state::in_line, {2, 1, 1}, {}, 0, 0, false} : location{};
              })));
  auto sessions = link->bucket("scenert-sessions");
  ASSERT_TRUE(sessions) << sessions.error().message;
  let_go_list first_let_go, second_let_go;
  auto on = [&](const char* name, let_go_list& l) {
    return [&, name](remote_world_options& o) {
      o.gateway = name;
      o.sessions = *sessions;
      o.on_claimed_elsewhere = l.sink();
    };
  };
  auto g1 = gateway(5s, on("g1", first_let_go)), g2 = gateway(5s, on("g2", second_let_go));
  ASSERT_TRUE(g1 && g2);
  ASSERT_TRUE(ask(*g1, world_request::enter(7, 1)));
  ASSERT_TRUE(ask(*g1, world_request::enter(9, 1)));
  const std::string ann(32, 'a'), bob(32, 'b'), cat(32, 'c');
  g1->remember(ann, 7, "ann", {});
  g1->remember(bob, 8, "bob", {});  // no node hosts player 8
  g1->remember(cat, 9, "cat", {});
  auto remembered = [&](const std::string& t) {
    return eventually([&] { return sessions->get("token." + t).has_value(); });
  };
  ASSERT_TRUE(remembered(ann) && remembered(bob) && remembered(cat));

  auto got = claim(*g2, ann);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->player, 7u);
  EXPECT_EQ(got->name, "ann");
  EXPECT_EQ(got->line, (line_handle{1, 1, 1}));
  EXPECT_EQ(got->space, 9u);
  EXPECT_EQ(got->phase, 3u);
  EXPECT_EQ(first_let_go.wait_for(1), std::vector<player_id>{7});  // g1 lets it go
  ASSERT_TRUE(eventually([&] { return world_b.count() != 0; }));
  {
    std::lock_guard lock(world_b.m);  // the copy on b is let go
    ASSERT_EQ(world_b.heard.size(), 1u);
    EXPECT_EQ(world_b.heard[0].what, world_request::kind::leave);
    EXPECT_EQ(world_b.heard[0].player, 7u);
  }
  // From now on its requests go from g2 to its node.
  const auto heard_before = world_a.count();
  ASSERT_TRUE(ask(*g2, world_request::move(7, {2, 2})));
  EXPECT_EQ(world_a.count(), heard_before + 1);
  EXPECT_EQ(g2->stats().players, 1u);
  EXPECT_EQ(g1->stats().players, 1u);  // player 9 only
  // Claimed again by the gateway that has it: the record names g2 already, nobody else is told.
  ASSERT_TRUE(claim(*g2, ann));
  // A player between two lines is claimed once it got there.
  auto moving = claim(*g2, cat);
  ASSERT_TRUE(moving) << moving.error().message;
  EXPECT_EQ(moving->line, (line_handle{1, 2, 1}));
  EXPECT_EQ(looks.load(), 4);

  // No node hosts it: refused, and its token is void.
  auto nowhere = claim(*g2, bob);
  ASSERT_FALSE(nowhere);
  EXPECT_EQ(nowhere.code(), world_errc::not_in_scene);
  EXPECT_NE(nowhere.error().message.find("player 8: on no live scene node"), std::string::npos)
      << nowhere.error().message;
  EXPECT_TRUE(eventually([&] { return !sessions->get("token." + bob); }));
  EXPECT_EQ(sessions->get("token." + bob).code(), cluster_errc::not_found);
  // Tokens nobody gave out, or not tokens at all.
  EXPECT_EQ(claim(*g2, std::string(32, 'f')).code(), world_errc::not_in_scene);
  EXPECT_EQ(claim(*g2, "../../x").code(), world_errc::not_in_scene);
  EXPECT_EQ(g2->stats().claims, 3u);
  EXPECT_EQ(g2->stats().claims_refused, 3u);
  EXPECT_EQ(g1->stats().claimed_elsewhere, 2u);
  EXPECT_TRUE(second_let_go.wait_for(0).empty());

  // Forgotten (the player left the world): nobody can claim it.
  g2->forget(ann);
  EXPECT_TRUE(eventually([&] { return !sessions->get("token." + ann); }));
  EXPECT_EQ(claim(*g1, ann).code(), world_errc::not_in_scene);
}

// A gateway that falls silent: past gateway_dead_after it is dead, and its players nobody claimed
// within resume leave the world; one claimed meanwhile by another gateway stays. The node's clock
// is the poll's: no sleeping.
TEST_F(Gateways, ASilentGatewaysPlayersLeaveUnlessClaimedWithinResume) {
  echo_world world_a;
  ASSERT_TRUE(node_lease::join(nodes, "a", 0));
  node_endpoint a(*link, "a", 1, node_endpoint_options{1s, 1s});
  ASSERT_TRUE(
      a.start(world_a, test::answer_at_once([](player_id p) {
                return p == 2 ? location{location::state::in_line, {1, 1, 1}, {}, 0, 0, false} : location{};
              })));
  {
    auto g1 = gateway(5s, [](remote_world_options& o) { o.gateway = "g1"; });
    ASSERT_TRUE(g1);
    ASSERT_TRUE(ask(*g1, world_request::enter(1, 1)));
    ASSERT_TRUE(ask(*g1, world_request::enter(2, 1)));
    EXPECT_EQ(a.stats().gateways, 1u);
  }  // g1 is gone: no beat, no request from now on
  const auto t0 = std::chrono::steady_clock::now();
  auto leaves = [&] {
    std::lock_guard lock(world_a.m);
    std::vector<player_id> out;
    for (const auto& q : world_a.heard)
      if (q.what == world_request::kind::leave) out.push_back(q.player);
    return out;
  };
  a.poll(t0 + 500ms);
  EXPECT_EQ(a.stats().gateways_lost, 0u);
  a.poll(t0 + 1500ms);
  EXPECT_EQ(a.stats().gateways_lost, 1u);
  EXPECT_TRUE(leaves().empty());  // its players wait for their clients to resume elsewhere
  // Player 2's client resumed on g2, which claims it.
  auto answer = link->request("scenert.node.a.claim", wire::encode(wire::claim{2, "g2"}), 2s);
  ASSERT_TRUE(answer) << answer.error().message;
  auto claimed = wire::decode_claim_answer(*answer);
  ASSERT_TRUE(claimed && claimed->result);
  a.poll(t0 + 2600ms);
  EXPECT_EQ(leaves(), std::vector<player_id>{1});
  EXPECT_EQ(a.stats().players_abandoned, 1u);
  EXPECT_EQ(a.stats().gateways_lost, 2u);  // g2 has not beaten either: its wait starts now
}

// Journeys: a team join to a mate on another node takes the player there (the target places it, the
// old node lets it go), a mate this gateway does not know is looked for on the other nodes, the
// requests made on the way follow the player, and a target that refuses leaves it where it was.
TEST_F(Gateways, ATeamJoinToAMateOnAnotherNodeTakesThePlayerThere) {
  using k = world_request::kind;
  two_hosts h(*link, nodes);
  ASSERT_TRUE(h.ok);
  auto& on_a = h.on_a;
  auto& on_b = h.on_b;
  auto g = gateway(5s, [](remote_world_options& o) { o.journeys = true; });
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(ask(*g, world_request::enter(10, 1)));
  ASSERT_TRUE(ask(*g, world_request::enter(11, 1)));
  ASSERT_TRUE(ask(*g, world_request::enter(12, 1)));
  EXPECT_EQ(on_a.hosts(), (std::set<player_id>{10, 11, 12}));

  // 40 is nobody this gateway knows: a says no such mate, b has it.
  ASSERT_TRUE(ask(*g, world_request::join_team(10, 40)));
  EXPECT_EQ(on_b.heard_of(10), std::vector<k>{k::join_team});
  EXPECT_TRUE(eventually([&] { return on_a.heard_of(10).size() >= 3; }));
  EXPECT_EQ(on_a.heard_of(10), (std::vector<k>{k::enter, k::join_team, k::leave}));

  // 10 is on b now, and known: 11 goes to it; its move made on the way waits and follows it to b.
  auto joined = std::make_shared<std::promise<world_result>>();
  g->submit(world_request::join_team(11, 10), [joined](world_result r) { joined->set_value(std::move(r)); });
  ASSERT_TRUE(ask(*g, world_request::move(11, {5, 5})));
  ASSERT_TRUE(joined->get_future().get());
  EXPECT_EQ(on_b.heard_of(11), (std::vector<k>{k::join_team, k::move}));
  EXPECT_TRUE(eventually([&] { return on_a.heard_of(11).size() >= 2; }));
  EXPECT_EQ(on_a.heard_of(11), (std::vector<k>{k::enter, k::leave}));

  // b refuses: 12 stays on a, and its requests go on there.
  {
    std::lock_guard lock(on_b.m);
    on_b.full = true;
  }
  auto refused = ask(*g, world_request::join_team(12, 10));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.code(), world_errc::line_full);
  ASSERT_TRUE(ask(*g, world_request::move(12, {1, 1})));
  EXPECT_EQ(on_a.heard_of(12), (std::vector<k>{k::enter, k::move}));
  EXPECT_EQ(on_a.hosts(), (std::set<player_id>{12}));
  EXPECT_EQ(on_b.hosts(), (std::set<player_id>{10, 11, 40}));
  const auto s = g->stats();
  EXPECT_EQ(s.journeys, 2u);
  EXPECT_EQ(s.journeys_failed, 1u);
}

// A party's instance lives on one node: a member standing on another node travels there, and two
// members entering at once through two gateways from two nodes end on one node as well.
TEST_F(Gateways, APartysMembersEnterItsInstanceOnOneNodeWhereverTheyStand) {
  using k = world_request::kind;
  two_hosts h(*link, nodes);
  ASSERT_TRUE(h.ok);
  auto sessions = link->bucket("scenert-sessions");
  ASSERT_TRUE(sessions);
  auto named = [&](const char* name) {
    return gateway(5s, [&, name](remote_world_options& o) {
      o.gateway = name;
      o.sessions = *sessions;
    });
  };
  auto g1 = named("g1"), g2 = named("g2");
  ASSERT_TRUE(g1 && g2);
  constexpr scene_id dungeon = 5;
  // 10 and 11 stand on a (b looks busy); 20 and 21 go to b, to its player 40.
  for (player_id p : {10, 11}) ASSERT_TRUE(ask(*g1, world_request::enter(p, 1)));
  for (player_id p : {20, 21}) {
    ASSERT_TRUE(ask(*g2, world_request::enter(p, 1)));
    ASSERT_TRUE(ask(*g2, world_request::join_team(p, 40)));
  }
  EXPECT_EQ(h.on_b.hosts(), (std::set<player_id>{20, 21, 40}));

  ASSERT_TRUE(ask(*g1, world_request::enter_instance(10, dungeon, 7)));  // party 7's instance: on a
  auto record = sessions->get("party.7.5");
  ASSERT_TRUE(record) << record.error().message;
  EXPECT_EQ(record->value, R"({"node":"a"})");
  ASSERT_TRUE(ask(*g2, world_request::enter_instance(20, dungeon, 7)));  // 20 travels from b to a
  EXPECT_EQ(h.on_b.heard_of(20), (std::vector<k>{k::join_team, k::leave}));
  EXPECT_TRUE(h.on_a.hosts().contains(20));
  EXPECT_FALSE(h.on_b.hosts().contains(20));

  // Party 8: 11 on a and 21 on b enter at once; whoever recorded first, both end on one node.
  auto first = std::make_shared<std::promise<world_result>>();
  auto second = std::make_shared<std::promise<world_result>>();
  g1->submit(world_request::enter_instance(11, dungeon, 8),
             [first](world_result r) { first->set_value(std::move(r)); });
  g2->submit(world_request::enter_instance(21, dungeon, 8),
             [second](world_result r) { second->set_value(std::move(r)); });
  ASSERT_TRUE(first->get_future().get());
  ASSERT_TRUE(second->get_future().get());
  // The one that travelled leaves its first node.
  EXPECT_TRUE(eventually([&] { return h.on_a.hosts().contains(11) != h.on_b.hosts().contains(21); }));
  const auto on_a = h.on_a.hosts(), on_b = h.on_b.hosts();
  EXPECT_TRUE((on_a.contains(11) && on_a.contains(21) && !on_b.contains(21)) ||
              (on_b.contains(11) && on_b.contains(21) && !on_a.contains(11)))
      << "party 8 split across the nodes";
}

// A node's late answer to a request made before its player travelled on (a move answered after the
// journey's end) leaves the player's route where the journey took it.
TEST_F(Gateways, AnAnswerFromTheNodeAPlayerLeftDoesNotRouteItBack) {
  using k = world_request::kind;
  two_hosts h(*link, nodes);
  ASSERT_TRUE(h.ok);
  auto& on_a = h.on_a;
  auto& on_b = h.on_b;
  auto g = gateway();
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(ask(*g, world_request::enter(10, 1)));
  {
    std::lock_guard lock(on_a.m);
    on_a.park_moves = true;
  }
  g->submit(world_request::move(10, {1, 1}), {});  // a answers it only after the journey
  ASSERT_TRUE(ask(*g, world_request::join_team(10, 40)));
  EXPECT_EQ(on_b.hosts(), (std::set<player_id>{10, 40}));
  const auto answered = g->stats().answers;
  on_a.answer_parked();
  EXPECT_TRUE(eventually([&] { return g->stats().answers != answered; }));
  ASSERT_GT(g->stats().answers, answered);  // the late answer reached the gateway
  ASSERT_TRUE(ask(*g, world_request::move(10, {2, 2})));
  EXPECT_EQ(on_b.heard_of(10), (std::vector<k>{k::join_team, k::move}));
  EXPECT_EQ(on_a.heard_of(10), (std::vector<k>{k::enter, k::move, k::join_team, k::leave}));
}

// The node a player stands on sees its journey through with the target, so a gateway that sent
// the request and died leaves the player in one place: on the target when it placed it, else where
// it was (a target that answers too late lets it go again).
TEST_F(Gateways, NodesSeeAJourneyThroughWithoutTheGatewayThatAskedForIt) {
  using k = world_request::kind;
  host_world on_a, on_b;
  node_endpoint a(*link, "a", 1), b(*link, "b", 1);
  ASSERT_TRUE(a.start(on_a, test::answer_at_once([&](player_id p) { return on_a.where(p); })));
  ASSERT_TRUE(b.start(on_b, test::answer_at_once([&](player_id p) { return on_b.where(p); })));
  {
    std::scoped_lock lock(on_a.m, on_b.m);
    on_a.players = {10, 11, 12};
    on_b.players = {40};
  }
  // The gateway "gone" asks and is never there to hear: only its answers' subject is watched.
  std::mutex m;
  std::map<std::uint64_t, world_result> answers;
  auto sub = link->subscribe("scenert.gateway.gone.answers",
                             [&](std::string_view, std::string_view data, std::string_view) {
                               auto batch = wire::decode_answer_batch(data);
                               ASSERT_TRUE(batch) << batch.error().message;
                               std::lock_guard lock(m);
                               for (auto& e : batch->answers)
                                 answers.insert_or_assign(e.ticket, std::move(e.result));
                             });
  ASSERT_TRUE(sub);
  std::atomic<int> confirmations{0};  // releases b confirmed to a
  auto confirmed = link->subscribe("scenert.node.a.released", [&](std::string_view, std::string_view,
                                                                  std::string_view) { ++confirmations; });
  ASSERT_TRUE(confirmed);
  auto send = [&](std::uint64_t ticket, const world_request& q, std::string to) {
    ASSERT_TRUE(link->publish("scenert.node.a.requests",
                              wire::encode(wire::request_batch{"gone", {{ticket, q, std::move(to)}}})));
  };
  auto answered = [&](std::uint64_t ticket) -> std::optional<world_result> {
    auto find = [&]() -> std::optional<world_result> {
      std::lock_guard lock(m);
      auto it = answers.find(ticket);
      return it != answers.end() ? std::optional(it->second) : std::nullopt;
    };
    (void)eventually([&] { return find().has_value(); });
    return find();
  };

  // Placed on b, so off a.
  send(1, world_request::join_team(10, 40), "b");
  auto moved = answered(1);
  ASSERT_TRUE(moved && *moved);
  EXPECT_TRUE(eventually([&] { return !on_a.hosts().contains(10); }));
  EXPECT_EQ(on_a.heard_of(10), std::vector<k>{k::leave});
  EXPECT_EQ(on_b.heard_of(10), std::vector<k>{k::join_team});
  EXPECT_EQ(on_a.hosts(), (std::set<player_id>{11, 12}));
  EXPECT_EQ(on_b.hosts(), (std::set<player_id>{10, 40}));

  // A node nobody serves never answers: given up at the poll after its second, the player stays.
  send(2, world_request::join_team(11, 40), "c");
  ASSERT_TRUE(eventually([&] { return a.stats().handoffs_out == 2; }));  // a heard it and asked c
  a.poll(std::chrono::steady_clock::now() + 2s);
  auto unserved = answered(2);
  ASSERT_TRUE(unserved);
  ASSERT_FALSE(*unserved);
  EXPECT_EQ(unserved->code(), world_errc::node_unavailable);
  EXPECT_EQ(on_a.heard_of(11), std::vector<k>{});

  // b places 12 but answers only after a gave up: released, b lets it go; 12 never left a.
  {
    std::lock_guard lock(on_b.m);
    on_b.park = true;
  }
  send(3, world_request::join_team(12, 40), "b");
  EXPECT_TRUE(eventually([&] { return !on_b.heard_of(12).empty(); }));
  ASSERT_EQ(on_b.heard_of(12), std::vector<k>{k::join_team});
  a.poll(std::chrono::steady_clock::now() + 2s);
  auto late = answered(3);
  ASSERT_TRUE(late);
  EXPECT_EQ(late->code(), world_errc::node_unavailable);
  // The release reaches b before its world answers: b confirms it to a once it let the player go.
  EXPECT_TRUE(eventually([&] { return confirmations.load() >= 1; }));
  on_b.answer_parked();
  EXPECT_TRUE(eventually([&] { return !on_b.hosts().contains(12); }));
  EXPECT_EQ(on_b.heard_of(12), (std::vector<k>{k::join_team, k::leave}));
  EXPECT_EQ(on_a.heard_of(12), std::vector<k>{});
  EXPECT_EQ(on_a.hosts(), (std::set<player_id>{11, 12}));
  EXPECT_EQ(on_b.hosts(), (std::set<player_id>{10, 40}));
  const auto s = a.stats();
  EXPECT_EQ(s.handoffs_out, 3u);
  EXPECT_EQ(s.handoffs_failed, 2u);
  EXPECT_EQ(b.stats().handoffs_in, 2u);
}

// A hand-over given up is released at its target until the target confirms: a release said just
// as the server came back may reach a node not subscribed again yet, which would keep a copy of the
// player. The test plays the target, b: it hears the releases and confirms only the second.
TEST_F(Gateways, AGivenUpHandOversReleaseIsSaidAgainUntilItsTargetConfirmsIt) {
  host_world on_a;
  on_a.players = {10};
  node_endpoint a(*link, "a", 1);
  ASSERT_TRUE(a.start(on_a, test::answer_at_once([&](player_id p) { return on_a.where(p); })));
  std::mutex m;
  std::condition_variable cv;
  int arrivals = 0, confirmations = 0;
  std::vector<std::pair<std::string, std::string>> releases;  // (reply subject, message)
  auto counter = [&](int& n) {
    return [&m, &cv, &n](std::string_view, std::string_view, std::string_view) {
      std::lock_guard lock(m);
      ++n;
      cv.notify_all();
    };
  };
  auto arrive = link->subscribe("scenert.node.b.arrive", counter(arrivals));
  auto confirmed = link->subscribe("scenert.node.a.released", counter(confirmations));
  auto release = link->subscribe("scenert.node.b.release",
                                 [&](std::string_view, std::string_view data, std::string_view reply) {
                                   std::lock_guard lock(m);
                                   releases.emplace_back(std::string(reply), std::string(data));
                                   cv.notify_all();
                                 });
  ASSERT_TRUE(arrive && release && confirmed);
  auto heard = [&](auto done) {
    std::unique_lock lock(m);
    return cv.wait_for(lock, 5s, done);
  };
  ASSERT_TRUE(
      link->publish("scenert.node.a.requests",
                    wire::encode(wire::request_batch{"g", {{1, world_request::join_team(10, 40), "b"}}})));
  ASSERT_TRUE(heard([&] { return arrivals == 1; }));

  const auto t0 = std::chrono::steady_clock::now();
  a.poll(t0 + 2s);  // given up: 10 stays on a, b is told to let it go
  ASSERT_TRUE(heard([&] { return releases.size() == 1; }));
  a.poll(t0 + 2100ms);  // too soon to say it again
  a.poll(t0 + 2300ms);  // unconfirmed: said again
  ASSERT_TRUE(heard([&] { return releases.size() == 2; }));
  EXPECT_EQ(releases[1], releases[0]);
  EXPECT_EQ(a.stats().releases_again, 1u);

  std::pair<std::string, std::string> last;
  {
    std::lock_guard lock(m);
    last = releases.back();
  }
  ASSERT_TRUE(link->publish(last.first, last.second));  // b confirms, as a node does
  ASSERT_TRUE(heard([&] { return confirmations == 1; }));
  // a's own subscription hears it too.
  ASSERT_TRUE(eventually([&] { return a.stats().releases_unconfirmed == 0; }));
  a.poll(t0 + 2600ms);
  a.poll(t0 + 2900ms);
  // A negative: a third release, had a said one in those polls, reaches the test within this pause.
  std::this_thread::sleep_for(100ms);
  {
    std::lock_guard lock(m);
    EXPECT_EQ(releases.size(), 2u);
  }
  EXPECT_EQ(a.stats().releases_again, 1u);
  EXPECT_EQ(on_a.hosts(), std::set<player_id>{10});
}

// A journey whose answer never came while its nodes could not be asked (the server restarting)
// waits for them: the player's route stays and its requests are held until a node tells where it
// stands. Before, a silent pair meant "nowhere": the route was dropped with the player on a node.
TEST_F(Gateways, AJourneyItsNodesCannotTellAboutWaitsForThemAndKeepsThePlayersRoute) {
  using k = world_request::kind;
  host_world on_a, on_b;
  on_b.players.insert(40);
  on_b.line = 2;
  auto lease_a = node_lease::join(nodes, "a", 0), lease_b = node_lease::join(nodes, "b", 0);
  ASSERT_TRUE(lease_a && lease_b && lease_b->beat(100));  // b looks busy: entries go to a
  auto a = std::make_unique<node_endpoint>(*link, "a", 1);
  node_endpoint b(*link, "b", 1);
  ASSERT_TRUE(a->start(on_a, test::answer_at_once([&](player_id p) { return on_a.where(p); })));
  ASSERT_TRUE(b.start(on_b, test::answer_at_once([&](player_id p) { return on_b.where(p); })));
  auto g = gateway(500ms, [](remote_world_options& o) { o.journeys = true; });
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(ask(*g, world_request::enter(10, 1)));
  ASSERT_TRUE(ask(*g, world_request::enter(11, 1)));
  ASSERT_TRUE(ask(*g, world_request::join_team(10, 40)));  // 10 on b, known there

  a.reset();  // a hears nothing and answers nothing, yet its record says it lives
  auto joined = std::make_shared<std::promise<world_result>>();
  auto moved = std::make_shared<std::promise<world_result>>();
  g->submit(world_request::join_team(11, 10), [joined](world_result r) { joined->set_value(std::move(r)); });
  g->submit(world_request::move(11, {3, 3}), [moved](world_result r) { moved->set_value(std::move(r)); });
  auto join = joined->get_future();
  auto move = moved->get_future();
  auto poll_until = [&](auto ready,
                        std::chrono::milliseconds most) {  // the gateway's poll, as its app runs it
    return eventually(
        [&] {
          g->poll(std::chrono::steady_clock::now());
          return ready();
        },
        most, 20ms);
  };
  auto answered = [&] { return join.wait_for(0ms) == std::future_status::ready; };
  poll_until([&] { return g->stats().timeouts > 0; }, 3s);
  ASSERT_EQ(g->stats().timeouts, 1u);  // the journey's answer is overdue: its nodes are asked
  poll_until(answered, 3s);            // asked again and again: a says nothing, b has not got it
  EXPECT_FALSE(answered()) << "settled while a could not say where 11 stands";
  EXPECT_EQ(move.wait_for(0ms), std::future_status::timeout);
  EXPECT_EQ(on_b.heard_of(11), std::vector<k>{});

  a = std::make_unique<node_endpoint>(*link, "a", 1);  // back: 11 never left it
  ASSERT_TRUE(a->start(on_a, test::answer_at_once([&](player_id p) { return on_a.where(p); })));
  poll_until(answered, 10s);
  ASSERT_TRUE(answered());
  auto j = join.get();
  ASSERT_FALSE(j);
  EXPECT_EQ(j.code(), world_errc::node_unavailable);
  ASSERT_EQ(move.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(move.get());
  EXPECT_EQ(on_a.heard_of(11), (std::vector<k>{k::enter, k::move}));
  EXPECT_EQ(on_b.heard_of(11), std::vector<k>{});
  const auto s = g->stats();
  EXPECT_EQ(s.timeouts, 1u);
  EXPECT_EQ(s.journeys_failed, 1u);
}

}  // namespace
}  // namespace scenert::cluster
