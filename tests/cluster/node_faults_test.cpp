// A gateway's requests when a node fails or is slow: an entry in flight to a node declared dead goes
// to a live node (the client waits, it is not refused), one whose answer was lost is found where its
// node placed it; a starting node is sent nothing; a claim a busy node did not answer is asked again;
// a journey its source gave up after the target placed the player ends with the front told where the
// player stands still; a start of a node declared dead is heard no more, and a journey onto it hands
// its player back to be placed again; a player standing on no node meanwhile is placed only by its entry.

#include <scenert/cluster/node_endpoint.hpp>
#include <scenert/cluster/node_lease.hpp>
#include <scenert/cluster/remote_world.hpp>
#include <scenert/cluster/wire.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <tuple>
#include <vector>

#include "gateway_fixture.hpp"

namespace scenert::cluster {
namespace {

using scenert::test::eventually;
using test::ask;
using test::claim;
using test::Gateways;
using test::two_hosts;

using namespace std::chrono_literals;
using kind = line_event::kind;

struct stands_on_log {
  std::mutex m;
  std::vector<std::tuple<player_id, line_handle, phase_id>> said;
  std::size_t count() {
    std::lock_guard lock(m);
    return said.size();
  }
  std::tuple<player_id, line_handle, phase_id> last() {
    std::lock_guard lock(m);
    return said.back();
  }
};

// A login in flight to a node that never carries it out: past its timeout the node is asked where the
// player stands ("not here": the entry waits for its node); declared dead meanwhile, the node's entry
// goes to the live node, answered once, the player placed there alone. Its other requests to the dead
// node are answered node_unavailable at once.
TEST_F(Gateways, AnEntryInFlightToANodeDeclaredDeadIsPlacedOnALiveNode) {
  two_hosts h(*link, nodes);  // b looks busy: entries go to a
  ASSERT_TRUE(h.ok);
  auto g = gateway(300ms);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(ask(*g, world_request::enter(10, 1)));  // 10 stands on a
  {
    std::lock_guard lock(h.on_a.m);
    h.on_a.stuck = true;  // a hears, and never carries out nor answers
  }
  auto entered = std::make_shared<std::promise<world_result>>();
  auto moved = std::make_shared<std::promise<world_result>>();
  g->submit(world_request::enter(20, 1), [entered](world_result r) { entered->set_value(std::move(r)); });
  g->submit(world_request::move(10, {2, 2}), [moved](world_result r) { moved->set_value(std::move(r)); });
  auto entry = entered->get_future();
  auto move = moved->get_future();
  ASSERT_TRUE(eventually([&] { return h.on_a.heard_of(20).size() == 1; }));
  g->poll(std::chrono::steady_clock::now() + 400ms);  // past the timeout: a is asked, the entry waits
  EXPECT_EQ(entry.wait_for(100ms), std::future_status::timeout);
  ASSERT_EQ(move.wait_for(1s), std::future_status::ready);  // a move is not waited for
  EXPECT_EQ(move.get().code(), world_errc::node_unavailable);

  ASSERT_TRUE(declare_dead(nodes, "a", h.lease_a->revision()));
  g->poll(std::chrono::steady_clock::now() + 2s);  // reads the nodes: a is dead
  ASSERT_EQ(entry.wait_for(5s), std::future_status::ready);
  const auto placed = entry.get();
  ASSERT_TRUE(placed) << placed.error().message;
  EXPECT_EQ(placed->line.line, 2u);  // b's line
  EXPECT_EQ(h.on_b.heard_of(20), std::vector<world_request::kind>{world_request::kind::enter});
  EXPECT_EQ(g->stats().sent_again, 1u);
  EXPECT_TRUE(ask(*g, world_request::move(20, {1, 1})));  // its requests go to b now
}

// A node started again under its name before anyone declared its previous start dead: the gateway
// sees the new epoch and loses the start it knew (its players placed again), once.
TEST_F(Gateways, ANodeStartedAgainUnderItsNameLosesItsPreviousStartsPlayers) {
  two_hosts h(*link, nodes);  // b looks busy: entries go to a
  ASSERT_TRUE(h.ok);
  std::mutex m;
  std::vector<std::pair<std::string, std::vector<player_id>>> lost;
  auto g = gateway(5s, [&](remote_world_options& o) {
    o.on_node_lost = [&](const std::string& node, std::vector<orphan> players) {
      std::vector<player_id> ids;
      for (const auto& orphaned : players) ids.push_back(orphaned.player);
      std::lock_guard lock(m);
      lost.emplace_back(node, std::move(ids));
    };
  });
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(ask(*g, world_request::enter(10, 1)));  // 10 stands on a
  auto again = node_lease::join(nodes, "a", 0);       // a's next start: epoch 2
  ASSERT_TRUE(again) << again.error().message;
  g->poll(std::chrono::steady_clock::now() + 2s);  // reads the nodes
  g->poll(std::chrono::steady_clock::now() + 4s);  // and again: the same start, not lost twice
  std::lock_guard lock(m);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].first, "a");
  EXPECT_EQ(lost[0].second, std::vector<player_id>{10});
  EXPECT_EQ(g->stats().nodes_lost, 1u);
}

