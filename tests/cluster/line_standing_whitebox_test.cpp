// Who stands on a view, as a node and a gateway both count it from the line's events.

#include "../../cluster/src/line_standing.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace scenert::cluster {
namespace {

line_event ev(line_event::kind k, std::uint64_t id, std::uint32_t x, bool monster = false) {
  return {k, id, {x, 0}, monster};
}

TEST(LineStanding, EnteredAndMovedStandLeftAreGoneAndPlayersAreCountedApartFromMonsters) {
  line_standing s;
  using k = line_event::kind;
  const line_event tick1[] = {ev(k::entered, 1, 0), ev(k::entered, 1, 5, true), ev(k::moved, 2, 3)};
  s.apply(tick1);
  EXPECT_EQ(s.players(), 2u);  // player 1, player 2 (a move of one not seen enters it); monster 1 apart
  EXPECT_EQ(s.entered().size(), 3u);
  const line_event tick2[] = {ev(k::left, 1, 0), ev(k::moved, 2, 4), ev(k::left, 9, 0)};
  s.apply(tick2);
  EXPECT_EQ(s.players(), 1u);
  auto all = s.entered();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_TRUE(std::all_of(all.begin(), all.end(), [](const line_event& e) { return e.what == k::entered; }));
  auto gone = s.left();
  EXPECT_TRUE(std::all_of(gone.begin(), gone.end(), [](const line_event& e) { return e.what == k::left; }));
}

TEST(LineStanding, ReplacingGivesTheEventsFromBeforeToNow) {
  line_standing s;
  using k = line_event::kind;
  const line_event before[] = {ev(k::entered, 1, 0), ev(k::entered, 2, 0), ev(k::entered, 3, 0)};
  s.apply(before);
  const line_event now[] = {ev(k::entered, 2, 0), ev(k::entered, 3, 7), ev(k::entered, 4, 1)};
  auto diff = s.replace(now);
  auto has = [&](k what, std::uint64_t id) {
    return std::any_of(diff.begin(), diff.end(),
                       [&](const line_event& e) { return e.what == what && e.player == id; });
  };
  EXPECT_EQ(diff.size(), 3u);
  EXPECT_TRUE(has(k::left, 1));
  EXPECT_TRUE(has(k::moved, 3));
  EXPECT_TRUE(has(k::entered, 4));
  EXPECT_EQ(s.players(), 3u);
  EXPECT_TRUE(s.replace(now).empty());
}

}  // namespace
}  // namespace scenert::cluster
