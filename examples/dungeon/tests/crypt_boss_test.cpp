// The fight on the manual clock: a line of the example's table driven tick by tick as the world
// would, with two players, a store that answers at once, and a host that records what clients see.
#include <dungeon/crypt_boss.hpp>

#include <scenert/config/table_loader.hpp>
#include <scenert/scene/scene.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace dungeon {
namespace {

using namespace std::chrono_literals;

// Answers each grant at once, a repeat of an id as repeated: the store's promise, in memory.
struct memory_store final : scenert::player_store {
  std::vector<scenert::grant> written;
  std::set<std::string> ids;
  void sign_in(scenert::player_id, std::string owner, scenert::holdings_done done) override {
    done({std::move(owner), {}, {}, {}});
  }
  void sign_out(scenert::player_id) override {}
  void write(scenert::grant g, scenert::grant_done done) override {
    const bool repeated = !ids.insert(g.id).second;
    if (!repeated) written.push_back(g);
    done({std::move(g), scenert::store_errc::ok, repeated, {}});
  }
  void read(std::string owner, scenert::holdings_done done) override { done({std::move(owner), {}, {}, {}}); }
};

struct recording_host final : scenert::scene_host {
  std::vector<scenert::module_frame> frames;
  void scene_empty(scenert::line_handle) override {}
  void player_left(scenert::line_handle, scenert::player_id) override {}
  void scene_quarantined(scenert::line_handle) override {}
  bool wants_line_events() const override { return true; }
  void module_frames(scenert::line_handle, std::span<const scenert::module_frame> f) override {
    frames.insert(frames.end(), f.begin(), f.end());
  }
  // The refusals sent to a player, their reasons in order.
  std::vector<std::string> refusals(scenert::player_id p) const {
    std::vector<std::string> out;
    for (const auto& f : frames)
      if (f.refusal != 0 && f.who == p) out.push_back(f.bytes);
    return out;
  }
  std::vector<std::uint32_t> opcodes() const {
    std::vector<std::uint32_t> out;
    for (const auto& f : frames)
      if (f.refusal == 0 && !f.granted) out.push_back(f.opcode);
    return out;
  }
};

std::uint32_t apart(scenert::grid::cell_point a, scenert::grid::cell_point b) {
  return std::max(a.x > b.x ? a.x - b.x : b.x - a.x, a.y > b.y ? a.y - b.y : b.y - a.y);
}

struct CryptBoss : ::testing::Test {
  std::shared_ptr<const scenert::scene_table> table =
      scenert::load_table_file(DUNGEON_SOURCE_DIR "/table.json").table;
  const scenert::scene_def& def = *table->find_scene(2);
  recording_host host;
  memory_store store;
  std::shared_ptr<scenert::scene> line =
      std::make_shared<scenert::scene>(def, scenert::make_map_data(*table->find_map(def.map)), &host);
  crypt_boss* module = nullptr;
  scenert::time_point now{};
  std::uint64_t ticks = 0;

