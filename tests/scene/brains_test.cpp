// Monster brains on maps with walls: the invariants over long random runs, a mob that greedy
// stepping would strand, a boss's optimal path, the leash, and a recycled line's fresh monsters.
#include <scenert/nav/search.hpp>
#include <scenert/nav/steering.hpp>
#include <scenert/scene/scene.hpp>

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "fixture.hpp"

namespace scenert {
namespace {

using namespace std::chrono_literals;

constexpr scene_id brains_scene = 1;

// One 48x48 map (16-cell areas, eyesight 2: every player sees the whole map) and one dungeon.
scene_table brains_table(std::vector<cell_rect> walls, monster_def monster, std::uint32_t monsters = 0,
                         std::uint32_t budget = 0) {
  scene_table t;
  t.maps.push_back(map_def{1, "walls", 48, 48, 16, 16, 2, 2, std::move(walls)});
  scene_def d;
  d.id = brains_scene, d.name = "crypt", d.kind = scene_kind::dungeon, d.capacity = 8, d.hard_capacity = 8;
  d.max_lines = 4, d.map = 1, d.monsters = monsters, d.monster = monster, d.path_budget = budget;
  t.scenes.push_back(d);
  return t;
}

std::vector<cell_rect> random_walls(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<cell_rect> walls;
  for (int i = 0; i < 14; ++i) {
    const bool vertical = rng() % 2 == 0;
    const auto len = static_cast<std::uint32_t>(4 + rng() % 12);
    walls.push_back(vertical ? cell_rect{static_cast<std::uint32_t>(rng() % 44),
                                         static_cast<std::uint32_t>(rng() % 30), 1, len}
                             : cell_rect{static_cast<std::uint32_t>(rng() % 30),
                                         static_cast<std::uint32_t>(rng() % 44), len, 1});
  }
  return walls;
}

nav::cell to_nav(grid::cell_point c) { return {c.x, c.y}; }

struct brains_fixture : ::testing::Test {
  scene_table table;
  std::shared_ptr<scene> s;
  test::recording_host host;
  std::uint64_t ticks = 0;

