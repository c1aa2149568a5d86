// The load test's driver against a real world: every world_errc is counted under its own code.
#include <scenert/loadtest/driver.hpp>

#include <scenert/config/table_loader.hpp>
#include <scenert/runtime/processor_pool.hpp>
#include <scenert/space/space_module.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <thread>

namespace scenert::loadtest {
namespace {

constexpr const char* table_text = R"({
  "version": 1,
  "runtime": { "workers": 1 },
  "maps": [ { "id": 1, "name": "m", "width": 64, "height": 64, "area_width": 16, "area_height": 16 } ],
  "scenes": [
    { "id": 1, "name": "Town", "kind": "town", "capacity": 1, "min_lines": 1, "max_lines": 1, "map": 1 },
    { "id": 3, "name": "Crypt", "kind": "dungeon", "capacity": 5, "max_lines": 1, "map": 1, "instances": "party" },
    { "id": 5, "name": "Fair", "kind": "space", "capacity": 5, "bind_town": 1 }
  ]
})";

TEST(LoadDriver, EveryStepKindBecomesARequest) {
  for (std::size_t k = 0; k < step_kind_count; ++k) {
    plan_step s{.player = 1, .what = static_cast<step_kind>(k), .scene = 1, .mate = 2, .party = 3};
    EXPECT_TRUE(to_request(s).has_value()) << to_string(s.what);
  }
}

// Each step provokes one answer; the tally must hold each code apart (the folding of codes past a
// hard-coded count into one was a bug).
TEST(LoadDriver, CountsEachAnswerUnderItsOwnCode) {
  const load_result loaded = parse_table(table_text, "driver_test.json");
  ASSERT_TRUE(loaded.ok());
  const scene_table& table = *loaded.table;

  struct expectation {
    plan_step step;
    world_errc answer;
  };
  const std::vector<expectation> script{
      {{.player = 1, .what = step_kind::enter, .scene = 1}, world_errc::ok},
      {{.player = 2, .what = step_kind::enter, .scene = 1}, world_errc::line_full},
      {{.player = 3, .what = step_kind::enter, .scene = 99}, world_errc::unknown_scene},
      {{.player = 1, .what = step_kind::enter, .scene = 1}, world_errc::already_in_scene},
      {{.player = 4, .what = step_kind::transfer, .scene = 1}, world_errc::not_in_scene},
      {{.player = 4, .what = step_kind::join_team, .mate = 6}, world_errc::teammate_not_found},
      {{.player = 1, .what = step_kind::enter_phase, .scene = 1}, world_errc::unknown_space},
      {{.player = 1, .what = step_kind::leave_phase}, world_errc::not_in_space},
      {{.player = 5, .what = step_kind::enter_instance, .scene = 3, .party = 7}, world_errc::ok},
      {{.player = 6, .what = step_kind::enter_instance, .scene = 3, .party = 8}, world_errc::line_full},
  };
  load_plan plan;
  plan.players = 6;
  for (const auto& e : script) plan.steps.push_back(e.step);  // all due at once, issued in order

  pool_options po;
  po.workers = 1;
  processor_pool pool(po);
  world_options wo;
  wo.on_new_line = attach_space_modules(table);
  auto w = world::create(table, pool, std::move(wo));
  ASSERT_TRUE(pool.start());
  w->start();
  {
    load_driver driver(*w, plan);
    driver.start();
    while (!driver.done()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(driver.wait_answers(std::chrono::seconds(30)));
    w->shutdown().wait();  // every answer is in: the tally is this thread's to read

    std::map<world_errc, std::uint64_t> expected;
    std::uint64_t expected_ok = 0;
    for (const auto& e : script)
      e.answer == world_errc::ok ? (void)++expected_ok : (void)++expected[e.answer];
    const answer_tally& t = driver.tally();
    std::uint64_t ok = 0;
    for (auto n : t.ok) ok += n;
    EXPECT_EQ(ok, expected_ok);
    for (std::size_t c = 0; c < world_errc_count; ++c) {
      const auto code = static_cast<world_errc>(c);
      const auto it = expected.find(code);
      EXPECT_EQ(t.errors[c], it == expected.end() ? 0 : it->second) << to_string(code);
      EXPECT_EQ(t.first_error[c].empty(), t.errors[c] == 0) << to_string(code);
    }
    EXPECT_EQ(t.enters_ok, 2U);  // players 1 and 5
  }
  (void)pool.stop();
}

}  // namespace
}  // namespace scenert::loadtest
