#include <scenert/scene/world.hpp>

#include <gtest/gtest.h>

#include "fixture.hpp"

namespace scenert {
namespace {

using namespace std::chrono_literals;
using test::dungeon_id;
using test::field_id;
using test::guild_id;
using test::town_id;
using R = world_request;

bool mentions(const world_result& r, const std::string& text) {
  return !r.has_value() && r.error().message.find(text) != std::string::npos;
}

TEST(World, OpensMinLinesAtStartAndNothingMore) {
  test::manual_world mw;
  auto s = mw.snap();
  EXPECT_EQ(mw.scene_of(*s, town_id).open_lines, 1u);
  EXPECT_EQ(mw.scene_of(*s, dungeon_id).open_lines, 1u);
  EXPECT_EQ(mw.scene_of(*s, guild_id).open_lines, 0u);
  EXPECT_EQ(mw.scene_of(*s, field_id).open_lines, 1u);
  EXPECT_EQ(s->scenes.size(), 4u);  // the space has no lines of its own
  EXPECT_EQ(s->group_services, 1u);
}

TEST(World, EnterPlacesThePlayerAndItsSceneReceivesIt) {
  test::manual_world mw;
  auto r = mw.ask(R::enter(1, town_id));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->line.scene, town_id);
  EXPECT_EQ(r->line.line, 1u);
  auto loc = mw.where(1);
  EXPECT_EQ(loc.where, location::state::in_line);
  EXPECT_EQ(loc.line, r->line);
  EXPECT_TRUE(mw.w->line_object(r->line)->has_player(1));
}

TEST(World, AnswersThroughACallback) {
  test::manual_world mw;
  std::optional<world_result> got;
  mw.w->submit(R::enter(1, town_id), [&](world_result r) { got = std::move(r); });
  EXPECT_FALSE(got.has_value());  // applied on the world's tick
  mw.step();
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(*got);
}

TEST(World, ABurstOfRequestsInOneTickReachesTheScenesInOrder) {
  test::manual_world mw;
  std::vector<world_result> got;
  auto keep = [&](world_result r) { got.push_back(std::move(r)); };
  // Within one world tick: player 1 comes, goes and comes back; 2 comes and goes; 3 stays.
  for (auto r : {R::enter(1, town_id), R::leave(1), R::enter(2, town_id), R::enter(1, town_id), R::leave(2),
                 R::enter(3, field_id)})
    mw.w->submit(r, keep);
  mw.step();
  ASSERT_EQ(got.size(), 6u);
  for (const auto& r : got) EXPECT_TRUE(r) << r.error().message;
  auto town = mw.w->line_object(got[0]->line);
  EXPECT_TRUE(town->has_player(1));
  EXPECT_FALSE(town->has_player(2));
  EXPECT_EQ(town->player_count(), 1u);
  EXPECT_TRUE(mw.w->line_object(got[5]->line)->has_player(3));
}

TEST(World, LeastLoadedSpreadsPlayersAndOpensALineWhenAllAreFull) {
  test::manual_world mw;
  for (player_id p = 1; p <= 3; ++p) EXPECT_EQ(mw.ask(R::enter(p, town_id))->line.line, 1u);
  EXPECT_EQ(mw.ask(R::enter(4, town_id))->line.line, 2u);  // line 1 at its soft capacity
  EXPECT_EQ(mw.ask(R::enter(5, town_id))->line.line, 2u);  // the emptier line
  ASSERT_TRUE(mw.ask(R::leave(1)));
  ASSERT_TRUE(mw.ask(R::leave(2)));
  EXPECT_EQ(mw.ask(R::enter(6, town_id))->line.line, 1u);  // now line 1 is the emptier
}

TEST(World, FillFirstFillsALineBeforeUsingAnother) {
  test::manual_world mw;
  for (player_id p = 1; p <= 5; ++p) EXPECT_EQ(mw.ask(R::enter(p, dungeon_id))->line.line, 1u);
  EXPECT_EQ(mw.ask(R::enter(6, dungeon_id))->line.line, 2u);
  EXPECT_EQ(mw.ask(R::enter(7, dungeon_id))->line.line, 2u);
}

TEST(World, AnswersLineFullAtMaxLinesAndCountsIt) {
  test::manual_world mw;
  for (player_id p = 1; p <= 4; ++p) ASSERT_TRUE(mw.ask(R::enter(p, field_id)));
  auto r = mw.ask(R::enter(5, field_id));
  EXPECT_EQ(r.code(), world_errc::line_full);
  EXPECT_TRUE(mentions(r, "all 2 lines are full")) << r.error().message;
  EXPECT_TRUE(mentions(r, "player 5"));
  EXPECT_EQ(mw.where(5).where, location::state::none);
  EXPECT_EQ(mw.scene_of(*mw.snap(), field_id).line_full, 1u);
}

TEST(World, BadRequestsAreErrorValuesAndChangeNothing) {
  test::manual_world mw;
  auto first = *mw.ask(R::enter(1, town_id));
  EXPECT_EQ(mw.ask(R::enter(1, dungeon_id)).code(), world_errc::already_in_scene);
  EXPECT_EQ(mw.ask(R::enter(2, 99)).code(), world_errc::unknown_scene);
  EXPECT_EQ(mw.ask(R::enter(2, test::space_id)).code(), world_errc::unknown_scene);
  EXPECT_EQ(mw.ask(R::leave(2)).code(), world_errc::not_in_scene);
  EXPECT_EQ(mw.ask(R::transfer(2, dungeon_id)).code(), world_errc::not_in_scene);
  EXPECT_EQ(mw.ask(R::transfer(1, 99)).code(), world_errc::unknown_scene);
  EXPECT_EQ(mw.ask(R::transfer(1, town_id)).code(), world_errc::already_in_scene);
  EXPECT_EQ(mw.ask(R::transfer_line(1, first.line)).code(), world_errc::same_line);
  EXPECT_EQ(mw.ask(R::transfer_line(1, {town_id, 9, 1})).code(), world_errc::unknown_line);
  EXPECT_EQ(mw.ask(R::transfer_line(1, {town_id, 2, 1})).code(), world_errc::unknown_line);
  EXPECT_EQ(mw.ask(R::enter_line(3, {town_id, 1, 7})).code(), world_errc::stale_line);
  EXPECT_EQ(mw.ask(R::join_team(2, 77)).code(), world_errc::teammate_not_found);
  EXPECT_EQ(mw.ask(R::join_team(1, 1)).code(), world_errc::same_line);
  EXPECT_EQ(mw.ask(R::move(2, {3, 3})).code(), world_errc::not_in_scene);
  auto loc = mw.where(1);
  EXPECT_EQ(loc.where, location::state::in_line);
  EXPECT_EQ(loc.line, first.line);
  EXPECT_EQ(mw.where(2).where, location::state::none);
  auto s = mw.snap();
  EXPECT_EQ(s->players, 1u);
  EXPECT_EQ(s->errors, 14u);
}

TEST(World, ATransferSwitchesThenLandsOnTheOtherScene) {
  test::manual_world mw;
  auto from = *mw.ask(R::enter(1, town_id));
  auto f = mw.w->submit(R::transfer(1, dungeon_id));
  auto during = mw.w->locate(1);  // applied right after the transfer, before the town confirmed
  mw.step(10ms);
  auto loc = during.get();
  EXPECT_EQ(loc.where, location::state::switching);
  EXPECT_EQ(loc.line, from.line);
  EXPECT_EQ(loc.target.scene, dungeon_id);
  EXPECT_EQ(mw.ask(R::leave(1)).code(), world_errc::switching);  // one thing at a time
  mw.step();
  auto r = f.get();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->line.scene, dungeon_id);
  EXPECT_EQ(mw.where(1).line, r->line);
  EXPECT_FALSE(mw.w->line_object(from.line)->has_player(1));
  EXPECT_TRUE(mw.w->line_object(r->line)->has_player(1));
}

