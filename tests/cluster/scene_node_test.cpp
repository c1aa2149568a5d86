// A scene node as `scenert run --cluster` wires it: it beats on its own timer, declares a silent
// node dead, and stops serving once another declared it dead.

#include <scenert/cluster/line_store.hpp>
#include <scenert/cluster/scene_node.hpp>
#include <scenert/runtime/processor_pool.hpp>
#include <scenert/scene/world.hpp>

#include <gtest/gtest.h>

#include "../eventually.hpp"
#include "../scene/fixture.hpp"
#include "nats_server.hpp"

namespace scenert::cluster {
namespace {

using namespace std::chrono_literals;
using scenert::test::eventually;

// A node of a small table on a real pool, its timers fast so that a test sees them at work.
struct hosted_node {
  explicit hosted_node(const test::nats_server& server, std::string name,
                       scene_table t = scenert::test::small_table())
      : table(std::move(t)) {
    scene_node_options o;
    o.url = server.url();
    o.name = std::move(name);
    o.beat = 100ms;
    o.dead_after = 600ms;
    o.poll_every = 50ms;
    o.warn = [this](std::string_view what) { warnings.emplace_back(what); };
    o.error = o.warn;
    auto joined = scene_node::join(table, std::move(o));
    if (!joined) throw std::runtime_error(joined.error().message);
    node = std::move(joined).value();
    world_options wo;
    wo.directory = node->take_directory();
    wo.on_line_events = node->on_line_events();
    (void)pool.start();
    w = world::create(table, pool, std::move(wo));
    w->start();
  }
  ~hosted_node() {
    node->stop();
    (void)w->shutdown().wait_for(5s);
    (void)pool.stop();
  }
  scene_table table;
  std::vector<std::string> warnings;  // written by the node's executor before the test reads them
  processor_pool pool{pool_options{}};
  std::unique_ptr<scene_node> node;
  std::shared_ptr<world> w;
};

TEST(SceneNode, BeatsOnItsOwnTimerOnceStarted) {
  test::nats_server server;
  hosted_node a(server, "a");
  ASSERT_TRUE(a.node->start(*a.w));
  EXPECT_TRUE(eventually([&] { return a.node->stats().beats >= 3; }, 10s)) << a.node->stats().beats;
  EXPECT_FALSE(a.node->fenced());
  EXPECT_TRUE(a.node->stats().connected);
  EXPECT_EQ(a.node->stats().epoch, a.node->self().epoch);
}

TEST(SceneNode, DeclaresASilentNodeDeadOnItsOwnTimer) {
  test::nats_server server;
  auto [link, nodes] = test::open_bucket(server, "scenert-nodes", "b");
  auto silent = node_lease::join(nodes, "b", 0);  // joins, then never beats
  ASSERT_TRUE(silent) << silent.error().message;
  hosted_node a(server, "a");
  ASSERT_TRUE(a.node->start(*a.w));
  EXPECT_TRUE(eventually([&] { return a.node->stats().declared_dead == 1; }, 10s));
  auto all = list_nodes(nodes);
  ASSERT_TRUE(all) << all.error().message;
  const auto b =
      std::find_if(all->begin(), all->end(), [](const node_entry& e) { return e.record.name == "b"; });
  ASSERT_NE(b, all->end());
  EXPECT_TRUE(b->record.dead);
}

TEST(SceneNode, StopsServingOnceAnotherDeclaredItDead) {
  test::nats_server server;
  hosted_node a(server, "a");
  auto [link, nodes] = test::open_bucket(server, "scenert-nodes", "judge");
  auto all = list_nodes(nodes);
  ASSERT_TRUE(all);
  const auto me =
      std::find_if(all->begin(), all->end(), [](const node_entry& e) { return e.record.name == "a"; });
  ASSERT_NE(me, all->end());
  ASSERT_TRUE(declare_dead(nodes, "a", me->revision));  // before its first beat: its lease is fenced
  ASSERT_TRUE(a.node->start(*a.w));
  EXPECT_TRUE(eventually([&] { return a.node->fenced(); }, 10s));
  const auto beats = a.node->stats().beats;
  EXPECT_EQ(beats, 0u);
  EXPECT_GE(a.node->stats().beat_failures, 1u);
}

// A node started again under its name before anyone declared its previous start dead (a supervisor's
// quick restart) takes that start's lines itself: they would stay open in the directory for good.
TEST(SceneNode, AQuickRestartTakesItsPredecessorsLines) {
  test::nats_server server;
  auto [link, nodes] = test::open_bucket(server, "scenert-nodes", "first-start");
  auto lines = link->bucket("scenert-lines");
  ASSERT_TRUE(lines) << lines.error().message;
  auto first = node_lease::join(nodes, "a", 0);  // the start that crashed: it opened a line, then died
  ASSERT_TRUE(first) << first.error().message;
  const scene_table table = scenert::test::small_table();
  line_store store(*lines);
  auto held = store.open(*table.find_scene(scenert::test::field_id), first->record());
  ASSERT_TRUE(held) << held.error().message;
  hosted_node again(server, "a");
  EXPECT_EQ(again.node->self().epoch, first->record().epoch + 1);
  ASSERT_FALSE(again.warnings.empty());  // said in the join, before the node's timers run
  EXPECT_EQ(again.warnings[0],
            "node a (epoch 1) was not declared dead before this start: 1 of its lines tombstoned");
  auto now = store.lines(scenert::test::field_id);
  ASSERT_TRUE(now) << now.error().message;
  const auto it = std::find_if(now->begin(), now->end(),
                               [&](const held_line& l) { return l.record.line == held->record.line; });
  ASSERT_NE(it, now->end());
  EXPECT_FALSE(it->record.epoch == 1 && it->record.state == line_state_in_cluster::open)
      << "the first start's line is still open";
}

}  // namespace
}  // namespace scenert::cluster
