// Private dungeon instances: a party's own line, joined by its later members, closed to others.

#include <gtest/gtest.h>

#include "fixture.hpp"

namespace scenert {
namespace {

using namespace std::chrono_literals;
using test::town_id;
using R = world_request;

constexpr scene_id crypt_id = 11;  // instances: party, lines 0..3
constexpr scene_id cave_id = 12;   // instances: both, lines 1..4
constexpr party_id red = 100, blue = 200;

scene_table instance_table() {
  auto t = test::small_table();
  auto dungeon = *t.find_scene(test::dungeon_id);
  dungeon.id = crypt_id, dungeon.name = "crypt", dungeon.instances = instance_mode::party;
  dungeon.min_lines = 0, dungeon.max_lines = 3;
  t.scenes.push_back(dungeon);
  dungeon.id = cave_id, dungeon.name = "cave", dungeon.instances = instance_mode::both;
  dungeon.min_lines = 1, dungeon.max_lines = 4;
  t.scenes.push_back(dungeon);
  return t;
}

struct Instances : ::testing::Test {
  test::manual_world mw{instance_table()};
  // Players 1..n enter the town first, as they would before a dungeon.
  void in_town(std::initializer_list<player_id> players) {
    for (auto p : players) ASSERT_TRUE(mw.ask(R::enter(p, town_id)));
  }
  line_handle enter(player_id p, scene_id s, party_id party) {
    auto r = mw.ask(R::enter_instance(p, s, party));
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->line : line_handle{};
  }
  party_id owner_of(line_handle l) {
    for (const auto& line : mw.scene_of(*mw.snap(), l.scene).lines)
      if (line.line == l.line) return line.owner;
    return 0;
  }
};

TEST_F(Instances, TwoPartiesNeverShareAnInstance) {
  in_town({1, 2, 3, 4});
  auto a = enter(1, crypt_id, red);
  auto b = enter(3, crypt_id, blue);
  EXPECT_EQ(enter(2, crypt_id, red), a);
  EXPECT_EQ(enter(4, crypt_id, blue), b);
  EXPECT_NE(a, b);
  EXPECT_EQ(owner_of(a), red);
  EXPECT_EQ(owner_of(b), blue);
  auto s = mw.scene_of(*mw.snap(), crypt_id);
  EXPECT_EQ(s.open_private, 2u);
  EXPECT_EQ(s.opened_private, 2u);
  EXPECT_TRUE(mw.w->line_object(a)->has_player(1) && mw.w->line_object(a)->has_player(2));
}

TEST_F(Instances, ALateMemberLandsInHisPartysInstance) {
  in_town({1, 2});
  auto a = enter(1, crypt_id, red);
  mw.step(500ms);
  EXPECT_EQ(enter(9, crypt_id, red), a);  // from nowhere, later
  EXPECT_EQ(mw.where(9).line, a);
  // Up to the hard capacity (6): the seventh member is refused, the instance is not shared.
  for (player_id p = 10; p < 14; ++p) EXPECT_EQ(enter(p, crypt_id, red), a);
  auto full = mw.ask(R::enter_instance(14, crypt_id, red));
  EXPECT_EQ(full.code(), world_errc::line_full);
}

TEST_F(Instances, AnOutsiderIsRefused) {
  in_town({1, 5});
  auto a = enter(1, crypt_id, red);
  EXPECT_EQ(mw.ask(R::transfer_line(5, a)).code(), world_errc::instance_private);
  EXPECT_EQ(mw.ask(R::join_team(5, 1)).code(), world_errc::instance_private);
  EXPECT_EQ(mw.ask(R::enter_line(6, a)).code(), world_errc::instance_private);
  EXPECT_EQ(mw.ask(R::join_team(6, 1)).code(), world_errc::instance_private);
  EXPECT_EQ(mw.ask(R::enter_instance(5, crypt_id, party_id{1} << 63)).code(), world_errc::instance_private);
  EXPECT_EQ(mw.where(5).line.scene, town_id);
  EXPECT_FALSE(mw.w->line_object(a)->has_player(5));
}

TEST_F(Instances, AMemberWhoLeavesThePartyIsMovedOut) {
  in_town({1, 2});
  auto a = enter(1, crypt_id, red);
  EXPECT_EQ(enter(2, crypt_id, red), a);
  auto out = mw.ask(R::leave_party(2));
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->line.scene, town_id);  // back where it came from
  EXPECT_EQ(mw.where(2).line.scene, town_id);
  EXPECT_EQ(mw.where(1).line, a);
  EXPECT_FALSE(mw.w->line_object(a)->has_player(2));
  EXPECT_EQ(mw.ask(R::transfer_line(2, a)).code(), world_errc::instance_private);  // no longer let in
  EXPECT_EQ(mw.ask(R::leave_party(2)).code(), world_errc::not_in_instance);
  // From nowhere, the way home is the table's first town.
  EXPECT_EQ(enter(3, crypt_id, red), a);
  auto home = mw.ask(R::leave_party(3));
  ASSERT_TRUE(home);
  EXPECT_EQ(home->line.scene, town_id);
}

// A member handed over from another node names the scene it stood in there: its way home.
TEST_F(Instances, AMemberFromAnotherNodeGoesBackToTheSceneItCameFrom) {
  in_town({1});
  auto a = enter(1, crypt_id, red);
  auto in = mw.ask(R::enter_instance_from(2, crypt_id, red, test::field_id));
  ASSERT_TRUE(in) << in.error().message;
  EXPECT_EQ(in->line, a);
  auto out = mw.ask(R::leave_party(2));
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->line.scene, test::field_id);
  EXPECT_EQ(mw.where(2).line.scene, test::field_id);
}

