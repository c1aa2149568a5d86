#include <scenert/space/space_module.hpp>

#include <gtest/gtest.h>

#include <memory>

namespace scenert {
namespace {

using namespace std::chrono_literals;

constexpr scene_id town_id = 1, other_town_id = 2, field_id = 3;
constexpr scene_id quest_id = 10, dream_id = 11, elsewhere_id = 12;

scene_def make_scene(scene_id id, const char* name, scene_kind kind) {
  scene_def s;
  s.id = id;
  s.name = name;
  s.kind = kind;
  s.capacity = s.hard_capacity = 100;
  s.min_lines = 1;
  s.max_lines = 2;
  s.map = 1;
  s.monsters = 3;
  return s;
}

scene_def make_space(scene_id id, const char* name, scene_id town, std::uint32_t min, std::uint32_t max) {
  scene_def s = make_scene(id, name, scene_kind::space);
  s.space = space_def{town, min, max};
  return s;
}

scene_table make_table() {
  scene_table t;
  map_def m;
  m.id = 1;
  m.name = "town map";
  m.width = m.height = 64;
  m.area_width = m.area_height = 8;
  t.maps.push_back(m);
  t.scenes.push_back(make_scene(town_id, "town", scene_kind::town));
  t.scenes.push_back(make_scene(other_town_id, "port", scene_kind::town));
  t.scenes.push_back(make_scene(field_id, "field", scene_kind::field));
  t.scenes.push_back(make_space(quest_id, "quest", town_id, 2, 3));
  t.scenes.push_back(make_space(dream_id, "dream", town_id, 0, 0));
  t.scenes.push_back(make_space(elsewhere_id, "harbour quest", other_town_id, 1, 1));
  return t;
}

struct quiet_host final : scene_host {
  void scene_empty(line_handle) override {}
  void player_left(line_handle, player_id) override {}
  void scene_quarantined(line_handle) override {}
};

// A town line with its space module, driven by hand the way its pool would drive it.
class SpaceModuleTest : public ::testing::Test {
 protected:
  explicit SpaceModuleTest(space_limits limits = {}) {
    town_ = std::make_unique<scene>(*table_.find_scene(town_id), make_map_data(table_.maps[0]), &host_);
    auto m = std::make_unique<space_module>(table_, *table_.find_scene(town_id), limits);
    spaces_ = m.get();
    town_->add_module(std::move(m));
    town_->assign_line({town_id, 1, 1});
    town_->activate();
  }
  void tick() {
    ctx_.index++;
    ctx_.now += 100ms;
    ASSERT_EQ(town_->tick(ctx_, 10, 1024), tick_outcome::ok);
  }
  // A player standing in the town, as the world would put it there.
  void arrive(player_id p) {
    town_->post_enter(p);
    tick();
  }

