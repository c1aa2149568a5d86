// The cluster's lines: max_lines across nodes racing, generations as fencing tokens, and a dead
// node's lines taken from it.

#include <scenert/cluster/line_store.hpp>

#include <gtest/gtest.h>

#include <set>

#include "nats_server.hpp"

namespace scenert::cluster {
namespace {

constexpr scene_id dungeon = 10;

// A scene as the table gives it to the store.
scene_def scene_of(scene_id id, std::uint32_t max_lines, std::uint32_t capacity = 20) {
  scene_def d;
  d.id = id, d.max_lines = max_lines, d.capacity = capacity, d.hard_capacity = capacity;
  return d;
}

// A server with a lines bucket, and two nodes `a` and `b` that joined the cluster.
struct two_nodes {
  test::nats_server server;
  std::pair<std::unique_ptr<nats_link>, kv_bucket> opened = test::open_bucket(server, "lines");
  kv_bucket& lines = opened.second;
  cluster_result<kv_bucket> nodes = opened.first->bucket("nodes");
  cluster_result<node_lease> a = node_lease::join(*nodes, "a", 0);
  cluster_result<node_lease> b = node_lease::join(*nodes, "b", 0);
  [[nodiscard]] bool ok() const { return nodes && a && b; }
};

// Three nodes, each with its own connection, open lines of one scene as fast as they can: exactly
// max_lines open cluster-wide, each id once, and every other attempt is `full`.
TEST(LineStore, MaxLinesHoldsAcrossNodesRacing) {
  test::nats_server server;
  constexpr std::uint32_t max_lines = 5;
  struct node {
    std::unique_ptr<nats_link> link;
    std::optional<node_lease> lease;
    std::optional<line_store> store;
    std::vector<held_line> held;
    int full = 0;
    std::string error;
  };
  std::vector<node> nodes(3);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    auto [link, kv] = test::open_bucket(server, "lines", fmt::format("n{}", i));
    auto nb = link->bucket("nodes");
    ASSERT_TRUE(nb);
    auto lease = node_lease::join(*nb, fmt::format("n{}", i), 0);
    ASSERT_TRUE(lease);
    nodes[i].link = std::move(link);
    nodes[i].lease.emplace(std::move(lease).value());
    nodes[i].store.emplace(std::move(kv));
  }
  std::vector<std::thread> threads;
  for (auto& n : nodes)
    threads.emplace_back([&n] {
      for (int k = 0; k < 4; ++k) {
        auto line = n.store->open(scene_of(dungeon, max_lines), n.lease->record());
        if (line)
          n.held.push_back(std::move(line).value());
        else if (line.code() == cluster_errc::full)
          ++n.full;
        else
          n.error = line.error().message;
      }
    });
  for (auto& t : threads) t.join();
  std::set<std::uint32_t> ids;
  std::size_t opened = 0;
  for (auto& n : nodes) {
    EXPECT_EQ(n.error, "");
    for (auto& h : n.held) {
      ids.insert(h.record.line);
      EXPECT_EQ(h.record.generation, 1u);
      EXPECT_EQ(h.record.node, n.lease->record().name);
    }
    opened += n.held.size();
  }
  EXPECT_EQ(opened, max_lines);
  EXPECT_EQ(ids.size(), max_lines);
  EXPECT_EQ(nodes[0].full + nodes[1].full + nodes[2].full, 12 - static_cast<int>(max_lines));

  // A closed line opens again for whoever asks, one generation on; its old holder is fenced.
  node* owner = nullptr;
  for (auto& n : nodes)
    if (!n.held.empty()) owner = &n;
  ASSERT_NE(owner, nullptr);
  held_line old = owner->held.front();
  ASSERT_TRUE(owner->store->close(owner->held.front()));
  node& other = owner == &nodes[0] ? nodes[1] : nodes[0];
  auto again = other.store->open(scene_of(dungeon, max_lines), other.lease->record());
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->record.line, old.record.line);
  EXPECT_EQ(again->record.generation, 2u);
  auto stale = owner->store->set_players(old, 3);
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.code(), cluster_errc::fenced);
  EXPECT_TRUE(other.store->set_players(*again, 3));
  auto listed = other.store->lines(dungeon);
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->size(), max_lines);
}

