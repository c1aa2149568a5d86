// The cluster's choice of a line for an entering player, against a brute-force oracle on random
// sets of lines: the scene's policy over the lines with room, the player's own node on a tie, then
// the lowest id; none when every line is full.

#include <scenert/cluster/line_choice.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace scenert::cluster {
namespace {

// Filters in steps, as a designer would state the rule.
std::optional<std::size_t> oracle(allocation_policy policy, std::uint32_t below,
                                  const std::vector<line_load>& lines, std::string_view own) {
  std::vector<std::size_t> room;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].players < below) room.push_back(i);
  if (room.empty()) return std::nullopt;
  std::uint32_t want = lines[room[0]].players;
  for (auto i : room)
    want = policy == allocation_policy::fill_first ? std::max(want, lines[i].players)
                                                   : std::min(want, lines[i].players);
  std::erase_if(room, [&](std::size_t i) { return lines[i].players != want; });
  if (std::any_of(room.begin(), room.end(), [&](std::size_t i) { return lines[i].node == own; }))
    std::erase_if(room, [&](std::size_t i) { return lines[i].node != own; });
  return *std::min_element(room.begin(), room.end(),
                           [&](std::size_t a, std::size_t b) { return lines[a].line < lines[b].line; });
}

TEST(LineChoice, FillFirstTakesTheFullestWithRoomAndLeastLoadedTheEmptiest) {
  const std::vector<line_load> lines{{"a", 1, 4}, {"b", 2, 2}, {"b", 3, 3}, {"a", 4, 1}};
  EXPECT_EQ(choose_line(allocation_policy::fill_first, 4, lines, "a"),
            2u);  // line 3: 3 of 4 (line 1 is full)
  EXPECT_EQ(choose_line(allocation_policy::least_loaded, 4, lines, "b"), 3u);  // line 4, though on a
  EXPECT_EQ(choose_line(allocation_policy::fill_first, 2, lines, "a"), 3u);    // only line 4 has room
  EXPECT_EQ(choose_line(allocation_policy::fill_first, 1, lines, "a"), std::nullopt);
  EXPECT_EQ(choose_line(allocation_policy::fill_first, 4, {}, "a"), std::nullopt);
}

TEST(LineChoice, ATieGoesToThePlayersOwnNodeThenToTheLowestId) {
  const std::vector<line_load> lines{{"b", 5, 2}, {"a", 7, 2}, {"a", 6, 2}};
  EXPECT_EQ(choose_line(allocation_policy::fill_first, 4, lines, "a"), 2u);  // line 6: a's lowest
  EXPECT_EQ(choose_line(allocation_policy::fill_first, 4, lines, "b"), 0u);
  EXPECT_EQ(choose_line(allocation_policy::least_loaded, 4, lines, ""), 0u);  // a new player: line 5
}

TEST(LineChoice, AgreesWithTheOracleOnRandomLines) {
  std::mt19937 rng(20261127);
  const std::array<std::string, 3> nodes{"a", "b", "c"};
  for (int round = 0; round < 5000; ++round) {
    const auto below = static_cast<std::uint32_t>(1 + rng() % 6);
    std::vector<line_load> lines(rng() % 8);
    std::vector<std::uint32_t> ids(16);
    std::iota(ids.begin(), ids.end(), 1u);
    std::shuffle(ids.begin(), ids.end(), rng);
    for (std::size_t i = 0; i < lines.size(); ++i)
      lines[i] = {nodes[rng() % nodes.size()], ids[i], static_cast<std::uint32_t>(rng() % (below + 2))};
    const std::string own = rng() % 4 == 0 ? "" : nodes[rng() % nodes.size()];
    for (auto policy : {allocation_policy::fill_first, allocation_policy::least_loaded})
      ASSERT_EQ(choose_line(policy, below, lines, own), oracle(policy, below, lines, own))
          << "round " << round << ", " << lines.size() << " lines below " << below;
  }
}

}  // namespace
}  // namespace scenert::cluster
