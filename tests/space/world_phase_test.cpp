// Phases through the world: requests, errors, and what happens to a player in a phase when it
// leaves, transfers or the world shuts down. Manual clock throughout.

#include <scenert/space/space_module.hpp>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "../scene/fixture.hpp"

namespace scenert {
namespace {

using namespace std::chrono_literals;
using test::dungeon_id;
using test::field_id;
using test::space_id;  // bound to the town: min_spaces 1, max_spaces 2
using test::town_id;
using R = world_request;

const scene_table& table() {
  static const scene_table t = test::small_table();
  return t;
}

world_options with_phases(space_limits limits = {}) {
  world_options o;
  o.on_new_line = attach_space_modules(table(), std::move(limits));
  return o;
}

space_module& phases_of(test::manual_world& mw, line_handle town) {
  auto* m = find_space_module(*mw.w->line_object(town));
  EXPECT_NE(m, nullptr);
  return *m;
}

TEST(WorldPhases, EnteringAPhaseSwitchesThenLandsInIt) {
  test::manual_world mw(table(), with_phases());
  auto town = *mw.ask(R::enter(1, town_id));
  auto f = mw.w->submit(R::enter_phase(1, space_id));
  auto during = mw.w->locate(1);
  mw.step(10ms);
  auto loc = during.get();
  EXPECT_EQ(loc.where, location::state::in_line);
  EXPECT_TRUE(loc.phase_pending);  // switching into the phase: one request at a time
  mw.step();
  auto r = f.get();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->line, town.line);
  EXPECT_EQ(r->space, space_id);
  EXPECT_NE(r->phase, 0u);
  loc = mw.where(1);
  EXPECT_EQ(loc.phase, r->phase);
  EXPECT_EQ(loc.space, space_id);
  EXPECT_FALSE(loc.phase_pending);
  auto& phases = phases_of(mw, town.line);
  ASSERT_NE(phases.phase(r->phase), nullptr);
  EXPECT_TRUE(phases.phase(r->phase)->has_player(1));
  EXPECT_FALSE(mw.w->line_object(town.line)->has_player(1));
}

TEST(WorldPhases, BadPhaseRequestsGetTheirOwnCodes) {
  test::manual_world mw(table(), with_phases());
  ASSERT_TRUE(mw.ask(R::enter(1, town_id)));
  ASSERT_TRUE(mw.ask(R::enter(2, field_id)));
  EXPECT_EQ(mw.ask(R::enter_phase(1, 99)).code(), world_errc::unknown_space);
  EXPECT_EQ(mw.ask(R::enter_phase(1, town_id)).code(), world_errc::unknown_space);
  EXPECT_EQ(mw.ask(R::enter_phase(3, space_id)).code(), world_errc::not_in_scene);
  auto wrong = mw.ask(R::enter_phase(2, space_id));
  EXPECT_EQ(wrong.code(), world_errc::wrong_town);
  EXPECT_NE(wrong.error().message.find("binds to town 1"), std::string::npos) << wrong.error().message;
  EXPECT_EQ(mw.ask(R::leave_phase(1)).code(), world_errc::not_in_space);
  ASSERT_TRUE(mw.ask(R::enter_phase(1, space_id)));
  EXPECT_EQ(mw.ask(R::enter_phase(1, space_id)).code(), world_errc::space_in_space);
  EXPECT_EQ(mw.where(1).space, space_id);  // none of that moved the player
}

TEST(WorldPhases, ASecondRequestWhileOneIsUnderWayIsRefused) {
  test::manual_world mw(table(), with_phases());
  ASSERT_TRUE(mw.ask(R::enter(1, town_id)));
  auto first = mw.w->submit(R::enter_phase(1, space_id));
  auto second = mw.w->submit(R::leave(1));
  mw.step();
  EXPECT_EQ(second.get().code(), world_errc::request_pending);
  EXPECT_TRUE(first.get());
}

TEST(WorldPhases, AFullSpaceIsRefusedOnThatTownLine) {
  test::manual_world mw(table(), with_phases());
  for (player_id p = 1; p <= 3; ++p) ASSERT_TRUE(mw.ask(R::enter(p, town_id)));
  ASSERT_TRUE(mw.ask(R::enter_phase(1, space_id)));
  ASSERT_TRUE(mw.ask(R::enter_phase(2, space_id)));
  auto full = mw.ask(R::enter_phase(3, space_id));
  EXPECT_EQ(full.code(), world_errc::space_full);
  EXPECT_NE(full.error().message.find("2 of 2 running"), std::string::npos) << full.error().message;
  auto loc = mw.where(3);
  EXPECT_EQ(loc.phase, 0u);
  EXPECT_FALSE(loc.phase_pending);
}

TEST(WorldPhases, LeavingAPhaseReturnsThePlayerToItsTownLine) {
  test::manual_world mw(table(), with_phases());
  auto town = *mw.ask(R::enter(1, town_id));
  auto in = *mw.ask(R::enter_phase(1, space_id));
  ASSERT_TRUE(mw.ask(R::move(1, {20, 21})));
  auto out = mw.ask(R::leave_phase(1));
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->line, town.line);
  EXPECT_EQ(out->phase, 0u);
  mw.step();
  auto& phases = phases_of(mw, town.line);
  EXPECT_EQ(phases.running_phases(), 0u);  // closed on the town's next tick
  EXPECT_EQ(phases.parked(space_id), 1u);  // and parked
  auto obj = mw.w->line_object(town.line);
  ASSERT_TRUE(obj->has_player(1));
  EXPECT_EQ(obj->grid().position_of(*obj->entity_of(1)), (grid::cell_point{20, 21}));  // where it walked
  EXPECT_EQ(mw.where(1).phase, 0u);
  (void)in;
}

