// The gateway object: what `scenert gateway` runs between parsing its flags and the shutdown signal,
// against a real nats-server and scene nodes in this process.

#include <scenert/cluster/gateway.hpp>
#include <scenert/net/client.hpp>
#include <scenert/net/map_blocks.hpp>

#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>

#include "../eventually.hpp"
#include "../scene/fixture.hpp"
#include "node_in_process.hpp"

namespace scenert::cluster::test {
namespace {

using namespace std::chrono_literals;

using scenert::test::eventually;

gateway_options options_for(const std::string& url, std::shared_ptr<const scene_table> table) {
  gateway_options o;
  o.name = "g";
  o.cluster = url;
  o.table = std::move(table);
  o.front.tcp_host = "127.0.0.1";
  o.front.tcp_port = 0;
  o.warn = [](std::string_view what) { ADD_FAILURE() << "warned: " << what; };
  return o;
}

TEST(ClusterGateway, NamesTheClusterItCannotReach) {
  const std::string url = fmt::format("nats://127.0.0.1:{}", free_port());
  auto g =
      gateway::start(options_for(url, std::make_shared<const scene_table>(scenert::test::small_table())));
  ASSERT_FALSE(g);
  EXPECT_EQ(g.code(), gateway_errc::cluster);
  EXPECT_NE(g.error().message.find("--cluster " + url), std::string::npos) << g.error().message;
}

TEST(ClusterGateway, BeatsOnItsOwnTimerUntilItStops) {
  nats_server server;
  auto [link, nodes] = open_bucket(server, nodes_bucket);
  std::atomic<int> beats{0};
  std::mutex m;
  std::string subject;
  auto heard =
      link->subscribe("scenert.gateway.*.beat", [&](std::string_view s, std::string_view, std::string_view) {
        std::lock_guard lock(m);
        subject = s;
        beats.fetch_add(1);
      });
  ASSERT_TRUE(heard);
  auto g = gateway::start(
      options_for(server.url(), std::make_shared<const scene_table>(scenert::test::small_table())));
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_NE((*g)->tcp_port(), 0);
  EXPECT_EQ((*g)->ws_port(), 0);
  EXPECT_GE((*g)->player_ids().first, 1);
  EXPECT_TRUE((*g)->stats().connected);
  EXPECT_TRUE(eventually([&] { return beats.load() >= 2; }, 10s)) << beats.load() << " beats heard";
  {
    std::lock_guard lock(m);  // the nodes know this start as its name and its first player id
    EXPECT_EQ(subject, fmt::format("scenert.gateway.g-{}.beat", (*g)->player_ids().first));
  }
  (*g)->stop();
  const int at_stop = beats.load();
  std::this_thread::sleep_for(1500ms);  // the scenario: a second and a half without a gateway thread
  EXPECT_EQ(beats.load(), at_stop);
  (*g)->stop();  // again: nothing
  EXPECT_EQ((*g)->stats().front.connections, 0u);
}

// A gateway started again under its name (after a crash, in a rolling update) is a new gateway to
// the nodes: they hold its predecessor's players for their clients to resume, then let them go, as
// for any gateway that died; under the bare name, the new start's beats would keep them for good.
TEST(ClusterGateway, AGatewayStartedAgainUnderItsNameIsANewGatewayToTheNodes) {
  nats_server server;
  auto table = std::make_shared<const scene_table>(scenert::test::small_table());
  auto node = start_node(server, *table, "a", 1, [](std::string_view) {});
  auto first = gateway::start(options_for(server.url(), table));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_TRUE(eventually([&] { return node->endpoint->stats().gateways == 1; }, 10s));
  (*first)->stop();
  auto second = gateway::start(options_for(server.url(), table));
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_NE((*second)->player_ids().first, (*first)->player_ids().first);
  EXPECT_TRUE(eventually([&] { return node->endpoint->stats().gateways == 2; }, 10s))
      << node->endpoint->stats().gateways << " gateways heard";
  (*second)->stop();
}

TEST(ClusterGateway, RefusesANameWithNoRoomForItsStartsPlayerId) {
  auto o =
      options_for("nats://127.0.0.1:1", std::make_shared<const scene_table>(scenert::test::small_table()));
  o.name = std::string(max_gateway_name + 1, 'g');
  auto g = gateway::start(std::move(o));
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("1-53 letters"), std::string::npos) << g.error().message;
}

// A node declared dead: its town's player is placed again in the town (a dungeon's would go to the
// landing scene).
TEST(ClusterGateway, PlacesADeadNodesTownPlayersAgainOnTheirScene) {
  nats_server server;
  auto table = std::make_shared<const scene_table>(scenert::test::small_table());
  std::vector<std::unique_ptr<node_in_process>> hosts;
  hosts.push_back(start_node(server, *table, "a", 1, [](std::string_view) {}));
  std::mutex m;
  std::vector<std::string> warned;
  auto o = options_for(server.url(), table);
  o.warn = [&](std::string_view what) {
    std::lock_guard lock(m);
    warned.emplace_back(what);
  };
  auto g = gateway::start(std::move(o));
  ASSERT_TRUE(g) << g.error().message;
  auto c = net::client::connect("127.0.0.1", (*g)->tcp_port());
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_TRUE((*c)->send(net::login{"ann", ""}));
  ASSERT_TRUE(eventually([&] { return (*g)->stats().world.players == 1; }, 10s));
  hosts.push_back(start_node(server, *table, "b", 1, [](std::string_view) {}));
  auto [watcher, watched] = open_bucket(server, nodes_bucket, "watcher");
  auto seen = list_nodes(watched);
  ASSERT_TRUE(seen);
  for (const auto& e : *seen) {
    if (e.record.name == "a") {
      ASSERT_TRUE(declare_dead(watched, "a", e.revision));
    }
  }
  ASSERT_TRUE(eventually([&] { return (*g)->stats().world.nodes_lost == 1; }, 10s));
  EXPECT_EQ((*g)->stats().world.players_orphaned, 1u);
  (*g)->stop();
  std::lock_guard lock(m);
  const std::string said =
      "gateway g: node a was declared dead; 1 of its players placed again (1 on their "
      "scene, 0 in the landing scene)";
  EXPECT_NE(std::find(warned.begin(), warned.end(), said), warned.end())
      << fmt::format("warned: {}", fmt::join(warned, " | "));
}

// The next 1006 of `scene` a client reads through the gateway.
net::scene_info info_of(net::client& c, scene_id scene) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    auto m = c.receive(1s);
    if (!m) continue;
    if (auto* i = std::get_if<net::scene_info>(&m.value()); i && i->scene == scene) return *i;
  }
  ADD_FAILURE() << "no 1006 of scene " << scene;
  return {};
}

