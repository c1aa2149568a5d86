#include <scenert/loadtest/plan.hpp>

#include <scenert/config/table_loader.hpp>

#include <gtest/gtest.h>

#include <map>

namespace scenert::loadtest {
namespace {

constexpr const char* table_text = R"({
  "version": 1,
  "maps": [
    { "id": 1, "name": "village", "width": 128, "height": 96, "area_width": 16, "area_height": 16 },
    { "id": 2, "name": "cellar", "width": 48, "height": 40, "area_width": 12, "area_height": 12 }
  ],
  "scenes": [
    { "id": 1, "name": "Village", "kind": "town", "capacity": 100, "min_lines": 1, "max_lines": 4, "map": 1 },
    { "id": 3, "name": "Meadow", "kind": "field", "capacity": 100, "min_lines": 1, "max_lines": 4, "map": 1 },
    { "id": 5, "name": "Fair", "kind": "space", "capacity": 10, "bind_town": 1 },
    { "id": 2, "name": "Rat Cellar", "kind": "dungeon", "structure": "group", "capacity": 5,
      "min_lines": 0, "max_lines": 50, "map": 2 }
  ]
})";

const scene_table& table() {
  static const load_result loaded = parse_table(table_text, "plan_test.json");
  EXPECT_TRUE(loaded.ok()) << (loaded.diagnostics.empty() ? "" : format_diagnostic(loaded.diagnostics[0]));
  return *loaded.table;
}

plan_options options(std::uint64_t seed) { return {.players = 300, .seconds = 8, .rate = 100, .seed = seed}; }

TEST(LoadPlan, SameSeedGivesTheSameSteps) {
  const auto a = make_plan(table(), options(7));
  const auto b = make_plan(table(), options(7));
  ASSERT_EQ(a.steps.size(), b.steps.size());
  EXPECT_EQ(a.digest, b.digest);
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].at, b.steps[i].at);
    EXPECT_EQ(a.steps[i].player, b.steps[i].player);
    EXPECT_EQ(a.steps[i].what, b.steps[i].what);
  }
}

TEST(LoadPlan, OtherSeedsGiveOtherSteps) {
  EXPECT_NE(make_plan(table(), options(7)).digest, make_plan(table(), options(8)).digest);
}

TEST(LoadPlan, StepsAreInTimeOrderWithinTheRun) {
  const auto plan = make_plan(table(), options(3));
  ASSERT_FALSE(plan.steps.empty());
  for (std::size_t i = 1; i < plan.steps.size(); ++i) EXPECT_LE(plan.steps[i - 1].at, plan.steps[i].at);
  EXPECT_LT(plan.steps.back().at, std::chrono::seconds(8));
}

TEST(LoadPlan, EveryPlayerFirstEntersATownOrFieldAtItsArrivalTime) {
  const auto plan = make_plan(table(), options(3));
  std::map<player_id, plan_step> first;
  for (const auto& s : plan.steps) first.try_emplace(s.player, s);
  ASSERT_EQ(first.size(), 300u);
  for (const auto& [p, s] : first) {
    EXPECT_EQ(s.what, step_kind::enter) << "player " << p;
    EXPECT_TRUE(s.scene == 1 || s.scene == 3) << "player " << p;
    EXPECT_EQ(s.at, std::chrono::milliseconds(10) * (p - 1)) << "player " << p;  // 100 arrivals per second
  }
}

TEST(LoadPlan, MatesJoinALeaderWhoWentThereBefore) {
  const auto plan = make_plan(table(), options(5));
  std::map<player_id, std::chrono::nanoseconds> last_transfer;
  std::size_t joins = 0;
  for (const auto& s : plan.steps) {
    if (s.what == step_kind::transfer) last_transfer[s.player] = s.at;
    if (s.what != step_kind::join_team) continue;
    ++joins;
    ASSERT_TRUE(last_transfer.count(s.mate)) << "player " << s.player << " joins " << s.mate;
    EXPECT_LT(last_transfer[s.mate], s.at);
    EXPECT_LT(s.mate, s.player);
    EXPECT_LE(s.player - s.mate, 4u);  // parties of at most five
  }
  EXPECT_GT(joins, 0u);
}

TEST(LoadPlan, WalksStayOnTheMap) {
  const auto plan = make_plan(table(), options(9));
  EXPECT_GT(plan.counts[static_cast<int>(step_kind::move)], 300u);
  for (const auto& s : plan.steps)
    if (s.what == step_kind::move) {
      EXPECT_LT(s.x, 128u);
      EXPECT_LT(s.y, 96u);
    }
}

TEST(LoadPlan, PlansPhasesOnlyWhenAsked) {
  auto o = options(11);
  const auto without = make_plan(table(), o);
  EXPECT_EQ(without.counts[static_cast<int>(step_kind::enter_phase)], 0u);
  o.phases = true;
  const auto with = make_plan(table(), o);
  EXPECT_GT(with.counts[static_cast<int>(step_kind::enter_phase)], 0u);
  EXPECT_GE(with.counts[static_cast<int>(step_kind::enter_phase)],
            with.counts[static_cast<int>(step_kind::leave_phase)]);
}

TEST(LoadPlan, CountsAddUpToTheSteps) {
  const auto plan = make_plan(table(), options(13));
  std::uint64_t total = 0;
  for (auto n : plan.counts) total += n;
  EXPECT_EQ(total, plan.steps.size());
  EXPECT_EQ(plan.counts[static_cast<int>(step_kind::enter)], 300u);
}

}  // namespace
}  // namespace scenert::loadtest
