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

}  // namespace
}  // namespace scenert::cluster