TEST(World, ATransferToANamedLineChecksItAndItsRoom) {
  test::manual_world mw;
  for (player_id p = 1; p <= 4; ++p) ASSERT_TRUE(mw.ask(R::enter(p, town_id)));  // lines 1 (3) and 2 (1)
  auto on_two = mw.where(4).line;
  ASSERT_EQ(on_two.line, 2u);
  auto full = mw.ask(R::transfer_line(4, {town_id, 1, 1}));
  EXPECT_EQ(full.code(), world_errc::line_full);
  EXPECT_TRUE(mentions(full, "is full (3 of 3)")) << full.error().message;
  EXPECT_EQ(mw.where(4).line, on_two);  // nothing half-done
  ASSERT_TRUE(mw.ask(R::leave(1)));
  auto moved = mw.ask(R::transfer_line(4, {town_id, 1, 1}));
  ASSERT_TRUE(moved) << moved.error().message;
  EXPECT_EQ(mw.where(4).line.line, 1u);
}

TEST(World, JoiningATeamMateMayGoUpToHardCapacity) {
  test::manual_world mw;
  for (player_id p = 1; p <= 5; ++p) ASSERT_TRUE(mw.ask(R::enter(p, dungeon_id)));
  auto line = mw.where(1).line;
  ASSERT_TRUE(mw.ask(R::enter(10, town_id)));
  auto joined = mw.ask(R::join_team(10, 1));  // a switch from the town: soft 5, hard 6
  ASSERT_TRUE(joined) << joined.error().message;
  EXPECT_EQ(joined->line, line);
  auto again = mw.ask(R::join_team(11, 1));  // nowhere yet: enters, but the line is at hard capacity
  EXPECT_EQ(again.code(), world_errc::line_full);
  EXPECT_EQ(mw.ask(R::enter(11, dungeon_id))->line.line, 2u);
}

TEST(World, MovesWalkThePlayerOnItsLinesGrid) {
  test::manual_world mw;
  auto line = mw.ask(R::enter(1, town_id))->line;
  ASSERT_TRUE(mw.ask(R::move(1, {20, 21})));
  mw.step();
  auto s = mw.w->line_object(line);
  EXPECT_EQ(s->grid().position_of(*s->entity_of(1)), (grid::cell_point{20, 21}));
}

// A client's move still on its way when its player changed lines is meant for the old line: it must
// not walk the player on the new one (where its client was just told it stands elsewhere).
TEST(World, AMoveMeantForALineThePlayerLeftIsRefusedAndWalksNothing) {
  test::manual_world mw;
  const auto town = mw.ask(R::enter(1, town_id))->line;
  const auto field = mw.ask(R::transfer(1, field_id))->line;
  mw.step();
  auto s = mw.w->line_object(field);
  const auto landed = s->grid().position_of(*s->entity_of(1));
  ASSERT_NE(landed, (grid::cell_point{20, 21}));
  auto late = mw.ask(R::move_on(1, town, 0, {20, 21}));
  ASSERT_FALSE(late);
  EXPECT_EQ(late.code(), world_errc::stale_line);
  EXPECT_NE(late.error().message.find("move meant for"), std::string::npos) << late.error().message;
  mw.step();
  EXPECT_EQ(s->grid().position_of(*s->entity_of(1)), landed);
  ASSERT_TRUE(mw.ask(R::move_on(1, field, 0, {20, 21})));
  mw.step();
  EXPECT_EQ(s->grid().position_of(*s->entity_of(1)), (grid::cell_point{20, 21}));
}

}  // namespace
}  // namespace scenert