// The gateway is a front on a remote world: the same rule holds, a map's blocks once per connection
// and none for a map the client announced.
TEST(ClusterGateway, SendsAMapsBlocksOncePerConnectionAsAFrontDoes) {
  nats_server server;
  auto t = scenert::test::small_table();
  t.maps.push_back(map_def{2, "field map", 32, 32, 8, 8, 1, 1, {cell_rect{5, 5, 3, 3}}});
  for (auto& d : t.scenes)
    if (d.id == scenert::test::field_id) d.map = 2;
  auto table = std::make_shared<const scene_table>(std::move(t));
  auto node = start_node(server, *table, "a", 1, [](std::string_view) {});
  auto g = gateway::start(options_for(server.url(), table));
  ASSERT_TRUE(g) << g.error().message;
  auto c = net::client::connect("127.0.0.1", (*g)->tcp_port());
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_TRUE((*c)->send(net::login{"ann", ""}));
  const auto town = info_of(**c, scenert::test::town_id);
  EXPECT_FALSE(town.blocks_omitted);
  EXPECT_TRUE(net::decode_blocks(32, 32, town.block_rows, town.blocked).has_value());
  ASSERT_TRUE((*c)->send(net::request{1, net::request_kind::transfer, scenert::test::field_id, 0, 0, 0}));
  EXPECT_FALSE(info_of(**c, scenert::test::field_id).blocks_omitted);  // a map not sent yet
  ASSERT_TRUE((*c)->send(net::request{2, net::request_kind::transfer, scenert::test::town_id, 0, 0, 0}));
  const auto again = info_of(**c, scenert::test::town_id);
  EXPECT_TRUE(again.blocks_omitted);
  EXPECT_EQ(again.map_digest, town.map_digest);
  auto later = net::client::connect("127.0.0.1", (*g)->tcp_port());
  ASSERT_TRUE(later) << later.error().message;
  ASSERT_TRUE((*later)->send(net::login{"bob", "", {town.map_digest}}));
  EXPECT_TRUE(info_of(**later, scenert::test::town_id).blocks_omitted);
  (*g)->stop();
}

}  // namespace
}  // namespace scenert::cluster::test
