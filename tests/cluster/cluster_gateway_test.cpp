// The gateway object: what `scenert gateway` runs between parsing its flags and the shutdown signal,
// against a real nats-server and scene nodes in this process.

#include <scenert/cluster/gateway.hpp>
#include <scenert/net/client.hpp>

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
  auto heard = link->subscribe("scenert.gateway.g.beat", [&](std::string_view, std::string_view,
                                                             std::string_view) { beats.fetch_add(1); });
  ASSERT_TRUE(heard);
  auto g = gateway::start(
      options_for(server.url(), std::make_shared<const scene_table>(scenert::test::small_table())));
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_NE((*g)->tcp_port(), 0);
  EXPECT_EQ((*g)->ws_port(), 0);
  EXPECT_GE((*g)->player_ids().first, 1);
  EXPECT_TRUE((*g)->stats().connected);
  EXPECT_TRUE(eventually([&] { return beats.load() >= 2; }, 10s)) << beats.load() << " beats heard";
  (*g)->stop();
  const int at_stop = beats.load();
  std::this_thread::sleep_for(1500ms);  // the scenario: a second and a half without a gateway thread
  EXPECT_EQ(beats.load(), at_stop);
  (*g)->stop();  // again: nothing
  EXPECT_EQ((*g)->stats().front.connections, 0u);
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

}  // namespace
}  // namespace scenert::cluster::test