  void SetUp() override {
    scenert::module_params params(def.module->params, def.module->pointer);
    auto m = std::make_unique<crypt_boss>(read_crypt_params(params));
    module = m.get();
    line->assign_line({def.id, 1, 1});
    line->set_game_module(std::move(m), 38, &store);
    line->activate();
    line->post_enter(1);
    line->post_enter(2);
    tick();
  }
  void TearDown() override { line->deactivate(); }
  void tick(scenert::nanoseconds dt = 100ms) {
    now += dt;
    (void)line->tick(scenert::tick_context{dt, now, ticks++}, 3, 1024);
  }
  void send(scenert::player_id p, scenert::module_opcode op, std::string bytes) {
    scenert::roster_change c{scenert::roster_change::kind::message, p, {}};
    c.opcode = op;
    c.bytes = std::move(bytes);
    line->post_roster(c);
  }
  // Ticks until the boss stands next to a player (it walks around the crypt's wall to them).
  void wait_for_the_boss() {
    for (int i = 0; i < 600 && std::min(apart(boss_at(), player_at(1)), apart(boss_at(), player_at(2))) > 1;
         ++i)
      tick();
  }
  scenert::grid::cell_point player_at(scenert::player_id p) const {
    return line->grid().position_of(*line->entity_of(p));
  }
  scenert::grid::cell_point boss_at() const { return *line->entity_at(*module->boss()); }
  // Both players strike the boss, each as soon as its cooldown allows, until it dies.
  void kill_the_boss() {
    for (int i = 0; i < 2000 && module->boss(); ++i) {
      if (i % 10 == 0) send(1 + (i / 10) % 2, attack_opcode, encode_target(*module->boss()));
      tick();
    }
  }
};

TEST_F(CryptBoss, WalksAroundTheWallAlongASearchedPathToThePlayers) {
  const auto start = boss_at();
  wait_for_the_boss();
  EXPECT_LE(std::min(apart(boss_at(), player_at(1)), apart(boss_at(), player_at(2))), 1u);
  EXPECT_NE(boss_at(), start);
  EXPECT_GE(module->stats().searches, 1u);
  EXPECT_LT(module->stats().searches, 5u) << "the players stood still: one path serves";
  EXPECT_GT(ticks, 100u) << "around the wall: more than the 18 rows straight down at 2 steps a second";
  for (int i = 0; i < 21; ++i) tick();  // a strike each 2 s
  EXPECT_GE(module->stats().strikes, 1u) << "next to a player, it strikes";
}

TEST_F(CryptBoss, RefusesAttacksOutOfReachOnCooldownOnNoEnemyAndMalformedOnes) {
  const auto boss = *module->boss();
  send(1, attack_opcode, encode_target(boss));  // the boss is still at its cell, 18 rows away
  send(1, attack_opcode, "abc");
  send(1, attack_opcode, encode_target(boss + 1000));
  send(1, open_chest_opcode, encode_target(boss));
  send(1, 2999, "");
  tick();
  auto said = host.refusals(1);
  ASSERT_EQ(said.size(), 5u);
  EXPECT_EQ(said[0], "entity " + std::to_string(boss) + " is 18 cells away; reach is 2");
  EXPECT_EQ(said[1], "an attack is its target's 8-byte entity id, got 3 bytes");
  EXPECT_EQ(said[2], "entity " + std::to_string(boss + 1000) + " is no living enemy");
  EXPECT_EQ(said[3], "no chest yet: the boss lives");
  EXPECT_NE(said[4].find("2999"), std::string::npos);

  wait_for_the_boss();
  send(1, attack_opcode, encode_target(boss));
  send(1, attack_opcode, encode_target(boss));
  tick();
  said = host.refusals(1);
  ASSERT_EQ(said.size(), 6u) << "the first attack in reach landed";
  EXPECT_EQ(said[5], "attack on cooldown for 1000 ms more");
  EXPECT_LT(line->look_of(boss)->health, 3000);
}

TEST_F(CryptBoss, EntersItsPhasesInOrderAndSummonsItsAddsWhichSteerToThePlayers) {
  wait_for_the_boss();
  for (int i = 0; i < 2000 && module->phase() == boss_phase::alone; ++i) {
    if (i % 10 == 0) send(1 + (i / 10) % 2, attack_opcode, encode_target(*module->boss()));
    tick();
  }
  ASSERT_EQ(module->phase(), boss_phase::adds);
  EXPECT_LE(line->look_of(*module->boss())->health, 2100) << "adds come at 70% of 3000";
  EXPECT_GT(line->look_of(*module->boss())->health, 2100 - 120);
  ASSERT_EQ(module->adds().size(), 3u);
  for (int i = 0; i < 30; ++i) tick();
  EXPECT_GT(module->stats().add_steps, 0u);
  kill_the_boss();
  EXPECT_EQ(module->stats().phases,
            (std::vector<boss_phase>{boss_phase::alone, boss_phase::adds, boss_phase::enraged}));
  const auto ops = host.opcodes();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), phase_opcode), 2);
  EXPECT_TRUE(module->adds().empty()) << "the adds fall with the boss";
}

