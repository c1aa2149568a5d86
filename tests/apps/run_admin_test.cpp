#include "run_admin.hpp"

#include <scenert/config/table_loader.hpp>
#include <scenert/runtime/processor_pool.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <thread>

namespace scenert::apps {
namespace {

constexpr const char* table_text = R"({
  "version": 1,
  "maps": [ { "id": 1, "name": "m", "width": 64, "height": 64, "area_width": 16, "area_height": 16 } ],
  "scenes": [
    { "id": 1, "name": "Town", "kind": "town", "capacity": 50, "min_lines": 1, "max_lines": 4, "map": 1 },
    { "id": 7, "name": "Fair", "kind": "space", "capacity": 10, "bind_town": 1, "max_spaces": 3 },
    { "id": 2, "name": "Cellar", "kind": "dungeon", "structure": "group", "capacity": 5, "min_lines": 0,
      "max_lines": 9, "map": 1 }
  ]
})";

const scene_table& table() {
  static const load_result loaded = parse_table(table_text, "admin_test.json");
  EXPECT_TRUE(loaded.ok());
  return *loaded.table;
}

world_snapshot sample() {
  world_snapshot s;
  s.players = 12;
  s.group_services = 1;
  scene_snapshot town;
  town.def = table().find_scene(1);
  town.lines = {{1, 1, line_state::open, 10}, {2, 3, line_state::closing, 0}};
  town.open_lines = 1;
  town.players = 10;
  town.lines_opened = 3;
  town.lines_closed = 2;
  scene_snapshot cellar;
  cellar.def = table().find_scene(2);
  cellar.lines = {{1, 1, line_state::open, 2}};
  cellar.open_lines = 1;
  cellar.players = 2;
  cellar.line_full = 4;
  s.scenes = {town, cellar};
  return s;
}

TEST(RunAdmin, MetricsLabelEverySceneFamilyBySceneAndKind) {
  prometheus_text out;
  render_world_metrics(out, sample());
  const auto& t = out.text();
  EXPECT_NE(t.find("scenert_scene_open_lines{scene=\"1\",kind=\"town\"} 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("scenert_scene_line_full_total{scene=\"2\",kind=\"dungeon\"} 4\n"), std::string::npos);
  EXPECT_NE(t.find("# TYPE scenert_scene_lines_opened_total counter\n"), std::string::npos);
  EXPECT_NE(t.find("scenert_world_players 12\n"), std::string::npos);
  // Each family's HELP/TYPE appears once: its samples are together.
  EXPECT_EQ(t.find("# TYPE scenert_scene_players gauge"), t.rfind("# TYPE scenert_scene_players gauge"));
}

TEST(RunAdmin, ScenesDocumentListsLinesPhasesAndGroups) {
  const auto j = nlohmann::json::parse(scenes_json(table(), sample()));
  EXPECT_EQ(j["players"], 12);
  EXPECT_EQ(j["group_services"], 1);
  ASSERT_EQ(j["scenes"].size(), 2u);
  const auto& town = j["scenes"][0];
  EXPECT_EQ(town["kind"], "town");
  EXPECT_EQ(town["structure"], "single");
  EXPECT_EQ(town["lines"][0]["players"], 10);
  EXPECT_EQ(town["lines"][1]["state"], "closing");
  EXPECT_EQ(town["spaces"][0]["id"], 7);
  EXPECT_EQ(town["spaces"][0]["max_spaces"], 3);
  EXPECT_EQ(j["scenes"][1]["slots_per_group"], 20);  // 100 / 5
}

TEST(RunAdmin, HealthFailsWithTheReasonWhenWorkersStopOrATickStalls) {
  pool_metrics m;
  m.since_progress = std::chrono::milliseconds(10);
  EXPECT_TRUE(judge_health(m, std::chrono::seconds(2)).ok);
  m.since_progress = std::chrono::seconds(3);
  auto h = judge_health(m, std::chrono::seconds(2));
  EXPECT_FALSE(h.ok);
  EXPECT_NE(h.reason.find("no pool worker finished work for 3.0 s"), std::string::npos);
  m.since_progress = {};
  m.stalled_now = {"scene 1 line 2 (running 3.2 s)"};
  h = judge_health(m, std::chrono::seconds(2));
  EXPECT_FALSE(h.ok);
  EXPECT_NE(h.reason.find("stalled: scene 1 line 2"), std::string::npos);
}

TEST(RunAdmin, HandlersAnswerForARealWorldAndReadinessEndsWithShutdown) {
  processor_pool pool;
  auto w = world::create(table(), pool);
  ASSERT_TRUE(pool.start());
  w->start();
  std::this_thread::sleep_for(std::chrono::milliseconds(250));  // activation and a snapshot
  std::atomic<bool> stopping{false};
  auto h = world_admin_handlers(table(), pool, *w, stopping);
  EXPECT_EQ(h.livez().status, 200);
  EXPECT_EQ(h.readyz().status, 200);
  EXPECT_EQ(h.healthz().status, 200) << h.healthz().body;
  const auto metrics = h.metrics();
  EXPECT_NE(metrics.body.find("scenert_scene_open_lines{scene=\"1\",kind=\"town\"} 1\n"), std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("scenert_pool_workers 2"), std::string::npos);
  const auto scenes = nlohmann::json::parse(h.scenes().body);
  EXPECT_EQ(scenes["scenes"][0]["open_lines"], 1);
  stopping = true;
  EXPECT_EQ(h.readyz().status, 503);
  EXPECT_EQ(w->shutdown().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  ASSERT_TRUE(pool.stop());
}

}  // namespace
}  // namespace scenert::apps