// A node stopped, declared dead and let run again publishes its lines' events and answers views
// until it learns it is dead: the gateway, which placed its players elsewhere, hears none of it. Its
// next start (a new epoch, the same name and subjects) is heard.
TEST_F(Gateways, ANodeStartDeclaredDeadIsHeardNoMore) {
  auto lease = node_lease::join(nodes, "a", 0);  // epoch 1
  ASSERT_TRUE(lease) << lease.error().message;
  auto g = gateway();
  ASSERT_NE(g, nullptr);
  const std::string subject = "scenert.line.a.1.1";
  auto publish = [&](const wire::event_batch& b) { ASSERT_TRUE(link->publish(subject, wire::encode(b))); };
  const line_handle first{1, 1, 1}, second{1, 1, 2};
  publish({first, 0, 1, {{kind::entered, 1, {1, 1}, false}}, 1});
  ASSERT_EQ(front.wait_for(1).size(), 1u);
  ASSERT_TRUE(declare_dead(nodes, "a", lease->revision()));
  g->poll(std::chrono::steady_clock::now() + 2s);  // reads the nodes: a is dead, player 1 leaves
  auto got = front.wait_for(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].events.at(0).what, kind::left);

  // The dead start goes on: a batch, and views a gateway never asked it for (each would show
  // player 1 standing there again).
  publish({first, 0, 2, {{kind::moved, 1, {2, 1}, false}}, 1});
  wire::views stale{"a", {wire::view_state{first, 0, 2, {{kind::entered, 1, {2, 1}, false}}}}, 1};
  ASSERT_TRUE(link->publish("scenert.gateway.g.views", wire::encode(stale)));
  auto next = node_lease::join(nodes, "a", 0);  // epoch 2
  ASSERT_TRUE(next) << next.error().message;
  publish({second, 0, 1, {{kind::entered, 5, {3, 3}, false}}, next->record().epoch});
  got = front.wait_for(3);
  ASSERT_EQ(got.size(), 3u);  // the line's subject keeps the order: a stale batch would come first
  EXPECT_EQ(got[2].line, second);
  EXPECT_EQ(got[2].events.at(0).player, 5u);
  EXPECT_TRUE(eventually([&] { return g->stats().from_dead_starts == 2; }));
}