  void open(scene_table t) {
    table = std::move(t);
    s = std::make_shared<scene>(table.scenes[0], make_map_data(table.maps[0]), &host);
    s->assign_line({brains_scene, 1, 1});
    s->activate();
  }
  void tick(int n = 1) {
    for (int i = 0; i < n; ++i) (void)s->tick(tick_context{100ms, {}, ticks++}, 3, 1024);
  }
  grid::cell_point at(grid::entity_id e) const { return s->grid().position_of(e); }
  grid::cell_point random_open_cell(std::mt19937& rng) const {
    for (;;) {
      grid::cell_point c{static_cast<std::uint32_t>(rng() % 48), static_cast<std::uint32_t>(rng() % 48)};
      if (s->nav_map()->passable(c.x, c.y)) return c;
    }
  }
  static std::uint32_t chebyshev(grid::cell_point a, grid::cell_point b) {
    return std::max(a.x > b.x ? a.x - b.x : b.x - a.x, a.y > b.y ? a.y - b.y : b.y - a.y);
  }
};

using Brains = brains_fixture;

// Speed 0.5: at most one step between two ticks, so every step can be checked from the positions.
// With a barrier, a monster that moved never stands on a player's cell either (the mask's occupancy).
void run_random_and_check_invariants(brains_fixture& f, monster_kind kind, std::uint32_t seed,
                                     monster_barrier barrier = monster_barrier::none) {
  f.open(brains_table(random_walls(seed), monster_def{kind, 0.5, 12, 14, barrier}, 40, 50));
  std::mt19937 rng(seed);
  for (player_id p = 1; p <= 3; ++p) f.s->place_player(p, f.random_open_cell(rng));
  std::uint32_t steps = 0;
  std::map<grid::entity_id, grid::cell_point> last;
  for (auto m : f.s->monsters()) last[m] = f.at(m);
  const auto& map = *f.s->nav_map();
  for (int t = 0; t < 3000; ++t) {
    if (t % 40 == 0) f.s->post_move(1 + rng() % 3, f.random_open_cell(rng));
    f.tick();
    std::map<std::uint32_t, int> per_cell;
    std::set<std::uint32_t> players;
    for (player_id p = 1; p <= 3; ++p) players.insert(map.index(to_nav(f.at(*f.s->entity_of(p)))));
    for (auto m : f.s->monsters()) {
      const auto now = f.at(m);
      if (barrier == monster_barrier::standard && !(now == last[m])) {
        ASSERT_EQ(players.count(map.index(to_nav(now))), 0u)
            << "monster " << m << " onto a player at tick " << t;
      }
      ASSERT_TRUE(map.passable(now.x, now.y)) << "monster " << m << " on a blocked cell at tick " << t;
      ASSERT_LE(++per_cell[map.index(to_nav(now))], 1) << "two monsters on one cell at tick " << t;
      const bool evaded_home = now == f.s->monster(m)->home;  // a stuck leashed monster is put home
      ASSERT_TRUE(now == last[m] || evaded_home || nav::can_step(map, to_nav(last[m]), to_nav(now)))
          << "monster " << m << " stepped " << last[m].x << "," << last[m].y << " -> " << now.x << ","
          << now.y;
      steps += !(now == last[m]);
      last[m] = now;
    }
  }
  EXPECT_GT(f.s->ai_steps(), 1000u);
  EXPECT_GT(steps, 500u) << "the monsters hardly moved: the run proves little";
}

TEST_F(Brains, MobsNeverEnterABlockedCellCutACornerOrShareACellOverLongRandomRuns) {
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    run_random_and_check_invariants(*this, monster_kind::mob, seed);
  }
}

TEST_F(Brains, MonstersWithABarrierNeverStepOntoAPlayerOverLongRandomRuns) {
  for (auto kind : {monster_kind::mob, monster_kind::boss}) {
    SCOPED_TRACE(kind == monster_kind::boss ? "boss" : "mob");
    run_random_and_check_invariants(*this, kind, 6, monster_barrier::standard);
  }
}

TEST_F(Brains, ADungeonSpawnsEachOfItsMonsterGroups) {
  scene_table t = brains_table({}, monster_def{monster_kind::boss, 1, 20, 30, monster_barrier::standard}, 1);
  t.scenes[0].more_monsters.push_back(
      {30, monster_def{monster_kind::mob, 2, 12, 16, monster_barrier::slack}});
  t.scenes[0].more_monsters.push_back({0, monster_def{}});
  open(std::move(t));
  EXPECT_EQ(s->monsters().size(), 31u);
  EXPECT_FALSE(s->place_monster({1, 1}, {}, 3)) << "there is no fourth group";
  EXPECT_TRUE(s->place_monster({1, 1}, {}, 2));
  s->place_player(1, grid::cell_point{24, 24});
  for (int i = 0; i < 100; ++i) tick();
  int chasing = 0;
  for (auto m : s->monsters()) chasing += s->monster(m)->target.has_value();
  EXPECT_GT(chasing, 0);
}

TEST_F(Brains, BossesNeverEnterABlockedCellCutACornerOrShareACellOverLongRandomRuns) {
  for (std::uint32_t seed : {4u, 5u}) {
    SCOPED_TRACE(seed);
    run_random_and_check_invariants(*this, monster_kind::boss, seed);
  }
}

// A wall between the mob and the player, square to the line between them: steering alone stops at
// the wall for good; the player's flow field leads around it.
TEST_F(Brains, AMobBehindAWallThatGreedySteppingWouldStrandReachesAPlayerItCanReach) {
  open(brains_table({cell_rect{20, 4, 1, 40}}, monster_def{monster_kind::mob, 2, 40, 60}));
  const grid::cell_point start{16, 24}, player{26, 24};
  nav::mob_steer greedy{to_nav(start), to_nav(start), false};
  for (int i = 0; i < 100; ++i) (void)nav::steer(*s->nav_map(), greedy, to_nav(player), {60, 1});
  ASSERT_GT(chebyshev({greedy.position.x, greedy.position.y}, player), 1u) << "the wall strands nobody";

  auto mob = s->place_monster(start);
  ASSERT_TRUE(mob);
  s->place_player(1, player);
  for (int t = 0; t < 600 && s->monster(*mob)->state != brain_state::attack; ++t) tick();
  EXPECT_EQ(s->monster(*mob)->state, brain_state::attack);
  EXPECT_LE(chebyshev(at(*mob), player), 1u);
}

// A player's flow field reaches as far as its chasers need (a mob 6 cells off: a small ball around
// the player), not over the whole map; the mob still comes to attack.
TEST_F(Brains, AFlowFieldReachesOnlyAsFarAsItsChasersNeed) {
  open(brains_table({}, monster_def{monster_kind::mob, 2, 40, 60}));
  auto mob = s->place_monster({10, 10});
  ASSERT_TRUE(mob);
  s->place_player(1, grid::cell_point{16, 12});
  for (int t = 0; t < 100 && s->monster(*mob)->state != brain_state::attack; ++t) tick();
  EXPECT_EQ(s->monster(*mob)->state, brain_state::attack);
  EXPECT_GT(s->ai_cost().field_cells, 0u);
  EXPECT_LT(s->ai_cost().field_cells, 48u * 48u / 4u) << "the field covered much of the map";
}

// Speed 0.5 makes one step per think at most, so the cells it stood on are its whole walk.
TEST_F(Brains, ABossReachesItsTargetAlongAnOptimalPath) {
  open(brains_table({cell_rect{10, 0, 2, 30}, cell_rect{20, 12, 2, 36}, cell_rect{30, 0, 2, 40}},
                    monster_def{monster_kind::boss, 0.5, 100, 200}, 0, 5));
  const grid::cell_point start{4, 4}, player{42, 40};
  auto boss = s->place_monster(start);
  ASSERT_TRUE(boss);
  s->place_player(1, player);
  std::vector<nav::cell> walk{to_nav(start)};
  for (int t = 0; t < 5000 && s->monster(*boss)->state != brain_state::attack; ++t) {
    tick();
    if (!(to_nav(at(*boss)) == walk.back())) walk.push_back(to_nav(at(*boss)));
  }
  ASSERT_EQ(s->monster(*boss)->state, brain_state::attack);
  walk.push_back(to_nav(player));
  nav::search_context ctx;
  std::vector<nav::cell> best;
  auto optimal = ctx.find(*s->nav_map(), to_nav(start), to_nav(player), nav::algorithm::astar, best);
  ASSERT_EQ(optimal.status, nav::search_status::found);
  auto walked = nav::validate_path(*s->nav_map(), walk, to_nav(start), to_nav(player));
  ASSERT_TRUE(walked) << walked.error().message;
  EXPECT_NEAR(*walked, optimal.length, 1e-9);
}

TEST_F(Brains, ABossThatDiesDropsItsSearch) {
  open(brains_table({cell_rect{10, 0, 2, 30}, cell_rect{20, 12, 2, 36}, cell_rect{30, 0, 2, 40}},
                    monster_def{monster_kind::boss, 1, 100, 200}, 0, 1));
  auto boss = s->place_monster({4, 4});
  ASSERT_TRUE(boss);
  s->place_player(1, grid::cell_point{42, 40});
  for (int t = 0; t < 30 && !s->monster(*boss)->searching; ++t) tick();
  ASSERT_TRUE(s->monster(*boss)->searching) << "one expansion per tick: the search takes a while";
  EXPECT_TRUE(s->kill_monster(*boss));
  EXPECT_EQ(s->monster(*boss)->state, brain_state::dead);
  EXPECT_FALSE(s->monster(*boss)->searching);
  EXPECT_FALSE(s->grid().contains(*boss));
  EXPECT_FALSE(s->kill_monster(*boss));
  tick(20);  // the queue holds nothing of it: ticking on is quiet
}

TEST_F(Brains, ABossWhoseTargetMovedFarSearchesAgainTowardItsNewCell) {
  open(brains_table({cell_rect{10, 0, 2, 30}, cell_rect{20, 12, 2, 36}, cell_rect{30, 0, 2, 40}},
                    monster_def{monster_kind::boss, 1, 100, 200}, 0, 1));
  auto boss = s->place_monster({4, 4});
  ASSERT_TRUE(boss);
  const grid::cell_point first{42, 40}, second{40, 4};
  s->place_player(1, first);
  for (int t = 0; t < 30 && !s->monster(*boss)->searching; ++t) tick();
  ASSERT_TRUE(s->monster(*boss)->searching);
  EXPECT_EQ(s->monster(*boss)->goal, first);
  s->post_move(1, second);
  for (int t = 0; t < 30 && s->monster(*boss)->goal != second; ++t) tick();
  EXPECT_EQ(s->monster(*boss)->goal, second) << "the old search is cancelled, a new one asked";
  EXPECT_EQ(s->monster(*boss)->state, brain_state::chase);
}

TEST_F(Brains, TheLeashReturnsAMonsterHomeAndItForgetsItsTarget) {
  open(brains_table({}, monster_def{monster_kind::mob, 1, 47, 6}));
  const grid::cell_point home{8, 24};
  auto mob = s->place_monster(home);
  ASSERT_TRUE(mob);
  s->place_player(1, grid::cell_point{44, 24});
  bool leashed = false, home_and_forgot = false;
  for (int t = 0; t < 600 && !home_and_forgot; ++t) {
    tick();
    const auto v = *s->monster(*mob);
    if (v.state == brain_state::leash) {
      leashed = true;
      EXPECT_FALSE(v.target) << "a leashed monster forgets its target";
    }
    home_and_forgot = leashed && at(*mob) == home && v.state == brain_state::idle && !v.target;
  }
  EXPECT_TRUE(leashed);
  EXPECT_TRUE(home_and_forgot);
}

// A host that keeps the looks of one entity's `changed` events.
struct looks_host final : scene_host {
  grid::entity_id watched = 0;
  std::vector<entity_look> changes;
  void scene_empty(line_handle) override {}
  void player_left(line_handle, player_id) override {}
  void scene_quarantined(line_handle) override {}
  [[nodiscard]] bool wants_line_events() const override { return true; }
  void line_events(line_handle, phase_id, std::span<const line_event> events) override {
    for (const auto& e : events)
      if (e.monster && e.player == watched && e.what == line_event::kind::changed) changes.push_back(e.look);
  }
};

// A table's monster shows its brain's state on the wire: each change of state is a `changed` event
// with the state in its look, in the order the brain went through them, and nothing else is.
TEST(BrainState, EachChangeOfAMonstersStateIsALookChangeOnItsLine) {
  scene_table table = brains_table({}, monster_def{monster_kind::mob, 1, 47, 6});
  looks_host host;
  auto s = std::make_shared<scene>(table.scenes[0], make_map_data(table.maps[0]), &host);
  s->assign_line({brains_scene, 1, 1});
  s->activate();
  auto mob = s->place_monster({8, 24});
  ASSERT_TRUE(mob);
  host.watched = *mob;
  s->place_player(1, grid::cell_point{44, 24});  // chased, then the leash pulls it home
  std::vector<std::uint16_t> lived;              // the brain's states, each change once
  for (std::uint64_t t = 0; t < 600; ++t) {
    (void)s->tick(tick_context{100ms, {}, t}, 3, 1024);
    const auto state = static_cast<std::uint16_t>(s->monster(*mob)->state);
    if (lived.empty() ? state != 0 : lived.back() != state) lived.push_back(state);
  }
  std::vector<std::uint16_t> shown;
  for (const auto& look : host.changes) {
    EXPECT_EQ(look.kind, 0u);
    shown.push_back(look.state);
  }
  EXPECT_EQ(shown, lived);
  EXPECT_NE(std::find(shown.begin(), shown.end(), static_cast<std::uint16_t>(brain_state::leash)),
            shown.end());
}

TEST_F(Brains, ARecycledLinesMonstersAreFresh) {
  open(brains_table(random_walls(7), monster_def{monster_kind::boss, 2, 30, 30}, 6, 20));
  s->place_player(1, grid::cell_point{24, 24});
  tick(200);
  s->deactivate();
  s->activate();
  auto fresh = std::make_shared<scene>(table.scenes[0], make_map_data(table.maps[0]), &host);
  fresh->assign_line({brains_scene, 1, 1});
  fresh->activate();
  ASSERT_EQ(s->monsters(), fresh->monsters());
  for (auto m : s->monsters()) {
    const auto v = *s->monster(m);
    EXPECT_EQ(at(m), fresh->grid().position_of(m));
    EXPECT_EQ(v.home, at(m));
    EXPECT_EQ(v.state, brain_state::idle);
    EXPECT_FALSE(v.target);
    EXPECT_FALSE(v.searching);
  }
}

TEST(BrainMaps, EveryLineOfAMapSharesOneNavMapBuiltFromItsBlocks) {
  std::vector<const nav::nav_map*> seen;
  world_options o;
  o.on_new_line = [&](scene& line) { seen.push_back(line.nav_map().get()); };
  test::manual_world mw(test::small_table(), std::move(o));
  ASSERT_GE(seen.size(), 3u);  // town, dungeon and field open their min_lines, all on map 1
  for (const auto* m : seen) EXPECT_EQ(m, seen.front());
  ASSERT_NE(seen.front(), nullptr);
  EXPECT_FALSE(seen.front()->passable(0, 0));  // the small map's 2x2 block
  EXPECT_TRUE(seen.front()->passable(2, 2));
}

TEST(BrainState, EveryStateHasAName) {
  EXPECT_STREQ(to_string(brain_state::idle), "idle");
  EXPECT_STREQ(to_string(brain_state::leash), "leash");
  EXPECT_STREQ(to_string(brain_state::dead), "dead");
}

}  // namespace
}  // namespace scenert
