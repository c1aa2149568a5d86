// The world's lines over time: idle grace, pooling, stale handles, groups, failures, shutdown.

#include <scenert/scene/world.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

#include "fixture.hpp"
#include "probe.hpp"

namespace scenert {
namespace {

using namespace std::chrono_literals;
using test::dungeon_id;
using test::field_id;
using test::town_id;
using R = world_request;

// Counts line objects made, and keeps a probe in each so a test can make one fail.
struct probes {
  std::vector<test::probe_module*> made;
  test::probe_log log;
  world_options options() {
    world_options o;
    o.on_new_line = [this](scene& s) {
      auto p = std::make_unique<test::probe_module>();
      p->log = &log;
      made.push_back(p.get());
      s.add_module(std::move(p));
    };
    return o;
  }
};

test::probe_module* probe_of(scene& s) { return static_cast<test::probe_module*>(s.modules().at(0).get()); }

TEST(WorldLines, AnEmptyLineAboveMinLinesClosesOnlyAfterTheIdleGrace) {
  test::manual_world mw;
  for (player_id p = 1; p <= 4; ++p) ASSERT_TRUE(mw.ask(R::enter(p, town_id)));
  ASSERT_EQ(mw.where(4).line.line, 2u);
  ASSERT_TRUE(mw.ask(R::leave(4)));
  mw.step(500ms);
  EXPECT_EQ(mw.scene_of(*mw.snap(), town_id).open_lines, 2u);  // within the 1 s grace
  mw.step(600ms);
  auto s = mw.snap();
  EXPECT_EQ(mw.scene_of(*s, town_id).open_lines, 1u);
  EXPECT_EQ(mw.scene_of(*s, town_id).lines_closed, 1u);
  EXPECT_EQ(mw.scene_of(*s, town_id).lines_opened, 2u);
}

TEST(WorldLines, MinLinesStayOpenWhenEmpty) {
  test::manual_world mw;
  ASSERT_TRUE(mw.ask(R::enter(1, town_id)));
  ASSERT_TRUE(mw.ask(R::leave(1)));
  mw.step(3s);
  auto s = mw.snap();
  EXPECT_EQ(mw.scene_of(*s, town_id).open_lines, 1u);
  EXPECT_EQ(mw.scene_of(*s, town_id).lines_closed, 0u);
}

TEST(WorldLines, ComingAndGoingWithinTheGraceNeverThrashes) {
  test::manual_world mw;
  for (player_id p = 1; p <= 4; ++p) ASSERT_TRUE(mw.ask(R::enter(p, town_id)));
  for (int round = 0; round < 8; ++round) {  // 8 x 250 ms on line 2, away most of each second
    ASSERT_TRUE(mw.ask(R::leave(4)));
    mw.step(500ms);
    auto back = mw.ask(R::enter(4, town_id));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->line.line, 2u);  // the empty line in its grace is reused, no new line opens
  }
  auto s = mw.snap();
  EXPECT_EQ(mw.scene_of(*s, town_id).lines_opened, 2u);
  EXPECT_EQ(mw.scene_of(*s, town_id).lines_closed, 0u);
}

// Enter and leave within one world tick: the line never puts the player on its grid, so viewers hear
// nothing and modules see no visit; it still hears the leave, finds itself empty and closes after its
// grace. The same two requests a tick apart are heard in full (the check can fail).
TEST(WorldLines, APlayerWhoEntersAndLeavesWithinOneTickNeverStandsOnTheLine) {
  probes pr;
  auto o = pr.options();
  auto heard = std::make_shared<std::vector<std::string>>();
  o.on_line_events = [heard](line_handle l, phase_id, std::span<const line_event> events) {
    for (const auto& e : events)
      if (!e.monster)
        heard->push_back(
            fmt::format("{}:{} {}", l.line, e.what == line_event::kind::left ? "left" : "entered", e.player));
  };
  test::manual_world mw(test::small_table(), std::move(o));
  for (player_id p = 1; p <= 3; ++p) ASSERT_TRUE(mw.ask(R::enter(p, town_id)));  // line 1 is full
  heard->clear();
  auto entered = mw.w->submit(R::enter(4, town_id));  // opens line 2 ...
  auto left = mw.w->submit(R::leave(4));              // ... and leaves it, in the same tick
  mw.step();
  ASSERT_TRUE(entered.get());
  ASSERT_TRUE(left.get());
  EXPECT_TRUE(heard->empty()) << heard->front();
  EXPECT_EQ(std::count(pr.log.lines.begin(), pr.log.lines.end(), "2:enter 4"), 0);
  EXPECT_EQ(std::count(pr.log.lines.begin(), pr.log.lines.end(), "2:leave 4"), 0);
  EXPECT_EQ(mw.scene_of(*mw.snap(), town_id).open_lines, 2u);
  mw.step(1200ms);  // past the idle grace: the leave told line 2 it is empty
  auto s = mw.snap();
  EXPECT_EQ(mw.scene_of(*s, town_id).open_lines, 1u);
  EXPECT_EQ(mw.scene_of(*s, town_id).lines_closed, 1u);

  ASSERT_TRUE(mw.ask(R::enter(5, town_id)));
  ASSERT_TRUE(mw.ask(R::leave(5)));
  EXPECT_EQ(*heard, (std::vector<std::string>{"2:entered 5", "2:left 5"}));
  EXPECT_EQ(std::count(pr.log.lines.begin(), pr.log.lines.end(), "2:enter 5"), 1);
}

TEST(WorldLines, LinesAreCreatedLazilyAndTheirObjectsReusedFromABoundedPool) {
  probes pr;
  auto o = pr.options();
  o.line_pool = 1;
  test::manual_world mw(test::small_table(), std::move(o));
  std::size_t at_start = pr.made.size();
  EXPECT_EQ(at_start, 3u);  // the min_lines of town, dungeon and field; guild has none
  for (player_id p = 1; p <= 9; ++p) ASSERT_TRUE(mw.ask(R::enter(p, town_id)));  // 3 town lines
  EXPECT_EQ(pr.made.size(), at_start + 2);
  for (player_id p = 1; p <= 9; ++p) ASSERT_TRUE(mw.ask(R::leave(p)));
  mw.step(2s);
  EXPECT_EQ(mw.scene_of(*mw.snap(), town_id).open_lines, 1u);
  for (player_id p = 1; p <= 9; ++p) ASSERT_TRUE(mw.ask(R::enter(p, town_id)));
  EXPECT_EQ(pr.made.size(), at_start + 3);  // one from the pool (bound 1), one new
  auto inits =
      std::count_if(pr.log.lines.begin(), pr.log.lines.end(), [](auto& l) { return l.ends_with(":init"); });
  EXPECT_EQ(static_cast<std::size_t>(inits), pr.made.size());  // on_init once per object, never again
}

TEST(WorldLines, AHandleToAClosedAndReusedLineIsStale) {
  test::manual_world mw;
  for (player_id p = 1; p <= 4; ++p) ASSERT_TRUE(mw.ask(R::enter(p, town_id)));
  auto old = mw.where(4).line;
  ASSERT_TRUE(mw.ask(R::leave(4)));
  mw.step(2s);
  auto stale = mw.ask(R::enter_line(9, old));
  EXPECT_EQ(stale.code(), world_errc::stale_line);
  ASSERT_TRUE(mw.ask(R::enter(4, town_id)));
  auto fresh = mw.where(4).line;
  EXPECT_EQ(fresh.line, old.line);
  EXPECT_NE(fresh.generation, old.generation);
  auto r = mw.ask(R::transfer_line(1, old));
  EXPECT_EQ(r.code(), world_errc::stale_line);
  EXPECT_NE(r.error().message.find("closed since"), std::string::npos);
  EXPECT_EQ(mw.w->line_object(fresh)->player_count(), 1u);  // nobody sent to the reused line by mistake
}

TEST(WorldLines, GroupsJoinThePoolWithTheirFirstMemberAndLeaveItWhenEmpty) {
  test::manual_world mw;  // budget 20 / capacity 5: 4 dungeons per group
  for (player_id p = 1; p <= 25; ++p) ASSERT_TRUE(mw.ask(R::enter(p, dungeon_id)));
  auto s = mw.snap();
  EXPECT_EQ(mw.scene_of(*s, dungeon_id).open_lines, 5u);
  EXPECT_EQ(s->group_services, 2u);
  EXPECT_EQ(mw.pool->metrics().services, 1u + 2u + 2u);  // world, town and field lines, 2 groups
  for (player_id p = 1; p <= 25; ++p) ASSERT_TRUE(mw.ask(R::leave(p)));
  mw.step(2s);
  s = mw.snap();
  EXPECT_EQ(mw.scene_of(*s, dungeon_id).open_lines, 1u);
  EXPECT_EQ(s->group_services, 1u);
  EXPECT_EQ(mw.pool->metrics().services, 1u + 2u + 1u);
}

// Seed 004's treasure chest through the world, for a single line and a grouped one.
TEST(WorldLines, AReopenedLineHasItsChestClosedAndPresent) {
  for (scene_id id : {town_id, dungeon_id}) {
    test::manual_world mw;
    const auto& def = *mw.table.find_scene(id);
    for (player_id p = 1; p <= def.capacity + 1; ++p) ASSERT_TRUE(mw.ask(R::enter(p, id)));
    auto line = mw.where(def.capacity + 1).line;
    ASSERT_EQ(line.line, 2u);
    auto obj = mw.w->line_object(line);
    EXPECT_TRUE(obj->open_chest());
    ASSERT_TRUE(mw.ask(R::leave(def.capacity + 1)));
    mw.step(2s);
    EXPECT_FALSE(obj->active());
    EXPECT_FALSE(obj->chest().present);
    for (player_id p = 1; p <= def.capacity; ++p) ASSERT_TRUE(mw.ask(R::leave(p)));
    for (player_id p = 1; p <= def.capacity + 1; ++p) ASSERT_TRUE(mw.ask(R::enter(100 + p, id)));
    auto reopened = mw.w->line_object(mw.where(100 + def.capacity + 1).line);
    EXPECT_EQ(reopened, obj) << "the pooled object is reused";
    EXPECT_TRUE(reopened->chest().present);
    EXPECT_FALSE(reopened->chest().opened);
    EXPECT_EQ(reopened->inits(), 1u);
    EXPECT_EQ(reopened->activations(), 2u);
  }
}

TEST(WorldLines, AFailingLineIsQuarantinedAndItsPlayersMovedOut) {
  for (scene_id id : {town_id, dungeon_id}) {
    probes pr;
    test::manual_world mw(test::small_table(), pr.options());
    ASSERT_TRUE(mw.ask(R::enter(1, id)));
    ASSERT_TRUE(mw.ask(R::enter(2, id)));
    auto bad = mw.where(1).line;
    auto obj = mw.w->line_object(bad);
    probe_of(*obj)->throws = true;
    mw.step(500ms);
    EXPECT_TRUE(obj->quarantined());
    for (player_id p : {1, 2}) {
      auto loc = mw.where(p);
      EXPECT_EQ(loc.where, location::state::in_line);
      EXPECT_EQ(loc.line.scene, id);
      EXPECT_NE(loc.line.line, bad.line);
    }
    auto r = mw.ask(R::enter_line(3, bad));
    EXPECT_EQ(r.code(), world_errc::stale_line);  // closed once empty
    auto s = mw.snap();
    EXPECT_EQ(mw.scene_of(*s, id).quarantined, 1u);
    EXPECT_EQ(mw.scene_of(*s, id).open_lines, 1u);
    EXPECT_EQ(s->players, 2u);
    EXPECT_FALSE(obj->active());
    EXPECT_EQ(mw.w->line_object(mw.where(1).line)->failures(), 0u);
  }
}

TEST(WorldLines, PlayersThatFindNoOtherLineAreEvictedNotLost) {
  std::vector<player_id> evicted;
  probes pr;
  auto o = pr.options();
  o.on_evicted = [&](player_id p, line_handle, std::string_view) { evicted.push_back(p); };
  test::manual_world mw(test::small_table(), std::move(o));
  for (player_id p = 1; p <= 4; ++p) ASSERT_TRUE(mw.ask(R::enter(p, field_id)));  // 2 lines of 2
  auto bad = mw.where(1).line;
  probe_of(*mw.w->line_object(bad))->throws = true;
  mw.step(500ms);
  EXPECT_EQ(evicted.size(), 2u);
  for (player_id p : evicted) EXPECT_EQ(mw.where(p).where, location::state::none);
  auto s = mw.snap();
  EXPECT_EQ(mw.scene_of(*s, field_id).evicted, 2u);
  EXPECT_EQ(s->players, 2u);
  EXPECT_EQ(mw.scene_of(*s, field_id).open_lines, 1u);  // min_lines 1 still holds
  auto again = mw.ask(R::enter(5, field_id));           // the failed line's id opens afresh
  ASSERT_TRUE(again);
  EXPECT_EQ(again->line.line, bad.line);
  EXPECT_GT(again->line.generation, bad.generation);
}

TEST(WorldLines, ShutdownTakesEveryoneOffAndClosesEveryLineOnce) {
  probes pr;
  test::manual_world mw(test::small_table(), pr.options());
  for (player_id p = 1; p <= 12; ++p) ASSERT_TRUE(mw.ask(R::enter(p, p % 2 ? town_id : dungeon_id)));
  ASSERT_TRUE(mw.ask(R::enter(50, test::guild_id)));
  auto pending = mw.w->submit(R::transfer(1, dungeon_id));
  auto done = mw.w->shutdown();
  mw.step(500ms);
  ASSERT_EQ(done.wait_for(0s), std::future_status::ready);
  auto s = mw.w->snapshot();
  EXPECT_TRUE(s->shut_down);
  EXPECT_EQ(s->players, 0u);
  EXPECT_EQ(s->group_services, 0u);
  for (const auto& sc : s->scenes) EXPECT_EQ(sc.open_lines, 0u) << sc.def->name;
  EXPECT_EQ(mw.pool->metrics().services, 1u);  // the world only
  auto t = pending.get();
  EXPECT_TRUE(t.has_value() || t.code() == world_errc::shutting_down);
  EXPECT_EQ(mw.ask(R::enter(99, town_id)).code(), world_errc::shutting_down);
  std::map<std::string, std::pair<int, int>> rounds;  // line -> (active, inactive)
  for (const auto& l : pr.log.lines) {
    auto colon = l.find(':');
    auto key = l.substr(0, colon);
    if (l.ends_with(":active")) ++rounds[key].first;
    if (l.ends_with(":inactive")) ++rounds[key].second;
  }
  std::size_t actives = 0, inactives = 0;
  for (auto& [k, v] : rounds) actives += v.first, inactives += v.second;
  EXPECT_EQ(actives, inactives);
  EXPECT_GT(actives, 0u);
}

}  // namespace
}  // namespace scenert

namespace scenert {
namespace {

TEST(WorldLines, GroupsAreKeyedByFrameRate) {
  auto table = test::small_table();
  auto fast = *table.find_scene(test::dungeon_id);
  fast.id = 11, fast.name = "fast dungeon", fast.frame_rate = 20, fast.min_lines = 0;
  table.scenes.push_back(fast);
  test::manual_world mw(table);
  ASSERT_TRUE(mw.ask(world_request::enter(1, 11)));
  auto s = mw.snap();
  EXPECT_EQ(s->group_services, 2u);  // the 10 Hz dungeon's group and a 20 Hz one
  std::vector<double> rates;
  for (const auto& m : mw.pool->metrics(true).per_service)
    if (m.name.starts_with("group@")) rates.push_back(m.hz);
  std::sort(rates.begin(), rates.end());
  EXPECT_EQ(rates, (std::vector<double>{10, 20}));
  ASSERT_TRUE(mw.ask(world_request::enter(2, test::dungeon_id)));
  EXPECT_EQ(mw.snap()->group_services, 2u);  // the 10 Hz group had room
}

}  // namespace
}  // namespace scenert
