// The table's lines across the nodes: an entering player (or one changing scenes) goes to the node
// of the line the scene's policy picks among every node's, so no node opens a line while another
// node's line has room; once every line is full, the next opens on the least-loaded node (or, by
// the gateway's setting, on the player's own).

#include <scenert/cluster/line_store.hpp>
#include <scenert/cluster/wire.hpp>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>

#include "gateway_fixture.hpp"
#include "node_in_process.hpp"

namespace scenert::cluster {
namespace {

using namespace std::chrono_literals;
using kind = line_event::kind;
using k = world_request::kind;
using scenert::test::eventually;
using test::ask;
using test::Gateways;
using test::two_hosts;

constexpr scene_id field = 10;

std::shared_ptr<const scene_table> field_of_two() {
  auto t = std::make_shared<scene_table>();
  scene_def d;
  d.id = field, d.name = "field", d.kind = scene_kind::field, d.capacity = 2, d.hard_capacity = 2;
  d.min_lines = 0, d.max_lines = 8, d.policy = allocation_policy::fill_first;
  t->scenes.push_back(d);
  return t;
}

// A node's line as its events tell the gateways, batch by batch.
struct fake_line {
  nats_link& link;
  std::string subject;
  line_handle line;
  std::uint64_t seq = 0;
  void publish(std::vector<line_event> events) {
    ASSERT_TRUE(link.publish(subject, wire::encode(wire::event_batch{line, 0, ++seq, std::move(events)})));
  }
};

// Node b looks busy (new players go to a by load alone) and serves the field's line 2.
TEST_F(Gateways, AnEntryGoesToALineWithRoomOnAnyNodeBeforeALineOpens) {
  two_hosts h(*link, nodes);
  ASSERT_TRUE(h.ok);
  auto g = gateway(5s, [](remote_world_options& o) { o.table = field_of_two(); });
  ASSERT_NE(g, nullptr);
  std::size_t heard = 0;
  auto publish = [&](fake_line& l, std::vector<line_event> events) {
    l.publish(std::move(events));
    ASSERT_EQ(front.wait_for(++heard).size(), heard);
  };
  fake_line b1{*link, "scenert.line.b.10.2", {field, 2, 1}};
  publish(b1, {{kind::entered, 40, {1, 1}, false}, {kind::entered, 900, {2, 2}, true}});  // 1 of 2

  ASSERT_TRUE(ask(*g, world_request::enter(10, field)));  // to b's line with room, not to idle a
  EXPECT_EQ(h.on_b.heard_of(10), std::vector<k>{k::enter});
  publish(b1, {{kind::entered, 10, {1, 1}, false}});      // 2 of 2: full
  ASSERT_TRUE(ask(*g, world_request::enter(11, field)));  // every line full: least-loaded a opens one
  EXPECT_EQ(h.on_a.heard_of(11), std::vector<k>{k::enter});
  // 11 counts on the line a answered (1) before its events show it: the next fills that line.
  ASSERT_TRUE(ask(*g, world_request::enter(15, field)));
  EXPECT_EQ(h.on_a.heard_of(15), std::vector<k>{k::enter});
  fake_line a1{*link, "scenert.line.a.10.1", {field, 1, 1}};
  publish(a1, {{kind::entered, 11, {1, 1}, false}, {kind::entered, 15, {1, 1}, false}});  // full too

  // 12 stands on a elsewhere; a seat frees on b's line: its scene change takes it there.
  ASSERT_TRUE(ask(*g, world_request::enter(12, 1)));
  ASSERT_EQ(h.on_a.heard_of(12), std::vector<k>{k::enter});
  publish(b1, {{kind::left, 10, {}, false}});
  ASSERT_TRUE(ask(*g, world_request::transfer(12, field)));
  EXPECT_EQ(h.on_b.heard_of(12), std::vector<k>{k::enter});
  EXPECT_TRUE(eventually([&] { return h.on_a.heard_of(12).size() >= 2; }));
  EXPECT_EQ(h.on_a.heard_of(12), (std::vector<k>{k::enter, k::leave}));

  // One seat, two players at once: the first is counted on the line until answered, so the
  // second goes where a line opens.
  publish(b1, {{kind::left, 40, {}, false}, {kind::entered, 12, {1, 1}, false}});  // 1 of 2
  auto first = std::make_shared<std::promise<world_result>>();
  auto second = std::make_shared<std::promise<world_result>>();
  g->submit(world_request::enter(13, field), [first](world_result r) { first->set_value(std::move(r)); });
  g->submit(world_request::enter(14, field), [second](world_result r) { second->set_value(std::move(r)); });
  ASSERT_TRUE(first->get_future().get());
  ASSERT_TRUE(second->get_future().get());
  EXPECT_EQ(h.on_b.heard_of(13), std::vector<k>{k::enter});
  EXPECT_EQ(h.on_a.heard_of(14), std::vector<k>{k::enter});
  const auto s = g->stats();
  EXPECT_EQ(s.entries_to_room, 4u);      // 10, 15, 12, 13
  EXPECT_EQ(s.entries_to_new_line, 2u);  // 11, 14
  EXPECT_EQ(s.journeys, 1u);
}

// A burst into a scene with no line: the players sent to open one fill it before the next opens, on
// the least-loaded node (both idle here): two on one node, the third on the other.
TEST_F(Gateways, ABurstFillsTheLineItOpensBeforeAnotherOpens) {
  two_hosts h(*link, nodes);
  ASSERT_TRUE(h.ok);
  ASSERT_TRUE(h.lease_b->beat(0));  // as idle as a
  auto g = gateway(5s, [](remote_world_options& o) { o.table = field_of_two(); });
  ASSERT_NE(g, nullptr);
  std::vector<std::shared_ptr<std::promise<world_result>>> answers;
  for (player_id p = 10; p < 13; ++p) {
    answers.push_back(std::make_shared<std::promise<world_result>>());
    g->submit(world_request::enter(p, field),
              [a = answers.back()](world_result r) { a->set_value(std::move(r)); });
  }
  for (auto& a : answers) ASSERT_TRUE(a->get_future().get());
  const auto on_a = h.on_a.hosts(), on_b = h.on_b.hosts();
  EXPECT_EQ(on_a, (std::set<player_id>{10, 11}));
  EXPECT_EQ(on_b, (std::set<player_id>{12, 40}));
  EXPECT_EQ(g->stats().entries_to_new_line, 2u);
  EXPECT_EQ(g->stats().entries_to_room, 1u);
}

// A party member's way home goes with it: handed over to its party's instance on another node, it
// names the scene it stood in; leaving the party, it goes back there by the lines, wherever they are.
TEST_F(Gateways, APartyMembersWayHomeCrossesNodesWithIt) {
  two_hosts h(*link, nodes);
  ASSERT_TRUE(h.ok);
  auto sessions = link->bucket("scenert-sessions");
  ASSERT_TRUE(sessions);
  ASSERT_TRUE(sessions->create("party.7.11", R"({"node":"b"})"));  // party 7's crypt lives on b
  auto table = std::make_shared<scene_table>(*field_of_two());
  scene_def crypt = table->scenes[0];
  crypt.id = 11, crypt.name = "crypt", crypt.kind = scene_kind::dungeon,
  crypt.instances = instance_mode::party;
  table->scenes.push_back(crypt);
  auto g = gateway(5s, [&](remote_world_options& o) {
    o.table = table;
    o.sessions = *sessions;
  });
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(ask(*g, world_request::enter(10, field)));  // no line heard: least-loaded a opens one
  ASSERT_TRUE(ask(*g, world_request::enter_instance(10, 11, 7)));
  std::vector<world_request> on_b;
  {
    std::lock_guard lock(h.on_b.m);
    on_b = h.on_b.heard;
  }
  ASSERT_EQ(on_b.size(), 1u);
  EXPECT_EQ(on_b[0].what, k::enter_instance);
  EXPECT_EQ(on_b[0].line.scene, field);  // the way home, for the world there

  // A seat on a's field line: the way home goes there, off b.
  fake_line a1{*link, "scenert.line.a.10.1", {field, 1, 1}};
  a1.publish({{kind::entered, 30, {1, 1}, false}});
  ASSERT_EQ(front.wait_for(1).size(), 1u);
  auto home = ask(*g, world_request::leave_party(10));
  ASSERT_TRUE(home) << home.error().message;
  EXPECT_EQ(home->line.scene, field);
  EXPECT_EQ(h.on_a.heard_of(10), (std::vector<k>{k::enter, k::leave, k::enter}));
  EXPECT_TRUE(eventually([&] { return h.on_b.heard_of(10).size() >= 2; }));
  EXPECT_EQ(h.on_b.heard_of(10), (std::vector<k>{k::enter_instance, k::leave}));
  EXPECT_EQ(g->stats().journeys, 2u);
  // Home again, its next scene change goes by the lines as anyone's.
  ASSERT_TRUE(ask(*g, world_request::move(10, {2, 2})));
  EXPECT_EQ(h.on_a.heard_of(10).back(), k::move);
}

// The field and a town (1) on node a, the crypt (11, its instances private) on node b: nodes for
// part of the table (`scenert run --hosts`). b names its lines 2.
struct split_nodes {
  test::host_world on_a, on_b;
  cluster_result<node_lease> lease_a, lease_b;
  node_endpoint a, b;
  bool ok = false;
  split_nodes(nats_link& link, kv_bucket& nodes)
      : lease_a(node_lease::join(nodes, "a", 0, {1, field})),
        lease_b(node_lease::join(nodes, "b", 0, {11})),
        a(link, "a", 1),
        b(link, "b", 1) {
    on_b.line = 2;
    ok = lease_a && lease_b &&
         a.start(on_a, test::answer_at_once([this](player_id p) { return on_a.where(p); })) &&
         b.start(on_b, test::answer_at_once([this](player_id p) { return on_b.where(p); }));
  }
};

std::shared_ptr<scene_table> split_table() {
  auto table = std::make_shared<scene_table>(*field_of_two());
  scene_def crypt = table->scenes[0];
  crypt.id = 11, crypt.name = "crypt", crypt.kind = scene_kind::dungeon,
  crypt.instances = instance_mode::party;
  scene_def town = table->scenes[0];
  town.id = 1, town.name = "town", town.kind = scene_kind::town;
  table->scenes.push_back(crypt);
  table->scenes.push_back(town);
  return table;
}

// Nodes that host part of the table (`scenert run --hosts`): a is the field's, b the crypt's. Every
// request that puts a player in a scene goes to a node hosting it, travelling there when the
// player's own does not: a scene change, a solo instance, a party's instance, the way home.
TEST_F(Gateways, PlayersGoOnlyToNodesHostingTheirScene) {
  split_nodes h(*link, nodes);
  ASSERT_TRUE(h.ok);
  auto& on_a = h.on_a;
  auto& on_b = h.on_b;
  auto table = split_table();
  auto g = gateway(5s, [&](remote_world_options& o) { o.table = table; });
  ASSERT_NE(g, nullptr);

  ASSERT_TRUE(ask(*g, world_request::enter(10, field)));  // only a hosts the field
  ASSERT_TRUE(ask(*g, world_request::transfer(10, 11)));  // its own instance: on b
  EXPECT_EQ(on_b.heard_of(10), std::vector<k>{k::enter});
  ASSERT_TRUE(ask(*g, world_request::leave_party(10)));  // home to the field: on a
  EXPECT_EQ(on_b.heard_of(10), (std::vector<k>{k::enter, k::leave}));
  EXPECT_TRUE(eventually([&] { return on_a.heard_of(10).size() >= 3; }));
  EXPECT_EQ(on_a.heard_of(10), (std::vector<k>{k::enter, k::leave, k::enter}));

  ASSERT_TRUE(ask(*g, world_request::enter(20, 11)));  // from nowhere, straight to b
  EXPECT_EQ(on_b.heard_of(20), std::vector<k>{k::enter});
  ASSERT_TRUE(ask(*g, world_request::leave_party(20)));  // home is the first town, which a hosts
  EXPECT_EQ(on_a.heard_of(20), std::vector<k>{k::enter});
  EXPECT_TRUE(eventually([&] { return on_b.heard_of(20).size() >= 2; }));
  EXPECT_EQ(on_b.heard_of(20), (std::vector<k>{k::enter, k::leave}));
  ASSERT_TRUE(ask(*g, world_request::enter(21, field)));
  ASSERT_TRUE(ask(*g, world_request::enter_instance(21, 11, 7)));  // a party's: on b, its way home named
  std::vector<world_request> heard;
  {
    std::lock_guard lock(on_b.m);
    for (const auto& q : on_b.heard)
      if (q.player == 21) heard.push_back(q);
  }
  ASSERT_EQ(heard.size(), 1u);
  EXPECT_EQ(heard[0].what, k::enter_instance);
  EXPECT_EQ(heard[0].line.scene, field);
  EXPECT_EQ(g->stats().journeys, 4u);
}

// A player claimed by another gateway (its client resumed there) while in its own instance on a
// dungeon node: leaving the party, it goes to the table's first town on a node hosting it.
TEST_F(Gateways, AClaimedPlayerInItsInstanceGoesHomeToANodeHostingTheTown) {
  split_nodes h(*link, nodes);
  ASSERT_TRUE(h.ok);
  auto& on_a = h.on_a;
  auto& on_b = h.on_b;
  on_b.where_scene = 11;
  auto sessions = link->bucket("scenert-sessions");
  ASSERT_TRUE(sessions);
  auto table = split_table();
  auto named = [&](const char* name) {
    return gateway(5s, [&, name](remote_world_options& o) {
      o.gateway = name;
      o.table = table;
      o.sessions = *sessions;
    });
  };
  auto g1 = named("g1"), g2 = named("g2");
  ASSERT_TRUE(g1 && g2);
  ASSERT_TRUE(ask(*g1, world_request::enter(30, 11)));  // its own instance, on b
  const std::string token(32, 'd');
  g1->remember(token, 30, "dee", {});
  EXPECT_TRUE(eventually([&] { return sessions->get("token." + token).has_value(); }));
  auto got = test::claim(*g2, token);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->line.scene, 11u);
  ASSERT_TRUE(ask(*g2, world_request::leave_party(30)));
  EXPECT_EQ(on_a.heard_of(30), std::vector<k>{k::enter});
  EXPECT_TRUE(eventually([&] { return on_b.heard_of(30).size() >= 2; }));
  EXPECT_EQ(on_b.heard_of(30), (std::vector<k>{k::enter, k::leave}));
}

// With lines opening on the player's node, a scene change when every line is full stays on the
// node the player stands on (no journey), though another node is less loaded.
TEST_F(Gateways, LinesMayOpenOnThePlayersOwnNode) {
  two_hosts h(*link, nodes);
  ASSERT_TRUE(h.ok);
  auto g = gateway(5s, [](remote_world_options& o) {
    o.table = field_of_two();
    o.open_lines_on = line_opening::player_node;
  });
  ASSERT_NE(g, nullptr);
  fake_line b1{*link, "scenert.line.b.10.2", {field, 2, 1}};
  b1.publish({{kind::entered, 40, {1, 1}, false}, {kind::entered, 41, {1, 1}, false}});  // full
  ASSERT_EQ(front.wait_for(1).size(), 1u);
  ASSERT_TRUE(ask(*g, world_request::enter(10, 1)));         // on a, by load
  ASSERT_TRUE(ask(*g, world_request::transfer(10, field)));  // a opens the line
  EXPECT_EQ(h.on_a.heard_of(10), (std::vector<k>{k::enter, k::transfer}));
  EXPECT_TRUE(h.on_b.heard_of(10).empty());
  EXPECT_EQ(g->stats().journeys, 0u);
  EXPECT_EQ(g->stats().entries_to_new_line, 1u);
}

// Real worlds on two nodes: twelve players entering a field of capacity four one after another fill
// three lines, as in one process, wherever their lines are; without the table the gateway deals
// them out by load and each node opens its own lines (four).
TEST(LineRouting, PlayersFillTheClustersLinesBeforeAnyNodeOpensAnother) {
  auto table = std::make_shared<scene_table>();
  table->maps.push_back(map_def{1, "meadow", 32, 32, 8, 8, 1, 1, {}});
  scene_def d;
  d.id = field, d.name = "field", d.kind = scene_kind::field, d.capacity = 4, d.hard_capacity = 4;
  d.min_lines = 0, d.max_lines = 8, d.map = 1, d.policy = allocation_policy::fill_first;
  table->scenes.push_back(d);
  auto warn = [](std::string_view what) { std::fprintf(stderr, "%.*s\n", int(what.size()), what.data()); };
  for (const bool by_lines : {true, false}) {
    SCOPED_TRACE(by_lines ? "by the lines" : "by load alone");
    test::nats_server server;
    std::vector<std::unique_ptr<test::node_in_process>> nodes;
    for (const char* name : {"a", "b"}) nodes.push_back(test::start_node(server, *table, name, 1, warn));
    auto [link, nodes_kv] = test::open_bucket(server, test::nodes_bucket, "gateway");
    std::mutex m;
    std::condition_variable cv;
    std::set<player_id> standing;  // players the gateway heard enter
    remote_world_options o;
    o.gateway = "g";
    o.on_line_events = [&](line_handle, phase_id, std::span<const line_event> events) {
      std::lock_guard lock(m);
      for (const auto& e : events)
        if (!e.monster && e.what == kind::entered) standing.insert(e.player);
      cv.notify_all();
    };
    if (by_lines) o.table = table;
    auto g = remote_world::start(*link, nodes_kv, std::move(o));
    ASSERT_TRUE(g) << g.error().message;
    for (player_id p = 1; p <= 12; ++p) {
      ASSERT_TRUE(test::ask(**g, world_request::enter(p, field)));
      std::unique_lock lock(m);  // heard before the next enters, as a client's pace allows
      ASSERT_TRUE(cv.wait_for(lock, 5s, [&] { return standing.contains(p); })) << "player " << p;
    }
    auto lines_kv = link->bucket(test::lines_bucket);
    ASSERT_TRUE(lines_kv);
    auto lines = line_store(*lines_kv).lines(field);
    ASSERT_TRUE(lines) << lines.error().message;
    std::map<std::string, int> open_on;
    for (const auto& l : *lines)
      if (l.record.state == line_state_in_cluster::open) ++open_on[l.record.node];
    // By the lines: a's line fills, b opens the second (fewer players sent), a the third. By load
    // alone (nobody polls the loads here, so the players sent alternate): two lines on each node.
    EXPECT_EQ(open_on, (by_lines ? std::map<std::string, int>{{"a", 2}, {"b", 1}}
                                 : std::map<std::string, int>{{"a", 2}, {"b", 2}}));
    g->reset();
    for (auto& n : nodes) n->endpoint->stop();
    for (auto& n : nodes) n->w->shutdown().wait();
  }
}

}  // namespace
}  // namespace scenert::cluster
