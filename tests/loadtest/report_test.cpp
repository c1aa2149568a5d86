#include <scenert/loadtest/report.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace scenert::loadtest {
namespace {

loadtest_report sample() {
  loadtest_report r;
  r.players = 10;
  r.seconds = 2;
  r.seed = 42;
  r.wall_seconds = 2;
  r.requests[static_cast<int>(step_kind::enter)] = 10;
  r.requests[static_cast<int>(step_kind::leave)] = 4;
  r.requests[static_cast<int>(step_kind::move)] = 30;
  r.requests[static_cast<int>(step_kind::enter_phase)] = 3;
  r.requests[static_cast<int>(step_kind::leave_phase)] = 2;
  r.answers_ok = 45;
  r.errors = {{"line_full", 4}};
  r.enters_ok = 6;
  r.leaves_ok = 4;
  r.online_at_end = 2;
  r.line_full = 4;
  r.tick = {0.5, 7.25, 9};
  r.scenes.push_back({.id = 1,
                      .name = "Village",
                      .kind = scene_kind::town,
                      .max_open_lines = 2,
                      .max_players_on_line = 5,
                      .line_full = 4,
                      .lines_opened = 2,
                      .lines_closed = 1});
  r.scenes.push_back({.id = 2,
                      .name = "Crypt",
                      .kind = scene_kind::dungeon,
                      .instances = instance_mode::party,
                      .line_full = 3,
                      .line_full_at_max = 3,
                      .lines_opened = 7,
                      .instances_opened = 7,
                      .party_runs = 9});
  r.checks = 5;
  return r;
}

TEST(LoadtestReport, JsonHoldsEveryFieldTheIssueAsksFor) {
  const auto j = nlohmann::json::parse(report_json(sample()));
  for (const char* key : {"players", "seconds", "seed", "requests", "line_full", "lines_opened",
                          "lines_closed", "tick", "lateness", "scenes", "invariants"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["requests"]["enter"], 10);
  EXPECT_EQ(j["requests"]["enter_phase"], 3);
  EXPECT_EQ(j["requests"]["leave_phase"], 2);
  EXPECT_EQ(j["requests"]["enter_instance"], 0);
  EXPECT_EQ(j["requests"]["total"], 49);
  EXPECT_EQ(j["tick"]["p99_ms"], 7.25);
  EXPECT_EQ(j["scenes"][0]["kind"], "town");
  EXPECT_EQ(j["scenes"][0]["max_open_lines"], 2);
  EXPECT_EQ(j["scenes"][0]["instances"], "shared");
  EXPECT_EQ(j["scenes"][1]["instances"], "party");
  EXPECT_EQ(j["scenes"][1]["line_full_at_max_lines"], 3);
  EXPECT_EQ(j["scenes"][1]["instances_opened"], 7);
  EXPECT_EQ(j["scenes"][1]["party_runs"], 9);
  EXPECT_EQ(j["invariants"]["checked"], 5);
  EXPECT_TRUE(j["invariants"]["violations"].empty());
}

TEST(LoadtestReport, MeasuredValuesFeedTheThresholds) {
  const auto m = measured_values(sample());
  for (const auto& name : threshold_metrics()) EXPECT_TRUE(m.count(name)) << name;
  EXPECT_EQ(m.at("tick_p99_ms"), 7.25);
  EXPECT_EQ(m.at("requests_per_second"), 24.5);
  EXPECT_EQ(m.at("errors"), 4);
}

TEST(LoadtestReport, SummaryHasARowPerSceneAndSaysWhetherInvariantsHeld) {
  auto r = sample();
  auto text = summary_text(r);
  EXPECT_NE(text.find("1 Village"), std::string::npos);
  EXPECT_NE(text.find("3 (3)"), std::string::npos) << text;  // the crypt's line_full, all at max_lines
  EXPECT_NE(text.find("7/9"), std::string::npos) << text;    // its instances per party run
  EXPECT_NE(text.find("entered 6 = left 4 + online at the end 2"), std::string::npos);
  EXPECT_NE(text.find("(all held)"), std::string::npos);
  r.violation_count = 1;
  r.violations = {"player 3: lost"};
  text = summary_text(r);
  EXPECT_EQ(text.find("(all held)"), std::string::npos);
  EXPECT_NE(text.find("violation: player 3: lost"), std::string::npos);
}

}  // namespace
}  // namespace scenert::loadtest
