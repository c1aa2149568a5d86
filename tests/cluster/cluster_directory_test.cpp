// A node's line directory over the cluster's store: lines open with their scene's capacity, and
// their player counts reach the store when synced, only those that changed, fenced lines left alone.

#include <scenert/cluster/cluster_directory.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "nats_server.hpp"

namespace scenert::cluster {
namespace {

constexpr scene_id field = 10;

scene_table field_table() {
  scene_table t;
  scene_def d;
  d.id = field, d.name = "field", d.kind = scene_kind::field, d.capacity = 30, d.hard_capacity = 40;
  d.min_lines = 1, d.max_lines = 3;
  t.scenes.push_back(d);
  return t;
}

// One node ("a") with its synced directory, and a store of its own to read the bucket with.
struct node_fixture {
  test::nats_server server;
  std::unique_ptr<nats_link> link;
  std::optional<kv_bucket> lines;
  std::optional<node_lease> lease;
  scene_table table = field_table();
  std::mutex warned;  // warnings come from the world's thread or the syncing one
  std::vector<std::string> warnings;
  std::atomic<bool> up{true};  // the link, as the directory is told of it
  synced_cluster_directory dir;

  node_fixture() {
    auto [l, kv] = test::open_bucket(server, "lines");
    link = std::move(l);
    lines.emplace(std::move(kv));
    auto nodes = link->bucket("nodes");
    if (!nodes) throw std::runtime_error(nodes.error().message);
    auto joined = node_lease::join(*nodes, "a", 0);
    if (!joined) throw std::runtime_error(joined.error().message);
    lease.emplace(std::move(joined).value());
    cluster_directory_options o;
    o.warn = [this](std::string_view what) {
      std::lock_guard lock(warned);
      warnings.emplace_back(what);
    };
    o.linked = [this] { return up.load(); };
    dir = make_synced_cluster_directory(table, line_store(*lines), lease->record(), std::move(o));
  }
  // The bucket's records of the field, by line id.
  std::map<std::uint32_t, held_line> in_store() const {
    auto all = line_store(*lines).lines(field);
    if (!all) throw std::runtime_error(all.error().message);
    std::map<std::uint32_t, held_line> by_id;
    for (auto& h : *all) by_id[h.record.line] = h;
    return by_id;
  }
  std::uint32_t players_here(line_handle line) const { return dir.directory->check(line)->players; }
};

TEST(ClusterDirectory, ALineOpensInTheStoreWithItsScenesCapacity) {
  node_fixture n;
  auto line = n.dir.directory->open_line(field, 0);
  ASSERT_TRUE(line);
  auto stored = n.in_store();
  ASSERT_EQ(stored.size(), 1u);
  const line_record& r = stored.at(line->line).record;
  EXPECT_EQ(r.capacity, 30u);
  EXPECT_EQ(r.players, 0u);
  EXPECT_EQ(r.node, "a");
  EXPECT_EQ(r.generation, line->generation);
  EXPECT_EQ(n.dir.counts->sync(), 0u);  // nobody there yet: nothing to write
  EXPECT_EQ(n.in_store().at(line->line).revision, stored.at(line->line).revision);
}

// Places, switches and leaves are counted on the world's thread; a sync writes each changed line
// once, and a line whose count is back where it was written, or never moved, is not rewritten.
TEST(ClusterDirectory, ASyncWritesTheCountsThatChangedAndOnlyThose) {
  node_fixture n;
  auto& dir = *n.dir.directory;
  auto one = dir.open_line(field, 0), two = dir.open_line(field, 0), three = dir.open_line(field, 0);
  ASSERT_TRUE(one && two && three);
  for (player_id p = 1; p <= 3; ++p) dir.place(p, *one);
  dir.place(4, *two);
  EXPECT_EQ(n.dir.counts->sync(), 2u);
  auto first = n.in_store();
  EXPECT_EQ(first.at(1).record.players, 3u);
  EXPECT_EQ(first.at(2).record.players, 1u);
  EXPECT_EQ(first.at(3).record.players, 0u);

  dir.begin_switch(1, *two);  // counted on both lines until it lands
  dir.place(5, *three);
  dir.remove(5);  // line three is back at the count it was written with
  EXPECT_EQ(n.dir.counts->sync(), 1u);
  auto switching = n.in_store();
  EXPECT_EQ(switching.at(2).record.players, 2u);
  EXPECT_EQ(switching.at(1).revision, first.at(1).revision);
  EXPECT_EQ(switching.at(3).revision, first.at(3).revision);

  dir.finish_switch(1);
  dir.begin_switch(2, *three);
  dir.cancel_switch(2);
  EXPECT_EQ(n.dir.counts->sync(), 1u);  // line one lost player 1; line three: +1 -1, unchanged
  auto landed = n.in_store();
  for (const line_handle& h : {*one, *two, *three})
    EXPECT_EQ(landed.at(h.line).record.players, n.players_here(h)) << "line " << h.line;
  EXPECT_EQ(landed.at(1).record.players, 2u);
  EXPECT_EQ(landed.at(2).revision, switching.at(2).revision);
  EXPECT_EQ(landed.at(3).revision, switching.at(3).revision);

  EXPECT_EQ(n.dir.counts->sync(), 0u);  // nothing moved since
  auto again = n.in_store();
  for (std::uint32_t id = 1; id <= 3; ++id) EXPECT_EQ(again.at(id).revision, landed.at(id).revision);
  EXPECT_TRUE(n.warnings.empty());
}

// Another node took the line (declared this one dead): the sync warns once, naming the line, writes
// nothing and throws nothing; later syncs leave the line alone.
TEST(ClusterDirectory, AFencedLinesSyncWarnsOnceAndWritesNothing) {
  node_fixture n;
  auto& dir = *n.dir.directory;
  auto line = dir.open_line(field, 0);
  ASSERT_TRUE(line);
  dir.place(1, *line);
  auto taken = line_store(*n.lines).tombstone("a", n.lease->record().epoch);
  ASSERT_TRUE(taken) << taken.error().message;
  ASSERT_EQ(taken->size(), 1u);
  const auto before = n.in_store().at(line->line);

  std::size_t written = 1;
  EXPECT_NO_THROW(written = n.dir.counts->sync());
  EXPECT_EQ(written, 0u);
  ASSERT_EQ(n.warnings.size(), 1u);
  EXPECT_NE(n.warnings[0].find("no longer the node's"), std::string::npos) << n.warnings[0];
  EXPECT_NE(n.warnings[0].find("line 1 of scene 10"), std::string::npos) << n.warnings[0];
  dir.place(2, *line);
  EXPECT_EQ(n.dir.counts->sync(), 0u);
  EXPECT_EQ(n.warnings.size(), 1u);
  const auto after = n.in_store().at(line->line);
  EXPECT_EQ(after.revision, before.revision);
  EXPECT_EQ(after.record.state, line_state_in_cluster::tombstoned);
}

// The world's thread places, moves and removes players and opens and frees lines while another
// thread syncs: the last sync leaves the store with the directory's own counts.
TEST(ClusterDirectory, SyncsFromAnotherThreadMeetTheWorldsCounts) {
  node_fixture n;
  auto& dir = *n.dir.directory;
  auto one = dir.open_line(field, 0);
  ASSERT_TRUE(one);
  std::atomic<bool> done{false};
  std::thread world([&] {
    std::optional<line_handle> extra;
    for (player_id p = 1; p <= 20'000; ++p) {
      dir.place(p, *one);
      if (p % 1'000 != 0) dir.remove(p);  // one in a thousand stays: 20, below the capacity
      if (p % 2'000 == 0 && !extra) {
        extra = dir.open_line(field, 0);
      } else if (p % 2'000 == 0) {
        dir.close_line(*extra);
        dir.free_line(extra->scene, extra->line);
        extra.reset();
      }
    }
    done = true;
  });
  std::size_t passes = 0;
  while (!done) {
    (void)n.dir.counts->sync();
    ++passes;
  }
  world.join();
  (void)n.dir.counts->sync();
  EXPECT_GT(passes, 0u);
  EXPECT_EQ(n.in_store().at(1).record.players, n.players_here(*one));
  EXPECT_EQ(n.players_here(*one), 20u);
  EXPECT_TRUE(n.warnings.empty()) << n.warnings.front();
}

// With the link down the world's thread asks the store nothing: no line opens (the scene rests), a
// line freed meanwhile stays this node's in the store until a sync once the link is back closes it.
TEST(ClusterDirectory, WithTheLinkDownNothingWaitsAndAFreedLineIsClosedOnceItIsBack) {
  node_fixture n;
  auto line = n.dir.directory->open_line(field, 0);
  ASSERT_TRUE(line);
  n.up = false;
  EXPECT_EQ(n.dir.directory->open_line(field, 0), std::nullopt);
  {
    std::lock_guard lock(n.warned);
    ASSERT_EQ(n.warnings.size(), 1u);
    EXPECT_NE(n.warnings[0].find("link to the server is down"), std::string::npos) << n.warnings[0];
  }
  n.dir.directory->close_line(*line);
  n.dir.directory->free_line(field, line->line);
  EXPECT_EQ(n.dir.counts->sync(), 0u);
  auto stored = n.in_store();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored.at(line->line).record.state, line_state_in_cluster::open);  // not written yet

  n.up = true;
  (void)n.dir.counts->sync();
  stored = n.in_store();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored.at(line->line).record.state, line_state_in_cluster::closed);
  EXPECT_EQ(stored.at(line->line).record.generation, line->generation);
}

}  // namespace
}  // namespace scenert::cluster
