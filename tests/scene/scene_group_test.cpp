#include <scenert/scene/scene_group.hpp>

#include <gtest/gtest.h>

#include "fixture.hpp"
#include "probe.hpp"

namespace scenert {
namespace {

using namespace std::chrono_literals;

struct group_fixture : ::testing::Test {
  scene_table table = test::small_table();
  std::shared_ptr<const grid::map_data> map = make_map_data(table.maps[0]);
  test::recording_host host;
  manual_clock clk;
  test::probe_log log;
  std::uint64_t ticks = 0;

  std::pair<std::shared_ptr<scene>, test::probe_module*> member(std::uint32_t line, nanoseconds cost = 0ns) {
    auto s = std::make_shared<scene>(*table.find_scene(test::dungeon_id), map, &host);
    s->assign_line({test::dungeon_id, line, 1});
    auto probe = std::make_unique<test::probe_module>();
    auto* raw = probe.get();
    probe->log = &log, probe->clk = &clk, probe->cost = cost;
    s->add_module(std::move(probe));
    return {s, raw};
  }
  scene_group make_group(std::uint32_t slots = 4) {
    scene_group_options o;
    o.hz = 10, o.slots = slots, o.quarantine_after = 3, o.time = &clk;
    return scene_group("group", o);
  }
  void tick(scene_group& g) { (void)g.tick(tick_context{100ms, clk.now(), ticks++}, 3, 1024); }
  std::vector<std::string> take() {
    auto l = std::move(log.lines);
    log.lines.clear();
    return l;
  }
};

using SceneGroup = group_fixture;

TEST(SceneGroupSlots, AreTheBudgetOverTheCapacityAndAtLeastOne) {
  EXPECT_EQ(group_slots(100, 5), 20u);
  EXPECT_EQ(group_slots(100, 10), 10u);
  EXPECT_EQ(group_slots(100, 30), 3u);
  EXPECT_EQ(group_slots(100, 200), 1u);
  EXPECT_EQ(group_slots(100, 0), 1u);
}

TEST_F(SceneGroup, AppliesWaitingAddsAndRemovesOnItsTick) {
  auto g = make_group();
  g.activate();
  auto [a, pa] = member(1);
  g.add_member(a);
  EXPECT_FALSE(a->active());  // waits for the group's tick
  tick(g);
  EXPECT_TRUE(a->active());
  EXPECT_EQ(g.member_count(), 1u);
  EXPECT_EQ(take(), (std::vector<std::string>{"1:init", "1:active", "1:tick"}));
  bool removed = false;
  g.remove_member(a, [&] { removed = true; });
  EXPECT_TRUE(a->active());
  tick(g);
  EXPECT_TRUE(removed);
  EXPECT_FALSE(a->active());
  EXPECT_EQ(g.member_count(), 0u);
  EXPECT_EQ(take(), (std::vector<std::string>{"1:inactive"}));
}

TEST_F(SceneGroup, TicksMembersInOrderEachWithTheTimeTheOthersTookBeforeIt) {
  auto g = make_group();
  g.activate();
  auto [a, pa] = member(1, 5ms);
  auto [b, pb] = member(2, 7ms);
  auto [c, pc] = member(3, 1ms);
  g.add_member(a), g.add_member(b), g.add_member(c);
  tick(g);
  tick(g);
  auto lines = take();
  std::vector<std::string> ticks_only;
  for (auto& l : lines)
    if (l.find("tick") != std::string::npos) ticks_only.push_back(l);
  EXPECT_EQ(ticks_only,
            (std::vector<std::string>{"1:tick", "2:tick", "3:tick", "1:tick", "2:tick", "3:tick"}));
  EXPECT_EQ(pa->intervals.back(), 100ms);
  EXPECT_EQ(pb->intervals.back(), 105ms);
  EXPECT_EQ(pc->intervals.back(), 112ms);
}

TEST_F(SceneGroup, AFailingMemberIsIsolatedAndQuarantinedWhileTheOthersKeepTicking) {
  auto g = make_group();
  g.activate();
  auto [a, pa] = member(1);
  auto [b, pb] = member(2);
  auto [c, pc] = member(3);
  pb->throws = true;
  g.add_member(a), g.add_member(b), g.add_member(c);
  for (int i = 0; i < 6; ++i) tick(g);
  EXPECT_EQ(pa->intervals.size(), 6u);
  EXPECT_EQ(pc->intervals.size(), 6u);
  EXPECT_EQ(pb->intervals.size(), 3u);  // quarantined after three failures in a row
  EXPECT_TRUE(b->quarantined());
  EXPECT_EQ(g.member_failures(), 3u);
  ASSERT_EQ(host.quarantines.size(), 1u);
  EXPECT_EQ(host.quarantines[0].line, 2u);
  EXPECT_FALSE(g.quarantined());
}

TEST_F(SceneGroup, CountsAndNamesMembersThatOverrunTheirBudget) {
  auto g = make_group(4);  // 100 ms / 4 members = 25 ms each
  g.activate();
  auto [a, pa] = member(1, 10ms);
  auto [b, pb] = member(2, 30ms);
  g.add_member(a), g.add_member(b);
  tick(g);
  tick(g);
  EXPECT_EQ(a->overruns(), 0u);
  EXPECT_EQ(b->overruns(), 2u);
  EXPECT_EQ(g.member_overruns(), 2u);
}

TEST_F(SceneGroup, DeactivatingTheGroupDeactivatesEveryMemberOnce) {
  auto g = make_group();
  g.activate();
  auto [a, pa] = member(1);
  auto [b, pb] = member(2);
  g.add_member(a);
  tick(g);
  g.add_member(b);  // still waiting
  g.deactivate();
  EXPECT_FALSE(a->active());
  EXPECT_FALSE(b->active());
  EXPECT_EQ(a->deactivations(), 1u);
  EXPECT_EQ(b->deactivations(), 1u);
}

// Seed 004's treasure chest for a grouped line: the group activates and deactivates it.
TEST_F(SceneGroup, ATreasureChestIsClosedAndPresentWhenAGroupedLineReopens) {
  auto g = make_group();
  g.activate();
  auto [a, pa] = member(1);
  g.add_member(a);
  tick(g);
  ASSERT_TRUE(a->chest().present);
  EXPECT_TRUE(a->open_chest());
  g.remove_member(a);
  tick(g);
  EXPECT_FALSE(a->chest().present);
  g.add_member(a);
  tick(g);
  EXPECT_TRUE(a->chest().present);
  EXPECT_FALSE(a->chest().opened);
  EXPECT_EQ(a->inits(), 1u);
  EXPECT_EQ(a->activations(), 2u);
}

}  // namespace
}  // namespace scenert