// A store passes over the ids it read as served without asking again; one freed meanwhile by another
// node is found once nothing else is free, so `full` still means full.
TEST(LineStore, IdsReadAsServedArePassedOverUntilNoneElseIsFree) {
  two_nodes c;
  ASSERT_TRUE(c.ok());
  auto& a = c.a;
  auto& b = c.b;
  line_store on_a(c.lines), on_b(c.lines);
  const scene_def four = scene_of(dungeon, 4);
  auto a1 = on_a.open(four, a->record());
  auto a2 = on_a.open(four, a->record());
  auto b3 = on_b.open(four, b->record());  // b reads 1 and 2 as served
  ASSERT_TRUE(a1 && a2 && b3);
  EXPECT_EQ(b3->record.line, 3u);
  ASSERT_TRUE(on_a.close(*a1));
  auto b4 = on_b.open(four, b->record());  // 1 is passed over: b read it as served
  ASSERT_TRUE(b4);
  EXPECT_EQ(b4->record.line, 4u);
  auto b1 = on_b.open(four, b->record());  // nothing else free: every id read again
  ASSERT_TRUE(b1) << b1.error().message;
  EXPECT_EQ(b1->record.line, 1u);
  EXPECT_EQ(b1->record.generation, 2u);
  auto none = on_b.open(four, b->record());
  ASSERT_FALSE(none);
  EXPECT_EQ(none.code(), cluster_errc::full);
  auto again = on_a.open(four, a->record());  // a closed 1 itself, and finds it taken
  ASSERT_FALSE(again);
  EXPECT_EQ(again.code(), cluster_errc::full);
}

// A node declared dead: its open lines are tombstoned (and only its own, of its epoch), it cannot
// write them any more, and their ids open again elsewhere with the next generation.
TEST(LineStore, ADeadNodesLinesAreTombstonedAndOpenAgainElsewhere) {
  two_nodes c;
  ASSERT_TRUE(c.ok());
  auto& nodes = c.nodes;
  auto& a = c.a;
  auto& b = c.b;
  line_store store(c.lines);
  auto b1 = store.open(scene_of(dungeon, 4), b->record());
  auto a2 = store.open(scene_of(dungeon, 4), a->record());
  auto b3 = store.open(scene_of(dungeon, 4), b->record());
  auto b_town = store.open(scene_of(1, 2), b->record());
  ASSERT_TRUE(b1 && a2 && b3 && b_town);
  ASSERT_TRUE(store.close(*b3));  // closed by b before it died: not b's to lose

  auto dead = declare_dead(*nodes, "b", b->revision());
  ASSERT_TRUE(dead);
  auto taken = store.tombstone("b", dead->record.epoch);
  ASSERT_TRUE(taken) << taken.error().message;
  ASSERT_EQ(taken->size(), 2u);
  EXPECT_EQ((*taken)[0].handle(), (line_handle{1, 1, 1}));
  EXPECT_EQ((*taken)[1].handle(), (line_handle{dungeon, 1, 1}));

  EXPECT_EQ(store.set_players(*b1, 2).code(), cluster_errc::fenced);
  EXPECT_TRUE(store.set_players(*a2, 2));
  auto reopened = store.open(scene_of(dungeon, 4), a->record());
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->record.line, 1u);
  EXPECT_EQ(reopened->record.generation, 2u);
  EXPECT_EQ(reopened->record.node, "a");
  auto second = store.tombstone("b", dead->record.epoch);  // nothing left to take
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->empty());
}

// A value in the bucket that is not a line record: an error naming the key, never a crash.
TEST(LineStore, ABadRecordIsAnErrorThatNamesItsKey) {
  test::nats_server server;
  auto [link, kv] = test::open_bucket(server, "lines");
  ASSERT_TRUE(kv.create("line.10.1", "{\"scene\": 10}"));
  line_store store(kv);
  auto listed = store.lines(dungeon);
  ASSERT_FALSE(listed);
  EXPECT_EQ(listed.code(), cluster_errc::bad_record);
  EXPECT_NE(listed.error().message.find("line.10.1"), std::string::npos) << listed.error().message;
}

// A line opens with its scene's capacity; a record written before capacity existed reads as 0, and
// a capacity that is not a count is refused naming its key.
TEST(LineStore, ALineCarriesItsScenesCapacityAndOlderRecordsReadWithoutIt) {
  test::nats_server server;
  auto [link, kv] = test::open_bucket(server, "lines");
  auto nodes = link->bucket("nodes");
  ASSERT_TRUE(nodes);
  auto a = node_lease::join(*nodes, "a", 0);
  ASSERT_TRUE(a);
  line_store store(kv);
  auto opened = store.open(scene_of(dungeon, 2, 40), a->record());
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_EQ(opened->record.capacity, 40u);
  ASSERT_TRUE(
      kv.create("line.11.1",
                R"({"scene":11,"line":1,"generation":3,"node":"b","epoch":2,"players":7,"state":"open"})"));
  ASSERT_TRUE(kv.create("line.12.1", R"({"scene":12,"line":1,"generation":1,"node":"b","epoch":2,)"
                                     R"("capacity":"many","players":0,"state":"open"})"));
  auto listed = store.lines(dungeon);
  ASSERT_TRUE(listed) << listed.error().message;
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(listed->front().record.capacity, 40u);
  auto older = store.lines(11);
  ASSERT_TRUE(older) << older.error().message;
  ASSERT_EQ(older->size(), 1u);
  EXPECT_EQ(older->front().record.capacity, 0u);
  EXPECT_EQ(older->front().record.players, 7u);
  auto bad = store.lines(12);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.code(), cluster_errc::bad_record);
  EXPECT_NE(bad.error().message.find("line.12.1"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace scenert::cluster
