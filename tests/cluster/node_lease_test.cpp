// Nodes' leases: epochs, beats, a silent node declared dead exactly once and fenced when it wakes.

#include <scenert/cluster/node_lease.hpp>

#include <algorithm>

#include <gtest/gtest.h>

#include "nats_server.hpp"

namespace scenert::cluster {
namespace {

using namespace std::chrono_literals;

TEST(HeartbeatWatch, ANodeIsSilentOnlyWhenItsRevisionStoodStillLongEnough) {
  heartbeat_watch w;
  heartbeat_watch::clock::time_point t0{};
  node_entry a{{"a", 1, 0, false, {}}, 10}, b{{"b", 1, 0, false, {}}, 11}, c{{"c", 1, 0, true, {}}, 12};
  w.saw({a, b, c}, t0);
  EXPECT_TRUE(w.silent(t0 + 2s, 3s).empty());
  a.revision = 20;  // a beat; b did not
  w.saw({a, b, c}, t0 + 2s);
  auto silent = w.silent(t0 + 3s, 3s);
  ASSERT_EQ(silent.size(), 1u);  // c is dead already: not silent, gone
  EXPECT_EQ(silent[0].record.name, "b");
  EXPECT_EQ(silent[0].revision, 11u);
  EXPECT_TRUE(w.silent(t0 + 5s - 1ns, 3s).size() == 1);
  EXPECT_EQ(w.silent(t0 + 5s, 3s).size(), 2u);  // a's beat at 2 s is 3 s old
}

// After a link outage nobody's silence counts before the restart's point: a node that reconnects
// after the watcher is not declared dead for the time it took.
TEST(HeartbeatWatch, AfterARestartSilenceCountsOnlyFromItsPoint) {
  heartbeat_watch w;
  heartbeat_watch::clock::time_point t0{};
  node_entry a{{"a", 1, 0, false, {}}, 10}, b{{"b", 1, 0, false, {}}, 11};
  w.saw({a, b}, t0);
  w.restart(t0 + 4s);  // the outage noticed at 1 s, dead_after 3 s
  w.saw({a, b}, t0 + 2s);
  EXPECT_TRUE(w.silent(t0 + 6s, 3s).empty());  // 3 s before 4 s would have been silent
  a.revision = 20;
  w.saw({a, b}, t0 + 6s);
  auto silent = w.silent(t0 + 7s, 3s);
  ASSERT_EQ(silent.size(), 1u);
  EXPECT_EQ(silent[0].record.name, "b");
  EXPECT_TRUE(w.silent(t0 + 9s - 1ns, 3s).size() == 1);
  EXPECT_EQ(w.silent(t0 + 9s, 3s).size(), 2u);
}

TEST(NodeLease, EachJoinTakesTheNextEpochAndFencesThePreviousOne) {
  test::nats_server server;
  auto [link, nodes] = test::open_bucket(server, "nodes");
  auto first = node_lease::join(nodes, "node-1", 0);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->record().epoch, 1u);
  ASSERT_TRUE(first->beat(7));
  EXPECT_EQ(first->record().load, 7u);

  auto second = node_lease::join(nodes, "node-1", 0);  // the same name restarted
  ASSERT_TRUE(second);
  EXPECT_EQ(second->record().epoch, 2u);
  auto old = first->beat(8);
  ASSERT_FALSE(old);
  EXPECT_EQ(old.code(), cluster_errc::fenced);
  EXPECT_NE(old.error().message.find("taken by epoch 2"), std::string::npos) << old.error().message;
  EXPECT_TRUE(second->beat(1));

  auto bad = node_lease::join(nodes, "no spaces", 0);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.code(), cluster_errc::bad_name);
  EXPECT_NE(bad.error().message.find("'no spaces'"), std::string::npos);
}

// The names a caller expects are read on their own when a listing leaves them out (a listing may miss
// a key written meanwhile): each record once, and a name nobody wrote is simply absent.
TEST(NodeLease, AnExpectedNameIsListedOnceAndAnUnknownOneNotAtAll) {
  test::nats_server server;
  auto [link, nodes] = test::open_bucket(server, "nodes");
  ASSERT_TRUE(node_lease::join(nodes, "a", 0));
  ASSERT_TRUE(node_lease::join(nodes, "b", 0));
  const std::vector<std::string> expected{"b", "gone"};
  auto listed = list_nodes(nodes, expected);
  ASSERT_TRUE(listed) << listed.error().message;
  std::vector<std::string> names;
  for (const auto& e : *listed) names.push_back(e.record.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b"}));
}

// A node hosting some scenes says which in its record, beat after beat; one hosting all says none.
TEST(NodeLease, ANodesScenesAreInItsRecord) {
  test::nats_server server;
  auto [link, nodes] = test::open_bucket(server, "nodes");
  auto towns = node_lease::join(nodes, "towns", 0, {1, 2});
  auto all = node_lease::join(nodes, "all", 0);
  ASSERT_TRUE(towns && all);
  ASSERT_TRUE(towns->beat(3));
  auto listed = list_nodes(nodes);
  ASSERT_TRUE(listed) << listed.error().message;
  ASSERT_EQ(listed->size(), 2u);
  for (const auto& e : *listed) {
    if (e.record.name == "towns") {
      EXPECT_EQ(e.record.scenes, (std::vector<scene_id>{1, 2}));
      EXPECT_TRUE(e.record.hosts(2));
      EXPECT_FALSE(e.record.hosts(3));
    } else {
      EXPECT_TRUE(e.record.scenes.empty());
      EXPECT_TRUE(e.record.hosts(3));
    }
  }
  auto raw = nodes.get("node.all");
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->value.find("scenes"), std::string::npos);  // as records written before they were
}

// Two watchers see node b silent and race to declare it: one wins. b, paused meanwhile, wakes and
// beats: fenced, with the reason. a, which kept beating, cannot be declared on a stale revision.
TEST(NodeLease, ASilentNodeIsDeclaredDeadOnceAndFencedWhenItWakes) {
  test::nats_server server;
  auto [link, nodes] = test::open_bucket(server, "nodes");
  auto a = node_lease::join(nodes, "a", 0);
  auto b = node_lease::join(nodes, "b", 0);
  ASSERT_TRUE(a && b);
  heartbeat_watch watch;
  auto t0 = heartbeat_watch::clock::now();
  watch.saw(*list_nodes(nodes), t0);
  const std::uint64_t a_seen = a->revision();
  ASSERT_TRUE(a->beat(3));
  watch.saw(*list_nodes(nodes), t0 + 2s);
  auto silent = watch.silent(t0 + 4s, 3s);
  ASSERT_EQ(silent.size(), 1u);
  EXPECT_EQ(silent[0].record.name, "b");

  auto one = declare_dead(nodes, "b", silent[0].revision);
  auto two = declare_dead(nodes, "b", silent[0].revision);
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_TRUE(one->record.dead);
  ASSERT_FALSE(two);
  EXPECT_EQ(two.code(), cluster_errc::conflict);

  auto woke = b->beat(0);
  ASSERT_FALSE(woke);
  EXPECT_EQ(woke.code(), cluster_errc::fenced);
  EXPECT_NE(woke.error().message.find("declared dead"), std::string::npos) << woke.error().message;

  EXPECT_EQ(declare_dead(nodes, "a", a_seen).code(), cluster_errc::conflict);  // a beat since
  EXPECT_TRUE(a->beat(4));
  auto listed = list_nodes(nodes);
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 2u);
  for (const auto& n : *listed) EXPECT_EQ(n.record.dead, n.record.name == "b");
}

}  // namespace
}  // namespace scenert::cluster