// A journey its source node gave up (the target did not answer in time) after the target had placed
// the player: the target's line shows the player entering, then leaving, while the line it never left
// holds it still. The gateway tells its front where the player stands (on_stands_on) once no line of
// the target holds it, whether the answer came before that line's leaving or after.
TEST_F(Gateways, AGivenUpJourneyTellsTheFrontTheLineItsPlayerStandsOnStill) {
  two_hosts h(*link, nodes);  // b hosts 40, a mate of another gateway
  ASSERT_TRUE(h.ok);
  stands_on_log log;
  auto g = gateway(5s, [&](remote_world_options& o) {
    o.journeys = true;
    o.on_stands_on = [&log](player_id p, line_handle l, phase_id ph) {
      std::lock_guard lock(log.m);
      log.said.emplace_back(p, l, ph);
    };
  });
  ASSERT_NE(g, nullptr);
  auto a_events = h.a.on_line_events();
  auto b_events = h.b.on_line_events();
  const line_handle line_a{1, 1, 1}, line_b{1, 2, 1};
  // Each batch a node publishes reaches the front's recorder: the gateway's lines have heard it.
  auto publish = [&](auto& events, line_handle l, line_event e) {
    const auto before = front.wait_for(0).size();
    events(l, 0, std::span<const line_event>(&e, 1));
    ASSERT_EQ(front.wait_for(before + 1).size(), before + 1);
  };
  for (const bool answer_first : {true, false}) {
    SCOPED_TRACE(answer_first ? "the answer first" : "the answer last");
    const player_id p = answer_first ? 10 : 11;
    ASSERT_TRUE(ask(*g, world_request::enter(p, 1)));  // on a (b looks busy)
    publish(a_events, line_a, {kind::entered, p, {3, 3}, false});
    {
      std::lock_guard lock(h.on_b.m);
      h.on_b.park = true;  // b places the player but never answers a: a gives up
    }
    auto joined = std::make_shared<std::promise<world_result>>();
    g->submit(world_request::join_team(p, 40), [joined](world_result r) { joined->set_value(std::move(r)); });
    ASSERT_TRUE(eventually([&] { return h.on_b.hosts().contains(p); }));
    publish(b_events, line_b, {kind::entered, p, {5, 5}, false});
    const auto said_before = log.count();
    if (!answer_first) publish(b_events, line_b, {kind::left, p, {}, false});
    h.a.poll(std::chrono::steady_clock::now() + 2s);  // given up: the gateway hears node_unavailable
    auto answer = joined->get_future();
    ASSERT_EQ(answer.wait_for(5s), std::future_status::ready);
    const auto j = answer.get();
    ASSERT_FALSE(j);
    EXPECT_EQ(j.code(), world_errc::node_unavailable);
    if (answer_first) {
      // Said before the answer, had it been said: b's line holds the player in the gateway's eyes.
      EXPECT_EQ(log.count(), said_before);
      publish(b_events, line_b, {kind::left, p, {}, false});
    }
    ASSERT_TRUE(eventually([&] { return log.count() == said_before + 1; }));
    EXPECT_EQ(log.last(), std::make_tuple(p, line_a, phase_id{0}));
    h.on_b.answer_parked();  // b's late answers: a gave the hand-over up, they change nothing
  }
}

// A journey (player 10 from a to b, where its mate 40 stands) whose answer came after the start
// where it left its player was declared dead: b, which placed it (`dies` "b"), or a, which kept it
// when b refused (`dies` "a"). Stopped, that start woke and carried out its part before it learnt
// it was dead; it is heard no more. The gateway hands the player to the front to be placed again,
// as if it had stood there when its node died, instead of leaving it on a node that is gone.
void journey_ends_on_a_dead_start(Gateways& t, const std::string& dies) {
  SCOPED_TRACE("declared dead: " + dies);
  two_hosts h(*t.link, t.nodes);
  ASSERT_TRUE(h.ok);
  std::mutex m;
  std::vector<std::pair<std::string, orphan>> lost;
  auto g = t.gateway(5s, [&](remote_world_options& o) {
    o.journeys = true;
    o.on_node_lost = [&](const std::string& node, std::vector<orphan> players) {
      std::lock_guard lock(m);
      for (auto& p : players) lost.emplace_back(node, p);
    };
  });
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(ask(*g, world_request::enter(10, 1)));  // on a (b looks busy)
  {
    std::lock_guard lock(h.on_b.m);
    h.on_b.park = true;         // b answers a only when told
    h.on_b.full = dies == "a";  // and refuses the player when a dies
  }
  auto joined = std::make_shared<std::promise<world_result>>();
  g->submit(world_request::join_team(10, 40), [joined](world_result r) { joined->set_value(std::move(r)); });
  ASSERT_TRUE(eventually([&] { return h.on_b.heard_of(10).size() == 1; }));
  auto& lease = dies == "a" ? h.lease_a : h.lease_b;
  ASSERT_TRUE(declare_dead(t.nodes, dies, lease->revision()));
  g->poll(std::chrono::steady_clock::now() + 2s);  // reads the nodes: 10 is on its way, not lost yet
  {
    std::lock_guard lock(m);
    EXPECT_TRUE(lost.empty());
  }
  h.on_b.answer_parked();  // the journey ends: a tells the gateway
  auto answer = joined->get_future();
  ASSERT_EQ(answer.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(answer.get().has_value(), dies == "b");
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(m);
    return !lost.empty();
  }));
  std::lock_guard lock(m);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].first, dies);
  EXPECT_EQ(lost[0].second.player, 10u);
  EXPECT_EQ(lost[0].second.scene, scene_id{1});  // where it stood: a town stays on its scene
  EXPECT_EQ(g->stats().players, 0u);             // routed nowhere until placed again
}

