#include <scenert/scene/line_directory.hpp>

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "fixture.hpp"

namespace scenert {
namespace {

using test::dungeon_id;
using test::town_id;

TEST(LineDirectory, OpensLowestFreeLineIdsUpToMaxLines) {
  auto table = test::small_table();
  auto dir = make_local_line_directory(table);
  for (std::uint32_t i = 1; i <= 3; ++i) EXPECT_EQ(dir->open_line(town_id, 0)->line, i);
  EXPECT_FALSE(dir->open_line(town_id, 0).has_value());  // max_lines 3
  auto second = line_handle{town_id, 2, 1};
  dir->close_line(second);
  EXPECT_FALSE(dir->open_line(town_id, 0).has_value());  // a closing line still counts
  dir->free_line(town_id, 2);
  auto again = dir->open_line(town_id, 0);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->line, 2u);
  EXPECT_EQ(again->generation, 3u);  // opened, closed (stale at once), reopened
  auto counts = dir->counts(town_id);
  EXPECT_EQ(counts.live, 3u);
  EXPECT_EQ(counts.opened, 4u);
  EXPECT_EQ(counts.closed, 1u);
}

// A cluster's store names the id and generation: the directory opens exactly those, only on a free
// line and never at a generation older than the line's last, and counts them as any line.
TEST(LineDirectory, OpensTheLineAndGenerationAClusterChose) {
  auto table = test::small_table();
  auto dir = make_local_line_directory(table);
  auto third = dir->open_line_at(town_id, 3, 5, 0);
  ASSERT_TRUE(third);
  EXPECT_EQ(*third, (line_handle{town_id, 3, 5}));
  EXPECT_TRUE(dir->check(*third));
  EXPECT_EQ(dir->check({town_id, 1, 1}).code(), world_errc::unknown_line);  // below it: never opened
  EXPECT_FALSE(dir->open_line_at(town_id, 3, 6, 0));                        // not free
  EXPECT_FALSE(dir->open_line_at(town_id, 4, 1, 0));                        // above max_lines
  EXPECT_FALSE(dir->open_line_at(town_id, 1, 0, 0));                        // no generation 0
  EXPECT_EQ(dir->pick(town_id, 3), *third);
  dir->close_line(*third);
  dir->free_line(town_id, 3);
  EXPECT_FALSE(dir->open_line_at(town_id, 3, 5, 0));  // the closed opening's own generation: stale
  auto again = dir->open_line_at(town_id, 3, 6, 0);
  ASSERT_TRUE(again);
  EXPECT_EQ(dir->check(*third).code(), world_errc::stale_line);
  ASSERT_TRUE(dir->open_line_at(town_id, 1, 1, 0));
  ASSERT_TRUE(dir->open_line_at(town_id, 2, 1, 0));
  EXPECT_EQ(dir->counts(town_id).live, 3u);
  EXPECT_EQ(dir->counts(town_id).opened, 4u);
}

TEST(LineDirectory, AHandleOfAClosedAndReusedLineIsStale) {
  auto table = test::small_table();
  auto dir = make_local_line_directory(table);
  auto first = *dir->open_line(town_id, 0);
  dir->close_line(first);
  EXPECT_EQ(dir->check(first).code(), world_errc::stale_line);  // closing
  dir->free_line(town_id, first.line);
  auto reused = *dir->open_line(town_id, 0);
  EXPECT_EQ(reused.line, first.line);
  auto stale = dir->check(first);
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.code(), world_errc::stale_line);
  EXPECT_NE(stale.error().message.find("line 1 of scene 1 generation 1"), std::string::npos)
      << stale.error().message;
  EXPECT_TRUE(dir->check(reused));
}

TEST(LineDirectory, UnknownScenesAndLinesAreNamed) {
  auto table = test::small_table();
  auto dir = make_local_line_directory(table);
  EXPECT_EQ(dir->check({99, 1, 1}).code(), world_errc::unknown_scene);
  EXPECT_EQ(dir->check({test::space_id, 1, 1}).code(), world_errc::unknown_scene);  // spaces have no lines
  EXPECT_EQ(dir->check({town_id, 0, 1}).code(), world_errc::unknown_line);
  EXPECT_EQ(dir->check({town_id, 4, 1}).code(), world_errc::unknown_line);
  auto never = dir->check({town_id, 2, 1});
  EXPECT_EQ(never.code(), world_errc::unknown_line);
  EXPECT_NE(never.error().message.find("never opened"), std::string::npos);
}

TEST(LineDirectory, FillFirstFillsTheFullestLineWithRoom) {
  auto table = test::small_table();
  auto dir = make_local_line_directory(table);
  auto a = *dir->open_line(dungeon_id, 0);
  auto b = *dir->open_line(dungeon_id, 0);
  dir->place(1, a);
  EXPECT_EQ(dir->pick(dungeon_id, 5), a);
  for (player_id p = 2; p <= 5; ++p) dir->place(p, a);
  EXPECT_EQ(dir->pick(dungeon_id, 5), b);  // a is at its soft capacity
  EXPECT_EQ(dir->pick(dungeon_id, 6), a);  // a team-mate may still join a
}

TEST(LineDirectory, LeastLoadedPicksTheEmptiestLine) {
  auto table = test::small_table();
  auto dir = make_local_line_directory(table);
  auto a = *dir->open_line(town_id, 0);
  auto b = *dir->open_line(town_id, 0);
  dir->place(1, a);
  EXPECT_EQ(dir->pick(town_id, 3), b);
  dir->place(2, b);
  dir->place(3, b);
  EXPECT_EQ(dir->pick(town_id, 3), a);
  dir->place(4, a), dir->place(5, a), dir->place(6, b);
  EXPECT_FALSE(dir->pick(town_id, 3).has_value());
}

