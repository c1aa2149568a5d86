#include <scenert/admin/world_admin.hpp>

#include <scenert/config/table_loader.hpp>
#include <scenert/runtime/processor_pool.hpp>
#include <scenert/space/space_module.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <future>
#include <memory>
#include <thread>

#include "../net/http_probe.hpp"
#include "../scene/fixture.hpp"

namespace scenert::admin {
namespace {

constexpr const char* table_text = R"({
  "version": 1,
  "maps": [ { "id": 1, "name": "m", "width": 64, "height": 64, "area_width": 16, "area_height": 16,
              "eyesight_x": 2, "cell_size": 0.5, "origin": { "x": -16, "z": 0 },
              "blocks": [ { "x": 62, "y": 62, "w": 2, "h": 2 } ] } ],
  "scenes": [
    { "id": 1, "name": "Town", "kind": "town", "capacity": 50, "min_lines": 1, "max_lines": 4, "map": 1,
      "monsters": 3 },
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

// ---- /lines/SCENE/LINE ------------------------------------------------------------------------

TEST(RunAdmin, LinePathsAreTwoDecimalIdsOrAnErrorSayingSo) {
  const auto ok = parse_line_target("3/12");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->scene, 3u);
  EXPECT_EQ(ok->line, 12u);
  for (const char* bad : {"", "3", "3/", "/1", "x/1", "3/1/2", "-3/1", "+3/1", "3/1?", "3/99999999999"}) {
    const auto r = parse_line_target(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.code(), admin_errc::bad_path);
    EXPECT_NE(r.error().message.find("expected /lines/SCENE/LINE"), std::string::npos) << r.error().message;
  }
}

using R = world_request;
using namespace std::chrono_literals;

world_options with_phases() {
  world_options o;
  o.on_new_line = attach_space_modules(table());  // town lines get their phases, as in scenert run
  return o;
}

// Asks /lines through the handler and moves the manual clock on until it answers (a few ticks: the
// world's, then the line's twice).
admin_response ask_lines(test::manual_world& mw, const admin_handlers& h, std::string_view rest) {
  auto answered = std::make_shared<std::promise<admin_response>>();
  auto got = answered->get_future();
  h.lines(rest, admin_reply{[answered](admin_response r) { answered->set_value(std::move(r)); },
                            [](admin_response) {}});
  for (int i = 0; i < 20 && got.wait_for(0s) != std::future_status::ready; ++i) mw.step(100ms);
  if (got.wait_for(0s) != std::future_status::ready) {
    ADD_FAILURE() << "/lines/" << rest << " never answered";
    return {};
  }
  return got.get();
}

nlohmann::json cell(std::uint64_t id, std::uint32_t x, std::uint32_t y) {
  return {{"id", id}, {"x", x}, {"y", y}};
}

TEST(RunAdmin, LinesListTheScenesOwnPlayersMonstersAndPhases) {
  test::manual_world mw(table(), with_phases());
  std::atomic<bool> stopping{false};
  const auto h = world_admin_handlers(mw.table, *mw.pool, *mw.w, stopping);
  const auto town = *mw.ask(R::enter(20, 1));
  for (player_id p : {4, 31}) ASSERT_TRUE(mw.ask(R::enter(p, 1)));
  ASSERT_TRUE(mw.ask(R::move(20, {5, 7})));
  ASSERT_TRUE(mw.ask(R::move(4, {40, 41})));
  // Player 31 goes into a phase of the Fair and walks there: it is listed in the phase only.
  const auto phased = mw.ask(R::enter_phase(31, 7));
  ASSERT_TRUE(phased) << phased.error().message;
  ASSERT_TRUE(mw.ask(R::move(31, {1, 2})));

  const auto r = ask_lines(mw, h, "1/1");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  const auto j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["scene"], 1);
  EXPECT_EQ(j["line"], 1);
  EXPECT_EQ(j["name"], "Town");
  EXPECT_EQ(j["kind"], "town");
  const nlohmann::json geometry{
      {"width", 64},       {"height", 64},
      {"cell_size", 0.5},  {"origin_x", -16.0},
      {"origin_z", 0.0},   {"area_width", 16},
      {"area_height", 16}, {"eyesight_x", 2},
      {"eyesight_y", 1},   {"blocks", {{{"x", 62}, {"y", 62}, {"w", 2}, {"h", 2}}}}};
  EXPECT_EQ(j["geometry"], geometry);
  // Sorted by id, at the cells they walked to.
  EXPECT_EQ(j["players"], nlohmann::json::array({cell(4, 40, 41), cell(20, 5, 7)}));
  // The monsters where the scene holds them (read here between two steps of the manual clock).
  const auto line = mw.w->line_object(town.line);
  ASSERT_NE(line, nullptr);
  auto monsters = nlohmann::json::array();
  std::vector<grid::entity_id> ids = line->monsters();
  std::sort(ids.begin(), ids.end());
  for (auto id : ids) {
    const auto at = line->grid().position_of(id);
    auto m = cell(id, at.x, at.y);
    const auto brain = line->monster(id);  // and what its brain does, where its path leads
    ASSERT_TRUE(brain);
    m["state"] = to_string(brain->state);
    if (brain->goal) m["goal"] = {{"x", brain->goal->x}, {"y", brain->goal->y}};
    monsters.push_back(m);
  }
  EXPECT_EQ(monsters.size(), 3u);
  EXPECT_EQ(j["monsters"], monsters);
  ASSERT_EQ(j["phases"].size(), 1u);
  const auto& phase = j["phases"][0];
  EXPECT_EQ(phase["phase"], phased->phase);
  EXPECT_EQ(phase["space"], 7);
  EXPECT_EQ(phase["geometry"], geometry);  // a phase runs on its town's map
  EXPECT_EQ(phase["players"], nlohmann::json::array({cell(31, 1, 2)}));