TEST_F(Gateways, AJourneyOntoATargetDeclaredDeadMeanwhileHandsItsPlayerBack) {
  journey_ends_on_a_dead_start(*this, "b");
}

TEST_F(Gateways, AJourneyRefusedByATargetWhileItsSourceWasDeclaredDeadHandsItsPlayerBack) {
  journey_ends_on_a_dead_start(*this, "a");
}

// A gateway whose player 10 stood on node a, declared dead since: 10 stands on no node.
std::unique_ptr<remote_world> with_its_node_dead(Gateways& t, two_hosts& h) {
  auto g = t.gateway();
  if (g == nullptr || !ask(*g, world_request::enter(10, 1)) ||  // 10 stands on a
      !declare_dead(t.nodes, "a", h.lease_a->revision()))
    return nullptr;
  g->poll(std::chrono::steady_clock::now() + 2s);  // reads the nodes: a is dead, 10 stands nowhere
  return g;
}

// A player whose node died stands on no node until its front has placed it again. A scene change it
// asks meanwhile is refused node_unavailable, not sent to a node (which would place it a second
// time, beside the placement under way); its entry is sent, and places it once.
TEST_F(Gateways, APlayerStandingOnNoNodeIsPlacedOnlyByItsEntry) {
  two_hosts h(*link, nodes);  // b looks busy: entries go to a
  ASSERT_TRUE(h.ok);
  auto g = with_its_node_dead(*this, h);
  ASSERT_NE(g, nullptr);
  for (const auto& q : {world_request::transfer(10, 2), world_request::join_team(10, 40),
                        world_request::enter_instance(10, 3, 0), world_request::move(10, {1, 1})}) {
    const auto refused = ask(*g, q);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.code(), world_errc::node_unavailable);
    EXPECT_NE(refused.error().message.find("stands on no node yet"), std::string::npos)
        << refused.error().message;
  }
  EXPECT_TRUE(h.on_b.heard_of(10).empty());
  EXPECT_EQ(g->stats().unplaced, 4u);
  ASSERT_TRUE(ask(*g, world_request::enter(10, 1)));  // placed again: on b, the live node
  EXPECT_EQ(h.on_b.heard_of(10), std::vector<world_request::kind>{world_request::kind::enter});
  EXPECT_TRUE(ask(*g, world_request::transfer(10, 1)));  // its requests follow it there
}

// A player placed again after its node died whose entry finds it on a live node already (a request
// of its own, taken over by that node, placed it first): the nodes are asked where it stands, the
// entry is answered with that place, and its requests go there from then on.
TEST_F(Gateways, AnEntryThatFindsItsPlayerPlacedAlreadyRoutesItThere) {
  two_hosts h(*link, nodes);  // b looks busy: entries go to a
  ASSERT_TRUE(h.ok);
  auto g = with_its_node_dead(*this, h);
  ASSERT_NE(g, nullptr);
  {
    std::lock_guard lock(h.on_b.m);
    h.on_b.players.insert(10);  // b placed it already
    h.on_b.strict_entry = true;
  }
  const auto entry = ask(*g, world_request::enter(10, 1));
  ASSERT_TRUE(entry) << entry.error().message;
  EXPECT_EQ(entry->line.line, 2u);                       // b's line
  EXPECT_TRUE(ask(*g, world_request::transfer(10, 1)));  // to b, not refused as standing nowhere
  EXPECT_EQ(h.on_b.heard_of(10),
            (std::vector<world_request::kind>{world_request::kind::enter, world_request::kind::transfer}));
  EXPECT_EQ(g->stats().unplaced, 0u);
}