TEST_F(Instances, AnInstanceClosesAfterItsLastMemberLeftAndItsHandleGoesStale) {
  in_town({1, 2});
  auto a = enter(1, crypt_id, red);
  EXPECT_EQ(enter(2, crypt_id, red), a);
  ASSERT_TRUE(mw.ask(R::transfer(1, town_id)));
  mw.step(2s);  // past the idle grace: one member is still there
  EXPECT_EQ(mw.scene_of(*mw.snap(), crypt_id).open_private, 1u);
  ASSERT_TRUE(mw.ask(R::leave(2)));
  mw.step(2s);
  mw.step(250ms);
  auto s = mw.scene_of(*mw.snap(), crypt_id);
  EXPECT_EQ(s.open_private, 0u);
  EXPECT_EQ(s.lines_closed, 1u);
  EXPECT_EQ(mw.ask(R::enter_line(3, a)).code(), world_errc::stale_line);
  auto again = enter(1, crypt_id, red);  // the party's next run gets a fresh instance
  EXPECT_NE(again.generation, a.generation);
}

TEST_F(Instances, SoloPlayersGetInstancesOfTheirOwnInPartyMode) {
  auto a = enter(7, crypt_id, 0);
  auto b = mw.ask(R::enter(8, crypt_id));  // a plain enter too
  ASSERT_TRUE(b);
  EXPECT_NE(a, b->line);
  EXPECT_NE(owner_of(a), 0u);
  EXPECT_EQ(mw.ask(R::enter_line(9, a)).code(), world_errc::instance_private);
}

TEST_F(Instances, InBothModeSoloPlayersShareAndPartiesHaveTheirOwn) {
  auto solo1 = enter(1, cave_id, 0);
  auto solo2 = enter(2, cave_id, 0);
  EXPECT_EQ(solo1, solo2);
  EXPECT_EQ(owner_of(solo1), 0u);
  auto party = enter(3, cave_id, red);
  EXPECT_NE(party, solo1);
  EXPECT_EQ(owner_of(party), red);
  auto solo3 = enter(4, cave_id, 0);
  EXPECT_EQ(solo3, solo1);  // the shared line, never the party's
  // The private instance does not count toward min_lines: it closes, the shared line stays.
  ASSERT_TRUE(mw.ask(R::leave(3)));
  for (player_id p : {1, 2, 4}) ASSERT_TRUE(mw.ask(R::leave(p)));
  mw.step(3s);
  auto s = mw.scene_of(*mw.snap(), cave_id);
  EXPECT_EQ(s.open_lines, 1u);
  EXPECT_EQ(s.open_private, 0u);
}

TEST_F(Instances, LineFullComesOnlyFromMaxLines) {
  for (party_id party = 1; party <= 3; ++party) enter(static_cast<player_id>(party), crypt_id, party);
  auto fourth = mw.ask(R::enter_instance(4, crypt_id, 4));
  EXPECT_EQ(fourth.code(), world_errc::line_full);
  auto s = mw.scene_of(*mw.snap(), crypt_id);
  EXPECT_EQ(s.line_full, 1u);
  EXPECT_EQ(s.line_full_at_max, 1u);
  EXPECT_EQ(s.open_private, 3u);
}

}  // namespace
}  // namespace scenert