TEST(LineDirectory, SwitchingPlayersCountOnBothLinesUntilTheyLand) {
  auto table = test::small_table();
  auto dir = make_local_line_directory(table);
  auto a = *dir->open_line(town_id, 0);
  auto b = *dir->open_line(town_id, 0);
  dir->place(7, a);
  dir->begin_switch(7, b);
  auto loc = dir->locate(7);
  EXPECT_EQ(loc.where, location::state::switching);
  EXPECT_EQ(loc.line, a);
  EXPECT_EQ(loc.target, b);
  EXPECT_EQ(dir->check(a)->players, 1u);
  EXPECT_EQ(dir->check(b)->players, 1u);
  dir->finish_switch(7);
  EXPECT_EQ(dir->locate(7).line, b);
  EXPECT_EQ(dir->check(a)->players, 0u);
  dir->begin_switch(7, a);
  dir->cancel_switch(7);
  EXPECT_EQ(dir->locate(7).where, location::state::in_line);
  EXPECT_EQ(dir->locate(7).line, b);
  EXPECT_EQ(dir->check(a)->players, 0u);
  dir->remove(7);
  EXPECT_EQ(dir->locate(7).where, location::state::none);
  EXPECT_EQ(dir->player_count(), 0u);
}

TEST(LineDirectory, AQuarantinedLineIsNeverPicked) {
  auto table = test::small_table();
  auto dir = make_local_line_directory(table);
  auto a = *dir->open_line(town_id, 0);
  dir->quarantine_line(a);
  EXPECT_FALSE(dir->pick(town_id, 3).has_value());
  EXPECT_EQ(dir->check(a)->state, line_state::quarantined);
  EXPECT_EQ(dir->counts(town_id).open, 0u);
  EXPECT_EQ(dir->counts(town_id).live, 1u);
}

// Random operations against a brute-force model: every pick must be the shared line the policy
// names; private instances are never picked, and their players count like any other.
TEST(LineDirectory, PicksMatchABruteForceModelOnRandomTraces) {
  auto table = test::small_table();
  for (scene_id sid : {town_id, dungeon_id}) {
    const auto& def = *table.find_scene(sid);
    auto dir = make_local_line_directory(table);
    std::mt19937 rng(42 + sid);
    std::map<player_id, std::uint32_t> where;           // player -> line id
    std::map<std::uint32_t, std::uint32_t> load;        // open line id -> players
    std::map<std::uint32_t, std::uint32_t> generation;  // line id -> generation
    std::map<std::uint32_t, party_id> owner;            // open line id -> party (0: shared)
    player_id next = 1;
    for (int step = 0; step < 5000; ++step) {
      std::uint32_t below = rng() % 2 ? def.capacity : def.hard_capacity;
      auto picked = dir->pick(sid, below);
      std::optional<std::uint32_t> best;
      for (auto [line, n] : load) {
        if (n >= below || owner[line] != 0) continue;
        if (!best) best = n;
        best = def.policy == allocation_policy::fill_first ? std::max(*best, n) : std::min(*best, n);
      }
      ASSERT_EQ(picked.has_value(), best.has_value());
      if (picked) {
        ASSERT_EQ(load.at(picked->line), *best);
      }
      ASSERT_TRUE(!picked || owner[picked->line] == 0);
      int op = static_cast<int>(rng() % 5);
      if (op == 0 && picked) {
        dir->place(next, *picked), where[next] = picked->line, ++load[picked->line], ++next;
      } else if (op == 4) {  // onto a private instance with room
        for (auto [line, n] : load) {
          if (owner[line] == 0 || n >= def.hard_capacity) continue;
          dir->place(next, {sid, line, generation[line]}), where[next] = line, ++load[line], ++next;
          ASSERT_EQ(dir->check({sid, line, generation[line]})->owner, owner[line]);
          break;
        }
      } else if (op == 1 && !where.empty()) {
        auto it = std::next(where.begin(), static_cast<long>(rng() % where.size()));
        dir->remove(it->first), --load[it->second], where.erase(it);
      } else if (op == 2) {
        const party_id party = rng() % 3 == 0 ? rng() % 5 + 1 : 0;
        if (auto l = dir->open_line(sid, party))
          load[l->line] = 0, generation[l->line] = l->generation, owner[l->line] = party;
      } else {
        for (auto [line, n] : load) {
          if (n != 0) continue;
          dir->close_line({sid, line, generation[line]});
          dir->free_line(sid, line);
          load.erase(line);
          owner.erase(line);
          break;
        }
      }
      ASSERT_EQ(dir->counts(sid).open, load.size());
      ASSERT_EQ(dir->counts(sid).open_private,
                std::count_if(owner.begin(), owner.end(), [](const auto& o) { return o.second != 0; }));
      ASSERT_EQ(dir->player_count(), where.size());
      if (!where.empty()) {  // player records are recycled: every one must still be exact
        auto it = std::next(where.begin(), static_cast<long>(rng() % where.size()));
        auto loc = dir->locate(it->first);
        ASSERT_EQ(loc.where, location::state::in_line);
        ASSERT_EQ(loc.line.line, it->second);
      }
    }
  }
}

}  // namespace
}  // namespace scenert