TEST_F(CryptBoss, TheChestAppearsAtTheDeathOpensOnceAndGivesEachMemberTheirLoot) {
  wait_for_the_boss();
  kill_the_boss();
  ASSERT_FALSE(module->boss());
  ASSERT_TRUE(module->chest());
  EXPECT_EQ(module->stats().kills, 1u);
  const auto chest = *module->chest();
  send(2, open_chest_opcode, encode_target(chest));
  send(1, open_chest_opcode, encode_target(chest));
  tick();
  tick();  // the store's answers come back through the line's mailbox
  EXPECT_EQ(host.refusals(1), (std::vector<std::string>{"the chest was opened already"}));
  EXPECT_EQ(module->stats().chests_opened, 1u);
  EXPECT_EQ(line->look_of(chest)->state, static_cast<std::uint16_t>(chest_state::open));
  ASSERT_EQ(store.written.size(), 4u) << "two members, two rolls each";
  for (const auto& g : store.written) {
    EXPECT_EQ(g.id.rfind("crypt-" + module->instance() + "-" + std::to_string(g.player) + "-", 0), 0u)
        << g.id;
    EXPECT_TRUE(g.item == 1 || g.item == 40 || g.item == 41 || g.item == 99);
  }
  EXPECT_EQ(module->stats().grants_written, 4u);
  std::size_t granted = 0;
  for (const auto& f : host.frames) granted += f.granted ? 1 : 0;
  EXPECT_EQ(granted, 4u) << "each member heard of each grant once it was written";
}

}  // namespace
}  // namespace dungeon

namespace dungeon {
namespace {

TEST_F(CryptBoss, AReopenedLineIsAFreshInstanceWithItsOwnChestAndGrantIds) {
  wait_for_the_boss();
  kill_the_boss();
  send(1, open_chest_opcode, encode_target(*module->chest()));
  tick();
  const std::string first = module->instance();
  line->deactivate();
  line->assign_line({def.id, 1, 2});
  line->activate();
  line->post_enter(1);
  line->post_enter(2);
  tick();
  ASSERT_TRUE(module->boss());
  EXPECT_FALSE(module->chest());
  EXPECT_EQ(line->look_of(*module->boss())->health, 3000);
  EXPECT_NE(module->instance(), first);
  wait_for_the_boss();
  kill_the_boss();
  send(2, open_chest_opcode, encode_target(*module->chest()));
  tick();
  tick();
  EXPECT_EQ(module->stats().chests_opened, 2u);
  EXPECT_EQ(store.written.size(), 8u) << "the new instance's grants are new grants";
  EXPECT_EQ(module->stats().phases.size(), 6u);
}

// The line's random source is seeded from the table: the same inputs give the same hits and loot.
std::vector<std::string> one_fight() {
  struct fight : CryptBoss {
    void TestBody() override {}
  } f;
  f.SetUp();
  f.wait_for_the_boss();
  f.kill_the_boss();
  f.send(1, open_chest_opcode, encode_target(*f.module->chest()));
  f.tick();
  std::vector<std::string> seen;
  for (const auto& frame : f.host.frames)
    if (frame.opcode == hit_opcode) seen.push_back(frame.bytes);
  for (const auto& g : f.store.written)
    seen.push_back(std::to_string(g.item) + "x" + std::to_string(g.count));
  f.TearDown();
  return seen;
}

TEST(CryptReplay, TheSameTableAndInputsReplayTheSameFight) {
  const auto a = one_fight(), b = one_fight();
  EXPECT_GT(a.size(), 20u);
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace dungeon

namespace dungeon {
namespace {

TEST(CryptBossCell, ABossCellOffTheMapFailsItsLineOnlyWhenTheLineOpens) {
  const auto table = scenert::load_table_file(DUNGEON_SOURCE_DIR "/table.json").table;
  const scenert::scene_def& def = *table->find_scene(2);
  crypt_params params;
  params.boss_at = {100, 100};  // the crypt is 48 by 48: the factory cannot know it, the line does
  params.loot = loot_table({{1, 1, 1}});
  recording_host host;
  auto line = std::make_shared<scenert::scene>(def, scenert::make_map_data(*table->find_map(def.map)), &host);
  line->assign_line({def.id, 1, 1});
  line->set_game_module(std::make_unique<crypt_boss>(params), 38);
  line->activate();
  EXPECT_TRUE(line->broken());
  line->deactivate();
}

TEST(CryptClicks, AClickOnTheBossOrAnAddAttacksItAndOnTheChestOpensItWithinReach) {
  crypt_params params;
  params.attack_range = 3;
  params.loot = loot_table({{1, 1, 1}});
  const crypt_boss boss(params);
  const std::vector<scenert::click_action> want{
      {1, attack_opcode, 3}, {2, attack_opcode, 3}, {3, open_chest_opcode, 3}};
  EXPECT_EQ(boss.click_actions(), want);
}

}  // namespace
}  // namespace dungeon