  scene_table table_ = make_table();
  quiet_host host_;
  std::unique_ptr<scene> town_;
  space_module* spaces_ = nullptr;
  tick_context ctx_{100ms, time_point{}, 0};
};

TEST_F(SpaceModuleTest, PreCreatesMinSpacesAtTheTownLinesInit) {
  EXPECT_EQ(spaces_->parked(quest_id), 2u);
  EXPECT_EQ(spaces_->parked(dream_id), 0u);
  EXPECT_EQ(spaces_->created(), 2u);
  EXPECT_EQ(spaces_->running_phases(), 0u);
  EXPECT_EQ(spaces_->spaces(), (std::vector<scene_id>{quest_id, dream_id}));
}

TEST_F(SpaceModuleTest, CreateChildTakesParkedPhasesFirstAndStopsAtMaxSpaces) {
  auto a = spaces_->open_phase(quest_id);
  auto b = spaces_->open_phase(quest_id);
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(spaces_->parked(quest_id), 0u);
  EXPECT_EQ(spaces_->created(), 2u);  // both came from the cache
  auto c = spaces_->open_phase(quest_id);
  ASSERT_TRUE(c);
  EXPECT_EQ(spaces_->created(), 3u);
  auto d = spaces_->open_phase(quest_id);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.code(), world_errc::space_full);
  EXPECT_NE(d.error().message.find("3 of 3 running"), std::string::npos) << d.error().message;
  EXPECT_EQ(spaces_->running_phases(quest_id), 3u);
  EXPECT_TRUE(spaces_->phase(*a)->active());
}

TEST_F(SpaceModuleTest, UnlimitedSpacesHaveNoCap) {
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(spaces_->open_phase(dream_id));
  EXPECT_EQ(spaces_->running_phases(dream_id), 20u);
}

TEST_F(SpaceModuleTest, RefusesUnknownSpacesAndSpacesOfAnotherTown) {
  EXPECT_EQ(spaces_->open_phase(999).code(), world_errc::unknown_space);
  EXPECT_EQ(spaces_->open_phase(field_id).code(), world_errc::unknown_space);
  auto wrong = spaces_->open_phase(elsewhere_id);
  EXPECT_EQ(wrong.code(), world_errc::wrong_town);
  EXPECT_NE(wrong.error().message.find("binds to town 2"), std::string::npos) << wrong.error().message;
}

TEST_F(SpaceModuleTest, APlayerInAPhaseSeesOnlyThatPhase) {
  arrive(1);
  arrive(2);
  auto entered = spaces_->enter_phase(*town_, 1, quest_id);
  ASSERT_TRUE(entered);
  tick();
  scene* phase = spaces_->phase(*entered);
  ASSERT_NE(phase, nullptr);
  EXPECT_TRUE(phase->has_player(1));
  EXPECT_FALSE(town_->has_player(1));
  EXPECT_TRUE(town_->has_player(2));
  // The phase holds its own monsters, its chest and player 1: nobody from the town.
  std::size_t players_seen = 0;
  auto e = phase->entity_of(1);
  ASSERT_TRUE(e);
  ASSERT_TRUE(phase->grid().broadcast(*e, grid::type_mask::player, [&](grid::entity_id) { ++players_seen; }));
  EXPECT_EQ(players_seen, 0u);
  EXPECT_EQ(phase->grid().size(), 1u + 3u + 1u);
  EXPECT_EQ(phase->map().get(), town_->map().get());  // the town's static data, shared
}

TEST_F(SpaceModuleTest, PhasesDoNotNest) {
  arrive(1);
  ASSERT_TRUE(spaces_->enter_phase(*town_, 1, quest_id));
  auto again = spaces_->enter_phase(*town_, 1, dream_id);
  EXPECT_EQ(again.code(), world_errc::space_in_space);
  EXPECT_EQ(spaces_->leave_phase(*town_, 2).code(), world_errc::not_in_space);
}

TEST_F(SpaceModuleTest, LeavingReturnsThePlayerWhereItStoodInThePhase) {
  arrive(1);
  auto entered = spaces_->enter_phase(*town_, 1, quest_id);
  ASSERT_TRUE(entered);
  tick();
  spaces_->phase(*entered)->post_move(1, {40, 41});
  tick();
  ASSERT_TRUE(spaces_->leave_phase(*town_, 1));
  tick();
  ASSERT_TRUE(town_->has_player(1));
  EXPECT_EQ(town_->grid().position_of(*town_->entity_of(1)), (grid::cell_point{40, 41}));
}

TEST_F(SpaceModuleTest, AnEmptiedPhaseIsParkedOnTheNextTickAndReusedAsNew) {
  arrive(1);
  auto first = spaces_->enter_phase(*town_, 1, quest_id);
  ASSERT_TRUE(first);
  tick();
  scene* phase = spaces_->phase(*first);
  ASSERT_TRUE(phase->open_chest());
  const auto monsters = phase->monsters().size();
  ASSERT_TRUE(spaces_->leave_phase(*town_, 1));  // the player leaves at once; the phase is flagged
  EXPECT_EQ(phase->player_count(), 0u);
  EXPECT_EQ(spaces_->running_phases(quest_id), 1u);
  tick();  // the town closes it
  EXPECT_EQ(spaces_->running_phases(quest_id), 0u);
  EXPECT_EQ(spaces_->parked(quest_id), 2u);
  EXPECT_EQ(phase->deactivations(), 1u);

  // Taken again from the cache: the chest is back and closed, the monsters respawned.
  auto second = spaces_->enter_phase(*town_, 1, quest_id);
  ASSERT_TRUE(second);
  tick();
  scene* again = spaces_->phase(*second);
  EXPECT_NE(*second, *first);
  EXPECT_EQ(spaces_->created(), 2u);
  EXPECT_TRUE(again->chest().present);
  EXPECT_FALSE(again->chest().opened);
  EXPECT_EQ(again->monsters().size(), monsters);
  EXPECT_EQ(again->player_count(), 1u);
  EXPECT_EQ(again->inits(), 1u);
}

TEST_F(SpaceModuleTest, TheTownLineClosingClosesItsPhasesAndDropsTheCache) {
  arrive(1);
  auto entered = spaces_->enter_phase(*town_, 1, quest_id);
  ASSERT_TRUE(entered);
  tick();
  scene* phase = spaces_->phase(*entered);
  town_->deactivate();
  EXPECT_EQ(spaces_->running_phases(), 0u);
  EXPECT_EQ(spaces_->parked(quest_id), 0u);
  EXPECT_FALSE(spaces_->phase_of(1));
  (void)phase;        // destroyed with the cache
  town_->activate();  // a reopened line is as good as a fresh one
  EXPECT_EQ(spaces_->parked(quest_id), 2u);
}

class SmallCacheTest : public SpaceModuleTest {
 protected:
  SmallCacheTest() : SpaceModuleTest(space_limits{1, 10, 1024, {}}) {}
};

TEST_F(SmallCacheTest, TheCacheKeepsAtLeastMinSpacesAndDestroysTheRest) {
  for (player_id p = 1; p <= 3; ++p) arrive(p);
  for (player_id p = 1; p <= 3; ++p) ASSERT_TRUE(spaces_->enter_phase(*town_, p, quest_id));
  tick();
  for (player_id p = 1; p <= 3; ++p) ASSERT_TRUE(spaces_->leave_phase(*town_, p));
  tick();
  tick();
  EXPECT_EQ(spaces_->running_phases(quest_id), 0u);
  EXPECT_EQ(spaces_->parked(quest_id), 2u);  // min_spaces 2 beats the limit of 1
}

TEST(AttachSpaceModules, GivesModulesToTownsWithSpacesOnly) {
  scene_table table = make_table();
  auto attach = attach_space_modules(table);
  quiet_host host;
  auto map = make_map_data(table.maps[0]);
  scene town(*table.find_scene(town_id), map, &host);
  scene field(*table.find_scene(field_id), map, &host);
  attach(town);
  attach(field);
  EXPECT_NE(find_space_module(town), nullptr);
  EXPECT_EQ(find_space_module(field), nullptr);
}

}  // namespace
}  // namespace scenert