// A phase whose ticks keep failing closes and sends its players back to the town; the world hears
// of it at once, so the player is on the town line, out of any phase, and may enter a new one.
TEST(WorldPhases, AFailingPhaseSendsItsPlayersHomeAndTheWorldKnows) {
  struct failing final : scene_module {
    explicit failing(std::shared_ptr<std::atomic<bool>> a) : armed(std::move(a)) {}
    std::shared_ptr<std::atomic<bool>> armed;
    void on_tick(scene&, const tick_context&) override {
      if (armed->load()) throw std::runtime_error("quest script bug");
    }
  };
  auto armed = std::make_shared<std::atomic<bool>>(false);
  space_limits limits;
  limits.quarantine_after = 2;
  limits.on_new_phase = [armed](scene&, scene& phase) { phase.add_module(std::make_unique<failing>(armed)); };
  test::manual_world mw(table(), with_phases(limits));
  auto town = *mw.ask(R::enter(1, town_id));
  auto in = mw.ask(R::enter_phase(1, space_id));
  ASSERT_TRUE(in) << in.error().message;
  armed->store(true);
  mw.step(1s);  // two failing phase ticks, then the town's tick sends the player home
  armed->store(false);
  auto loc = mw.where(1);
  EXPECT_EQ(loc.where, location::state::in_line);
  EXPECT_EQ(loc.line, town.line);
  EXPECT_EQ(loc.phase, 0u) << "the world still has the player in the failed phase";
  EXPECT_FALSE(loc.phase_pending);
  EXPECT_TRUE(mw.w->line_object(town.line)->has_player(1));
  EXPECT_EQ(phases_of(mw, town.line).running_phases(), 0u);
  auto again = mw.ask(R::enter_phase(1, space_id));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_NE(again->phase, in->phase);
}