// A node that placed a player whose answer never reached the gateway (dropped under load, or later
// than the timeout): the gateway asks it where the player stands and takes its word, instead of
// closing the client while the node holds its player.
TEST_F(Gateways, AnEntryWhoseAnswerWasLostIsFoundWhereItsNodePlacedIt) {
  struct mute_world final : world_port {
    std::atomic<int> heard{0};
    void submit(const world_request&, world_reply) override { ++heard; }  // placed; the answer is lost
  } world_a;
  ASSERT_TRUE(node_lease::join(nodes, "a", 0));
  node_endpoint a(*link, "a", 1);
  ASSERT_TRUE(
      a.start(world_a, test::answer_at_once([](player_id p) {
                return p == 5 ? location{location::state::in_line, {1, 1, 1}, {}, 0, 0, false} : location{};
              })));
  auto g = gateway(300ms);
  ASSERT_NE(g, nullptr);
  auto answer = std::make_shared<std::promise<world_result>>();
  auto f = answer->get_future();
  g->submit(world_request::enter(5, 1), [answer](world_result r) { answer->set_value(std::move(r)); });
  ASSERT_TRUE(eventually([&] { return world_a.heard.load() == 1; }));
  g->poll(std::chrono::steady_clock::now() + 400ms);  // past the answer's 300 ms: the poll's clock
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
  auto found = f.get();
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->line, (line_handle{1, 1, 1}));
  EXPECT_EQ(g->stats().players, 1u);
  EXPECT_EQ(g->stats().timeouts, 1u);
}

// A node joins before its world is built and listens only after: a request sent meanwhile would be
// lost and its client refused after the timeouts. Gateways send it nothing until its first beat.
TEST_F(Gateways, AStartingNodeIsSentNothingUntilItsFirstBeat) {
  auto lease = node_lease::join(nodes, "a", 0, {}, node_lease::listening::from_first_beat);
  ASSERT_TRUE(lease);
  EXPECT_TRUE(lease->record().starting);
  test::host_world world_a;
  auto heard = [&world_a] {
    std::lock_guard lock(world_a.m);
    return world_a.heard.size();
  };
  node_endpoint a(*link, "a", lease->record().epoch);
  ASSERT_TRUE(a.start(world_a));
  auto g = gateway(300ms);
  ASSERT_NE(g, nullptr);
  auto early = ask(*g, world_request::enter(1, 1));
  ASSERT_FALSE(early);
  EXPECT_EQ(early.code(), world_errc::node_unavailable);
  EXPECT_NE(early.error().message.find("no live scene node"), std::string::npos) << early.error().message;
  EXPECT_EQ(heard(), 0u);

  ASSERT_TRUE(lease->beat(0));
  EXPECT_FALSE(lease->record().starting);
  g->poll(std::chrono::steady_clock::now() + 2s);  // rereads the nodes
  ASSERT_TRUE(ask(*g, world_request::enter(2, 1)));
  EXPECT_EQ(heard(), 1u);
}

// A node too busy to answer a claim within its timeout may still hold the player: it is asked again
// (the test plays node "a": it lets the first claim go unanswered and answers the second), and the
// client gets its player back instead of a new one.
TEST_F(Gateways, ANodeSilentToAClaimIsAskedAgainBeforeThePlayerIsGivenUp) {
  ASSERT_TRUE(node_lease::join(nodes, "a", 0));
  std::atomic<int> asked{0};
  auto claims = link->subscribe(
      "scenert.node.a.claim", [&](std::string_view, std::string_view, std::string_view reply) {
        if (++asked == 1) return;  // busy: no answer in time
        (void)link->publish(std::string(reply),
                            wire::encode(wire::claim_answer{"a", placement{line_handle{1, 1, 1}, 0, 0}}));
      });
  ASSERT_TRUE(claims) << claims.error().message;
  auto sessions = link->bucket("scenert-sessions");
  ASSERT_TRUE(sessions) << sessions.error().message;
  auto named = [&](const char* name) {
    return [&, name](remote_world_options& o) {
      o.gateway = name;
      o.sessions = *sessions;
    };
  };
  auto g1 = gateway(5s, named("g1")), g2 = gateway(5s, named("g2"));
  ASSERT_TRUE(g1 && g2);
  const std::string dan(32, 'd');
  g1->remember(dan, 7, "dan", {});
  ASSERT_TRUE(eventually([&] { return sessions->get("token." + dan).has_value(); }));
  auto got = claim(*g2, dan);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->player, 7u);
  EXPECT_EQ(got->line, (line_handle{1, 1, 1}));
  EXPECT_EQ(asked.load(), 2);
  EXPECT_EQ(g2->stats().claims_refused, 0u);
}

}  // namespace
}  // namespace scenert::cluster
