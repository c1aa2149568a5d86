#include <scenert/bots/report.hpp>

#include <scenert/bots/hostile.hpp>
#include <scenert/bots/plan.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

#include <scenert/loadtest/threshold.hpp>

namespace scenert::bots {
namespace {

using loadtest::missed_thresholds;
using loadtest::parse_threshold;
using std::chrono::microseconds;
using std::chrono::milliseconds;

wire_count& wire_of(bots_report& r, net::message_id id) {
  return r.wire[static_cast<std::size_t>(net::index_of(id))];
}

view_check checked(std::uint64_t bots, std::uint64_t pairs) {
  view_check c;
  c.bots = bots;
  c.pairs = pairs;
  return c;
}

bots_report sample() {
  bots_report r;
  r.target = "127.0.0.1:7000";
  r.transport = "tcp";
  r.protocol = "scenert";
  r.clients = 100;
  r.seconds = 10;
  r.rate = 50;
  r.move_hz = 5;
  r.seed = 42;
  r.threads = 4;
  r.plan_digest = 0xdeadbeef;
  r.wall_seconds = 10;
  r.connected = 98, r.connect_failed = 2, r.logged_in = 97, r.max_online = 96;
  for (int i = 1; i <= 100; ++i) r.connect.record(microseconds(100 * i));  // 0.1 to 10 ms
  r.login.record(milliseconds(3));
  r.disconnects = {{"bye", 90}, {"eof", 2}, {"timeout", 1}};
  r.moves_sent = 5000, r.chats_sent = 7;
  r.moves_refused = {{"too_far", 3}, {"blocked", 1}};
  for (int i = 0; i < 99; ++i) r.move_to_viewer.record(milliseconds(2));
  r.move_to_viewer.record(milliseconds(40));
  r.heartbeat_rtt.record(microseconds(1500));
  r.request_rtt["enter"].record(milliseconds(4));
  r.request_rtt["transfer"].record(milliseconds(12));
  r.answers["enter"] = {{"ok", 95}, {"line_full", 2}};
  r.answers["transfer"] = {{"ok", 5}};
  wire_of(r, net::message_id::broadcast) = {.frames_in = 800, .bytes_in = 32000};
  wire_of(r, net::message_id::position) = {.frames_out = 5000, .bytes_out = 100000};
  r.errors = 2;
  r.error_examples = {"bot 7: frame 9999 unknown"};
  r.views_verified = true;
  r.views = checked(97, 400);
  r.checkpoints = {checked(97, 380), checked(97, 390)};
  return r;
}

TEST(BotsReport, ViewMismatchesSumTheEndAndEveryCheckpoint) {
  auto r = sample();
  EXPECT_EQ(r.view_mismatches(), 0u);
  r.views.missing = 1;
  r.checkpoints[0].extra = 2;
  r.checkpoints[1].wrong_position = 3;
  r.checkpoints[1].misplaced = 4;
  EXPECT_EQ(r.view_mismatches(), 10u);
}

TEST(BotsReport, JsonHoldsEveryField) {
  auto r = sample();
  r.checkpoints[1].missing = 1;
  r.checkpoints[1].examples = {"bot 3 misses 5 on 1/1/0"};
  r.missed_thresholds = {"errors<1 missed: 2"};
  const auto j = nlohmann::json::parse(bots_report_json(r));
  for (const char* key :
       {"target", "transport", "protocol", "clients", "seconds", "rate", "move_hz", "seed", "threads",
        "wall_seconds", "connected", "max_online", "chats_sent", "unknown_frames"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["plan_digest"], "00000000deadbeef");
  EXPECT_EQ(j["connect_failed"], 2);
  EXPECT_EQ(j["connect"]["count"], 100);
  EXPECT_EQ(j["login"]["max_ms"], 3.0);
  EXPECT_EQ(j["move_to_viewer"]["max_ms"], 40.0);
  EXPECT_NEAR(j["move_to_viewer"]["p50_ms"].get<double>(), 2.0, 2.0 / 64);
  EXPECT_EQ(j["request_rtt"]["transfer"]["count"], 1);
  EXPECT_EQ(j["answers"]["enter"]["line_full"], 2);
  EXPECT_EQ(j["wire"]["broadcast"]["bytes_in"], 32000);
  EXPECT_EQ(j["wire"]["position"]["frames_out"], 5000);
  EXPECT_EQ(j["wire"]["goodbye"]["frames_in"], 0);
  EXPECT_EQ(j["disconnects"]["eof"], 2);
  EXPECT_EQ(j["moves_refused"]["too_far"], 3);
  EXPECT_EQ(j["errors"]["count"], 2);
  EXPECT_EQ(j["errors"]["examples"][0], "bot 7: frame 9999 unknown");
  EXPECT_EQ(j["views"]["verified"], true);
  EXPECT_EQ(j["views"]["mismatches"], 1);
  EXPECT_EQ(j["views"]["final"]["pairs"], 400);
  ASSERT_EQ(j["views"]["checkpoints"].size(), 2u);
  EXPECT_EQ(j["views"]["checkpoints"][1]["missing"], 1);
  EXPECT_EQ(j["views"]["checkpoints"][1]["examples"][0], "bot 3 misses 5 on 1/1/0");
  EXPECT_EQ(j["measured"]["moves_per_second"], 500.0);
  EXPECT_EQ(j["missed_thresholds"][0], "errors<1 missed: 2");
}

TEST(BotsReport, MeasuredValuesFeedTheThresholds) {
  auto r = sample();
  r.checkpoints[0].extra = 2;
  const auto m = bots_measured_values(r);
  for (const auto& name : bots_threshold_metrics()) EXPECT_TRUE(m.count(name)) << name;
  EXPECT_EQ(m.size(), bots_threshold_metrics().size());
  EXPECT_NEAR(m.at("move_p99_ms"), 2.0, 2.0 / 64);  // 99 of 100 deliveries took 2 ms
  EXPECT_EQ(m.at("move_max_ms"), 40.0);
  EXPECT_NEAR(m.at("connect_p99_ms"), 9.9, 9.9 / 64);
  EXPECT_NEAR(m.at("request_p99_ms"), 12.0, 12.0 / 64);  // over every kind
  EXPECT_EQ(m.at("disconnects"), 3);                     // the bots' own "bye" does not count
  EXPECT_EQ(m.at("moves_refused"), 4);
  EXPECT_EQ(m.at("view_mismatches"), 2);
  EXPECT_EQ(m.at("moves_per_second"), 500);
  EXPECT_EQ(m.at("frames_in_per_second"), 80);
  EXPECT_EQ(m.at("deliveries"), 100);
  EXPECT_EQ(m.at("logged_in"), 97);
  EXPECT_EQ(m.at("errors"), 2);
}

TEST(BotsReport, EveryMetricIsAcceptedAsAThreshold) {
  for (const auto& name : bots_threshold_metrics())
    EXPECT_TRUE(parse_threshold(name + "<1", bots_threshold_metrics()).has_value()) << name;
  EXPECT_FALSE(parse_threshold("tick_p99_ms<1", bots_threshold_metrics()).has_value());
}

TEST(BotsReport, ViewMismatchThresholdFailsOnAnyMismatch) {
  auto r = sample();
  const auto t = parse_threshold("view_mismatches<1", bots_threshold_metrics());
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(missed_thresholds({*t}, bots_measured_values(r)).empty());
  r.checkpoints[1].misplaced = 1;
  const auto missed = missed_thresholds({*t}, bots_measured_values(r));
  ASSERT_EQ(missed.size(), 1u);
  EXPECT_EQ(missed[0], "view_mismatches<1 missed: 1");
}

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

TEST(BotsReport, SummaryHasTheKeyLines) {
  auto r = sample();
  const auto text = bots_summary_text(r);
  EXPECT_TRUE(has(text, "127.0.0.1:7000 tcp scenert: 100 clients, 10 s, seed 42, 4 threads")) << text;
  EXPECT_TRUE(has(text, "plan 00000000deadbeef")) << text;
  EXPECT_TRUE(has(text, "connected 98, failed 2, logged in 97, max online 96")) << text;
  EXPECT_TRUE(has(text, "move to viewer")) << text;
  EXPECT_TRUE(has(text, "request transfer")) << text;
  EXPECT_TRUE(has(text, "enter: line_full 2, ok 95")) << text;
  EXPECT_TRUE(has(text, "broadcast")) << text;
  EXPECT_FALSE(has(text, "goodbye")) << text;  // no frames either way: no row
  EXPECT_TRUE(has(text, "bye 90, eof 2, timeout 1")) << text;
  EXPECT_TRUE(has(text, "refused blocked 1, too_far 3")) << text;
  EXPECT_TRUE(has(text, "error: bot 7: frame 9999 unknown")) << text;
  EXPECT_TRUE(has(text, "verified: 97 bots, 400 pairs, 0 mismatches (and at 2 checkpoints)")) << text;
  for (std::size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1)
    EXPECT_LE(end - at, 100u) << text.substr(at, end - at);
}

TEST(BotsReport, SummaryNamesEveryCheckWithMismatchesAndMissedThresholds) {
  auto r = sample();
  r.checkpoints[0].extra = 2;
  r.checkpoints[0].examples = {"bot 3 sees 9, not a neighbour"};
  r.missed_thresholds = {"view_mismatches<1 missed: 2"};
  const auto text = bots_summary_text(r);
  EXPECT_FALSE(has(text, "verified:")) << text;
  EXPECT_TRUE(has(text, "final: 97 bots, 400 pairs, 0 mismatches")) << text;
  EXPECT_TRUE(has(text, "checkpoint 1: 97 bots, 380 pairs, 2 mismatches: missing 0, extra 2")) << text;
  EXPECT_TRUE(has(text, "view: bot 3 sees 9, not a neighbour")) << text;
  EXPECT_TRUE(has(text, "checkpoint 2: 97 bots, 390 pairs, 0 mismatches")) << text;
  EXPECT_TRUE(has(text, "threshold: view_mismatches<1 missed: 2")) << text;
}

TEST(BotsReport, SummarySaysWhenViewsWereNotVerified) {
  auto r = sample();
  r.views_verified = false;
  EXPECT_TRUE(has(bots_summary_text(r), "not verified"));
}

// The hostile bots apart: per kind, how they ended and the server's reasons; the failed resumes.
TEST(BotsReport, HostileBotsAndFailedResumesAreShownApart) {
  auto r = sample();
  EXPECT_FALSE(has(bots_summary_text(r), "hostile")) << "no hostile bots: no section";
  r.well_behaved = 90;
  r.hostile.percent = 10;
  r.hostile.bots = 10;
  auto& flood = r.hostile.by_kind["flood"];
  flood.bots = 2, flood.endings["cut"] = 2, flood.reasons["flooding"] = 2;
  auto& token = r.hostile.by_kind["guessed_token"];
  token.bots = 1, token.endings["answered"] = 1, token.reasons["login_ok afresh"] = 1;
  r.failed_resumes["not back in time (last: eof)"] = 2;
  const auto text = bots_summary_text(r);
  EXPECT_TRUE(has(text, "hostile     10 bots (10%), apart from the 90 well-behaved ones above; 0 unexpected"))
      << text;
  EXPECT_TRUE(has(text, "flood              2  ended: cut 2; reasons: flooding 2")) << text;
  EXPECT_TRUE(has(text, "not resumed not back in time (last: eof) 2")) << text;
  const auto j = nlohmann::json::parse(bots_report_json(r));
  EXPECT_EQ(j["hostile"]["by_kind"]["guessed_token"]["reasons"]["login_ok afresh"], 1);
  EXPECT_EQ(j["hostile"]["well_behaved"], 90);
  EXPECT_EQ(j["failed_resumes"]["not back in time (last: eof)"], 2);
  EXPECT_EQ(bots_measured_values(r).at("hostile_unexpected"), 0);
  flood.unexpected = 1;
  EXPECT_EQ(bots_measured_values(r).at("hostile_unexpected"), 1);
}

// Which bots misbehave: the asked share, every kind once there are enough, the same for the same plan.
TEST(BotsHostile, PicksAreSeededAndDealEveryKind) {
  const auto plan = make_bots_plan({.clients = 60, .seconds = 5, .seed = 7});
  const auto picks = pick_hostile(plan, 30);
  ASSERT_EQ(picks.size(), 60u);
  std::array<int, hostile_kind_count> per_kind{};
  for (const auto& p : picks)
    if (p) ++per_kind[static_cast<std::size_t>(*p)];
  EXPECT_EQ(std::accumulate(per_kind.begin(), per_kind.end(), 0), 18);
  for (std::size_t k = 0; k < hostile_kind_count; ++k) EXPECT_EQ(per_kind[k], 2) << hostile_kind_names[k];
  EXPECT_EQ(pick_hostile(plan, 30), picks);
  EXPECT_NE(pick_hostile(make_bots_plan({.clients = 60, .seconds = 5, .seed = 8}), 30), picks);
  const auto none = pick_hostile(plan, 0);
  EXPECT_EQ(std::count(none.begin(), none.end(), std::nullopt), 60);
  const auto all = pick_hostile(plan, 100);
  EXPECT_EQ(std::count(all.begin(), all.end(), std::nullopt), 0);
}

}  // namespace
}  // namespace scenert::bots