TEST(WorldPhases, LeavingTheWorldFromAPhaseLosesNobody) {
  test::manual_world mw(table(), with_phases());
  auto town = *mw.ask(R::enter(1, town_id));
  ASSERT_TRUE(mw.ask(R::enter_phase(1, space_id)));
  ASSERT_TRUE(mw.ask(R::leave(1)));
  mw.step();
  EXPECT_EQ(mw.where(1).where, location::state::none);
  EXPECT_EQ(phases_of(mw, town.line).running_phases(), 0u);
  EXPECT_FALSE(phases_of(mw, town.line).phase_of(1));
  EXPECT_EQ(mw.snap()->players, 0u);
}

TEST(WorldPhases, ATransferFromAPhaseLandsOnItsTarget) {
  test::manual_world mw(table(), with_phases());
  auto town = *mw.ask(R::enter(1, town_id));
  ASSERT_TRUE(mw.ask(R::enter_phase(1, space_id)));
  auto r = mw.ask(R::transfer(1, dungeon_id));
  ASSERT_TRUE(r) << r.error().message;
  mw.step();
  auto loc = mw.where(1);
  EXPECT_EQ(loc.line.scene, dungeon_id);
  EXPECT_EQ(loc.phase, 0u);
  EXPECT_EQ(phases_of(mw, town.line).running_phases(), 0u);
  EXPECT_TRUE(mw.w->line_object(loc.line)->has_player(1));
}

