// A client's moves and messages go straight to their line (world::to_line): the line applies a move
// at its next tick with no world tick on the way, and drops (and counts) one meant for another
// opening of the line, another phase, or a player that went elsewhere since.
#include <gtest/gtest.h>

#include <optional>
#include <string_view>

#include "fixture.hpp"

namespace scenert {
namespace {

using R = world_request;
using test::field_id;
using test::town_id;
using namespace std::chrono_literals;

constexpr grid::cell_point far_cell{20, 21};

// A world that ticks once a second while its lines tick at 10 Hz: whatever a line applies within a
// tenth of a second after a world tick came without the world.
struct slow_world : test::manual_world {
  slow_world() : manual_world(test::small_table(), options()) {}
  static world_options options() {
    world_options o;
    o.hz = 1;
    return o;
  }
  world_result ask_slowly(const world_request& r) {
    auto f = w->submit(r);
    step(1s);
    return f.get();
  }
  std::uint64_t world_ticks() const {
    for (const auto& s : pool->metrics(true).per_service)
      if (s.name == "world") return s.ticks;
    return 0;
  }
};

std::optional<world_result> to_line(world& w, const world_request& r) {
  std::optional<world_result> out;
  w.to_line(r, [&out](world_result answer) { out = std::move(answer); });
  return out;
}

grid::cell_point cell_of(const std::shared_ptr<scene>& s, player_id p) {
  return s->grid().position_of(*s->entity_of(p));
}

TEST(ToLine, AMoveIsAppliedAtTheLinesNextTickWithNoWorldTickBetween) {
  slow_world mw;
  const auto town = mw.ask_slowly(R::enter(1, town_id))->line;
  auto s = mw.w->line_object(town);
  ASSERT_NE(cell_of(s, 1), far_cell);
  const auto ticks = mw.world_ticks();
  auto posted = to_line(*mw.w, R::move_on(1, town, 0, far_cell));
  ASSERT_TRUE(posted && *posted) << (posted ? posted->error().message : "no answer");
  mw.step(100ms);  // one period of the line; the world's next tick is 750 ms away
  EXPECT_EQ(cell_of(s, 1), far_cell);
  EXPECT_EQ(mw.world_ticks(), ticks);
  EXPECT_EQ(s->dropped_stale(), 0u);
}

TEST(ToLine, AMoveForAnotherOpeningOfTheLineIsDropped) {
  test::manual_world mw;
  const auto town = mw.ask(R::enter(1, town_id))->line;
  auto s = mw.w->line_object(town);
  const auto before = cell_of(s, 1);
  // The world knows no such opening: refused at once, counted.
  const line_handle other{town.scene, town.line, town.generation + 1};
  auto refused = to_line(*mw.w, R::move_on(1, other, 0, far_cell));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->code(), world_errc::stale_line);
  // One already in the line's inbox when the object became another opening: the line drops it.
  roster_change late{roster_change::kind::move, 1, far_cell};
  late.meant_line = other;
  s->post_roster(late);
  mw.step();
  EXPECT_EQ(cell_of(s, 1), before);
  EXPECT_EQ(s->dropped_stale(), 1u);
  EXPECT_EQ(mw.snap()->stale_posts, 2u);
}

TEST(ToLine, AMoveForAnotherPhaseIsDropped) {
  test::manual_world mw;
  const auto town = mw.ask(R::enter(1, town_id))->line;
  auto s = mw.w->line_object(town);
  const auto before = cell_of(s, 1);
  ASSERT_TRUE(*to_line(*mw.w, R::move_on(1, town, 3, far_cell)));  // the player is in no phase
  mw.step();
  EXPECT_EQ(cell_of(s, 1), before);
  EXPECT_EQ(s->dropped_stale(), 1u);
  ASSERT_TRUE(*to_line(*mw.w, R::move_on(1, town, 0, far_cell)));
  mw.step();
  EXPECT_EQ(cell_of(s, 1), far_cell);
}

// The client sent it before it heard of the journey; it reaches the old line after the world told
// that line to let the player go: dropped there, never walked on either line. Once the client sees
// itself on the new line, its next move is not lost.
TEST(ToLine, AMoveMadeDuringAJourneyIsDroppedAndTheFirstOneAfterItIsApplied) {
  test::manual_world mw;
  const auto town = mw.ask(R::enter(1, town_id))->line;
  auto old_line = mw.w->line_object(town);
  auto leaving = mw.w->submit(R::transfer(1, field_id));
  mw.step(15ms);  // a world tick at 100 Hz: the leave is on its way to the town
  ASSERT_TRUE(*to_line(*mw.w, R::move_on(1, town, 0, far_cell)));
  mw.step();
  ASSERT_EQ(leaving.wait_for(0s), std::future_status::ready);
  const auto field = leaving.get()->line;
  EXPECT_EQ(old_line->dropped_stale(), 1u);
  EXPECT_FALSE(old_line->has_player(1));
  auto new_line = mw.w->line_object(field);
  ASSERT_TRUE(new_line->has_player(1));
  EXPECT_NE(cell_of(new_line, 1), far_cell);
  ASSERT_TRUE(*to_line(*mw.w, R::move_on(1, field, 0, far_cell)));
  mw.step(100ms);
  EXPECT_EQ(cell_of(new_line, 1), far_cell);
  EXPECT_EQ(new_line->dropped_stale(), 0u);
}

TEST(ToLine, AMessageForALineNoLongerOpenIsRefusedAsStale) {
  test::manual_world mw;
  const auto field = mw.ask(R::enter(1, field_id))->line;
  auto refused = to_line(*mw.w, R::message(1, {field.scene, field.line, field.generation + 1}, 2001, "x"));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->code(), world_errc::stale_line);
  EXPECT_NE(refused->error().message.find("message meant for"), std::string::npos)
      << refused->error().message;
  EXPECT_TRUE(*to_line(*mw.w, R::message(1, field, 2001, "x")));
}

TEST(ToLine, OtherRequestsAreSubmitted) {
  test::manual_world mw;
  std::optional<world_result> answer;
  mw.w->to_line(R::enter(1, town_id), [&answer](world_result r) { answer = std::move(r); });
  EXPECT_FALSE(answer);  // answered by the world's tick
  mw.step();
  ASSERT_TRUE(answer && *answer);
}

}  // namespace
}  // namespace scenert