  // Back from the phase: on the town where it stood in the phase; no phase is left running.
  ASSERT_TRUE(mw.ask(R::leave_phase(31)));
  const auto after = nlohmann::json::parse(ask_lines(mw, h, "1/1").body);
  EXPECT_EQ(after["players"], nlohmann::json::array({cell(4, 40, 41), cell(20, 5, 7), cell(31, 1, 2)}));
  EXPECT_EQ(after["phases"], nlohmann::json::array());
}

TEST(RunAdmin, LinesAnswer404ForAnUnknownSceneOrALineNotOpenAnd400ForABadPath) {
  test::manual_world mw(table(), with_phases());
  std::atomic<bool> stopping{false};
  const auto h = world_admin_handlers(mw.table, *mw.pool, *mw.w, stopping);
  const struct {
    const char* rest;
    int status;
    const char* body;
  } cases[] = {
      {"9/1", 404, "no scene 9\n"},
      {"1/3", 404, "scene 1 has no open line 3\n"},  // a town line that is not open
      {"2/1", 404, "scene 2 has no open line 1\n"},  // a dungeon with no line open
      {"7/1", 404, "scene 7 has no open line 1\n"},  // a space: it has phases, not lines
      {"1/x", 400, "/lines/1/x: expected /lines/SCENE/LINE with decimal scene and line ids\n"},
  };
  for (const auto& c : cases) {
    const auto r = ask_lines(mw, h, c.rest);
    EXPECT_EQ(r.status, c.status) << c.rest;
    EXPECT_EQ(r.body, c.body) << c.rest;
  }
  // An empty line: empty lists, never missing ones.
  const auto j = nlohmann::json::parse(ask_lines(mw, h, "1/1").body);
  EXPECT_EQ(j["players"], nlohmann::json::array());
  EXPECT_EQ(j["monsters"].size(), 3u);
  EXPECT_EQ(j["phases"], nlohmann::json::array());
  // A grouped dungeon's line, once a player opened it: its group runs the read like a single line.
  ASSERT_TRUE(mw.ask(R::enter(8, 2)));
  const auto cellar = ask_lines(mw, h, "2/1");
  ASSERT_EQ(cellar.status, 200) << cellar.body;
  const auto d = nlohmann::json::parse(cellar.body);
  EXPECT_EQ(d["kind"], "dungeon");
  ASSERT_EQ(d["players"].size(), 1u);
  EXPECT_EQ(d["players"][0]["id"], 8);
  EXPECT_EQ(d["phases"], nlohmann::json::array());
}

// Over HTTP: /lines waits for the scene's thread without holding the server's I/O thread, and a
// scene that does not answer in time gets a 503 naming it. The manual clock makes "does not answer":
// nothing runs until the test steps it.
TEST(RunAdmin, LinesOverHttpNeverHoldTheProbesAndTimeOutNamingTheLine) {
  test::manual_world mw(table(), with_phases());
  std::atomic<bool> stopping{false};
  ASSERT_TRUE(mw.ask(R::enter(5, 1)));
  auto server = admin_server::start(
      {"127.0.0.1", 0}, world_admin_handlers(mw.table, *mw.pool, *mw.w, stopping, nullptr, 300ms));
  ASSERT_TRUE(server) << server.error().message;
  const auto port = (*server)->port();

  // Nobody steps: the line cannot answer, the probes still do, and the timeout says which line.
  auto late = std::async(std::launch::async, [port] { return test::http_get(port, "/lines/1/1"); });
  const auto live = test::http_get(port, "/livez");
  ASSERT_TRUE(live);
  EXPECT_EQ(live->status, 200);
  const auto timed_out = late.get();
  ASSERT_TRUE(timed_out);
  EXPECT_EQ(timed_out->status, 503);
  EXPECT_EQ(timed_out->body, "scene 1 line 1 did not answer within 300 ms\n");
  mw.step();  // the late read runs now: its answer is dropped

  // Stepped, it answers with the document; errors come at once.
  auto doc = std::async(std::launch::async, [port] { return test::http_get(port, "/lines/1/1"); });
  for (int i = 0; i < 100 && doc.wait_for(10ms) != std::future_status::ready; ++i) mw.step(100ms);
  const auto answered = doc.get();
  ASSERT_TRUE(answered);
  ASSERT_EQ(answered->status, 200) << answered->body;
  EXPECT_EQ(answered->fields.at("content-type"), "application/json");
  EXPECT_EQ(nlohmann::json::parse(answered->body)["players"].size(), 1u);
  EXPECT_EQ(test::http_get(port, "/lines/1/")->status, 400);
  EXPECT_EQ(test::http_get(port, "/lines/8/1")->status, 404);
}

}  // namespace
}  // namespace scenert::admin