TEST(WorldPhases, MovesInAPhaseWalkThePhasesGrid) {
  test::manual_world mw(table(), with_phases());
  auto town = *mw.ask(R::enter(1, town_id));
  auto in = *mw.ask(R::enter_phase(1, space_id));
  auto r = mw.ask(R::move(1, {12, 13}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->phase, in.phase);
  mw.step();
  scene* phase = phases_of(mw, town.line).phase(in.phase);
  ASSERT_NE(phase, nullptr);
  EXPECT_EQ(phase->grid().position_of(*phase->entity_of(1)), (grid::cell_point{12, 13}));
}

// A move sent while its client still stood on the town (the phase entry on its way) must not walk
// the player inside the phase it lands in; one meant for that phase does.
TEST(WorldPhases, AMoveMeantForTheTownDoesNotWalkThePlayerInItsPhase) {
  test::manual_world mw(table(), with_phases());
  auto town = *mw.ask(R::enter(1, town_id));
  auto entering = mw.w->submit(R::enter_phase(1, space_id));
  auto late = mw.w->submit(R::move_on(1, town.line, 0, {12, 13}));
  mw.step();
  auto in = entering.get();
  ASSERT_TRUE(in) << in.error().message;
  EXPECT_TRUE(late.get()) << "the player still stood on that line when the world read the move";
  scene* phase = phases_of(mw, town.line).phase(in->phase);
  ASSERT_NE(phase, nullptr);
  EXPECT_NE(phase->grid().position_of(*phase->entity_of(1)), (grid::cell_point{12, 13}));
  ASSERT_TRUE(mw.ask(R::move_on(1, town.line, in->phase, {12, 13})));
  mw.step();
  EXPECT_EQ(phase->grid().position_of(*phase->entity_of(1)), (grid::cell_point{12, 13}));
}

// Listeners (the network front) hear each player's events in the order it went: `entered` a view,
// then `left` it, then `entered` the next, whichever lines and phases report them and in whatever
// order their threads run. Requests come back to back, as clients send them: a town entry and a
// phase entry in one town tick, a transfer right after landing, a phase left for a dungeon.
TEST(WorldPhases, EachPlayersEventsArriveInTheOrderItWent) {
  struct heard {
    std::mutex m;
    std::map<player_id, std::optional<std::pair<line_handle, phase_id>>> open;  // the view it stands in
    std::vector<std::string> wrong;
    std::size_t events = 0;
    std::set<player_id> gone;  // left the world
  };
  auto log = std::make_shared<heard>();
  world_options o = with_phases();
  o.on_line_events = [log](line_handle line, phase_id phase, std::span<const line_event> events) {
    std::lock_guard lock(log->m);
    for (const auto& e : events) {
      if (e.monster || e.what == line_event::kind::moved) continue;
      ++log->events;
      auto& open = log->open[e.player];
      const std::pair view{line, phase};
      if (e.what == line_event::kind::entered) {
        if (open)
          log->wrong.push_back(fmt::format("player {} entered {}.{} phase {} still in {}.{} phase {}",
                                           e.player, line.scene, line.line, phase, open->first.scene,
                                           open->first.line, open->second));
        open = view;
      } else {
        if (open != view)
          log->wrong.push_back(fmt::format("player {} left {}.{} phase {} without standing there", e.player,
                                           line.scene, line.line, phase));
        open.reset();
      }
    }
  };
  test::manual_world mw(table(), std::move(o));
  std::mt19937 rng(5);
  auto rnd = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
  std::vector<player_id> online;
  player_id next = 1;
  for (int round = 0; round < 300; ++round) {
    for (int k = 0; k < 6; ++k) {
      const std::uint32_t dice = rnd(12);
      if (online.size() < 6 ||
          (dice == 0 && online.size() < 16)) {  // a newcomer, straight into a phase now and then
        const player_id p = next++;
        mw.w->submit(R::enter(p, rnd(2) == 0 ? town_id : field_id), {});
        if (rnd(2) == 0) mw.w->submit(R::enter_phase(p, space_id), {});
        online.push_back(p);
        continue;
      }
      const player_id p = online[rnd(static_cast<std::uint32_t>(online.size()))];
      if (dice < 3) {
        mw.w->submit(R::leave(p), [log, p](const world_result& r) {
          std::lock_guard lock(log->m);
          if (r) log->gone.insert(p);
        });
      } else if (dice < 4) {
        mw.w->submit(R::enter_phase(p, space_id), {});
      } else if (dice < 6) {
        mw.w->submit(R::leave_phase(p), {});
      } else if (dice < 9) {
        const scene_id to[] = {town_id, field_id, dungeon_id};
        mw.w->submit(R::transfer(p, to[rnd(3)]), {});
        if (rnd(2) == 0) mw.w->submit(R::enter_phase(p, space_id), {});
      } else {
        mw.w->submit(R::move(p, {rnd(32), rnd(32)}), {});
      }
    }
    mw.step(rnd(2) == 0 ? 50ms : 250ms);
    std::lock_guard lock(log->m);
    std::erase_if(online, [&](player_id p) { return log->gone.count(p) != 0; });
  }
  std::lock_guard lock(log->m);
  EXPECT_GT(log->events, 500u);
  EXPECT_TRUE(log->wrong.empty()) << log->wrong.size() << " out of order, the first: " << log->wrong.front();
}

TEST(WorldPhases, ShutdownClosesEveryPhaseOnceItsTownCloses) {
  std::atomic<int> actives{0}, inactives{0};
  struct counter final : scene_module {
    std::atomic<int>& a;
    std::atomic<int>& i;
    counter(std::atomic<int>& act, std::atomic<int>& inact) : a(act), i(inact) {}
    void on_active(scene&) override { ++a; }
    void on_inactive(scene&) override { ++i; }
  };
  space_limits limits;
  limits.on_new_phase = [&](scene&, scene& phase) {
    phase.add_module(std::make_unique<counter>(actives, inactives));
  };
  test::manual_world mw(table(), with_phases(limits));
  ASSERT_TRUE(mw.ask(R::enter(1, town_id)));
  ASSERT_TRUE(mw.ask(R::enter(2, town_id)));
  ASSERT_TRUE(mw.ask(R::enter_phase(1, space_id)));
  ASSERT_TRUE(mw.ask(R::enter_phase(2, space_id)));
  EXPECT_EQ(actives.load(), 2);
  auto done = mw.w->shutdown();
  for (int i = 0; i < 10; ++i) mw.step();
  ASSERT_EQ(done.wait_for(0s), std::future_status::ready);
  EXPECT_EQ(inactives.load(), actives.load());
  EXPECT_EQ(mw.snap()->players, 0u);
}

}  // namespace
}  // namespace scenert
