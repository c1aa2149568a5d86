// Effective areas (seed 000): cover counts and the AI batches of active NPCs.
#include <scenert/scene/grid/grid.hpp>

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace scenert::grid {
namespace {

// 20 x 2 areas of 10 x 10 cells: batch b holds areas b, b + 10, b + 20 and b + 30.
std::shared_ptr<const map_data> strip_map() { return *map_data::create({200, 20, 10, 10, 1, 1, {}}); }

cell_point in_area(std::uint32_t area, std::uint32_t k = 0) {
  return {(area % 20) * 10 + k % 10, (area / 20) * 10 + k / 10 % 10};
}

TEST(EffectiveAreas, PlayersCoverTheirClampedViewAndNpcsCoverNothing) {
  grid g(strip_map());
  ASSERT_TRUE(g.add(1, entity_type::player, in_area(0), ignore_view{}));
  ASSERT_TRUE(g.add(2, entity_type::npc, in_area(5), ignore_view{}));
  for (std::uint32_t a : {0u, 1u, 20u, 21u}) EXPECT_EQ(g.cover_count(a), 1u) << a;
  EXPECT_EQ(g.cover_count(2), 0u);
  EXPECT_EQ(g.cover_count(5), 0u);
  ASSERT_TRUE(g.add(3, entity_type::player, in_area(21), ignore_view{}));
  EXPECT_EQ(g.cover_count(0), 2u);
  EXPECT_EQ(g.cover_count(2), 1u);
  ASSERT_TRUE(g.move(1, in_area(3), ignore_view{}));
  EXPECT_EQ(g.cover_count(0), 1u);
  EXPECT_EQ(g.cover_count(4), 1u);
  ASSERT_TRUE(g.remove(3, ignore_view{}));
  EXPECT_EQ(g.cover_count(0), 0u);
  EXPECT_EQ(g.cover_count(22), 1u);
}

TEST(EffectiveAreas, OnlyNpcsOnCoveredAreasOfTheBatchAreActive) {
  grid g(strip_map());
  ASSERT_TRUE(g.add(1, entity_type::player, in_area(11), ignore_view{}));  // covers 10..12, 30..32
  ASSERT_TRUE(g.add(2, entity_type::npc, in_area(10), ignore_view{}));     // batch 0, covered
  ASSERT_TRUE(g.add(3, entity_type::npc, in_area(30), ignore_view{}));     // batch 0, covered
  ASSERT_TRUE(g.add(4, entity_type::npc, in_area(0), ignore_view{}));      // batch 0, not covered
  ASSERT_TRUE(g.add(5, entity_type::npc, in_area(12), ignore_view{}));     // batch 2, covered
  ASSERT_TRUE(g.add(6, entity_type::item, in_area(10), ignore_view{}));    // not an npc
  std::multiset<entity_id> seen;
  ASSERT_TRUE(g.for_each_active_npc(0, [&](entity_id id) { seen.insert(id); }));
  EXPECT_EQ(seen, (std::multiset<entity_id>{2, 3}));
  seen.clear();
  ASSERT_TRUE(g.for_each_active_npc(2, [&](entity_id id) { seen.insert(id); }));
  EXPECT_EQ(seen, (std::multiset<entity_id>{5}));
  seen.clear();
  ASSERT_TRUE(g.for_each_active_npc(1, [&](entity_id id) { seen.insert(id); }));
  EXPECT_TRUE(seen.empty());
}

// The ahead hook hears every NPC of the batch's snapshot, all before the first call of fn.
TEST(EffectiveAreas, TheAheadHookHearsTheWholeBatchBeforeTheFirstVisit) {
  grid g(strip_map());
  ASSERT_TRUE(g.add(1, entity_type::player, in_area(11), ignore_view{}));
  ASSERT_TRUE(g.add(2, entity_type::npc, in_area(10), ignore_view{}));
  ASSERT_TRUE(g.add(3, entity_type::npc, in_area(30), ignore_view{}));
  ASSERT_TRUE(g.add(4, entity_type::npc, in_area(0), ignore_view{}));  // not covered
  std::vector<std::pair<char, entity_id>> calls;
  ASSERT_TRUE(g.for_each_active_npc(
      0,
      [&](entity_id id) {
        calls.push_back({'v', id});
      },
      [&](entity_id id) {
        calls.push_back({'a', id});
      }));
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].first, 'a');
  EXPECT_EQ(calls[1].first, 'a');
  EXPECT_EQ((std::multiset<entity_id>{calls[0].second, calls[1].second}), (std::multiset<entity_id>{2, 3}));
  EXPECT_EQ(calls[2].first, 'v');
  EXPECT_EQ(calls[3].first, 'v');
  EXPECT_EQ((std::multiset<entity_id>{calls[2].second, calls[3].second}), (std::multiset<entity_id>{2, 3}));
}

TEST(EffectiveAreas, AnNpcMovedAheadOfThePassIsNotVisitedTwice) {
  grid g(strip_map());
  ASSERT_TRUE(g.add(100, entity_type::player, in_area(11), ignore_view{}));
  for (entity_id id = 0; id < 20; ++id)
    ASSERT_TRUE(g.add(id, entity_type::npc, in_area(10, id), ignore_view{}));
  std::map<entity_id, int> visits;
  ASSERT_TRUE(g.for_each_active_npc(0, [&](entity_id id) {
    ++visits[id];
    // Into a later area of the same batch, and back again: a naive loop meets it again.
    ASSERT_TRUE(g.move(id, in_area(id % 2 ? 30 : 10, id + 1), ignore_view{}));
  }));
  ASSERT_EQ(visits.size(), 20u);
  for (auto [id, n] : visits) EXPECT_EQ(n, 1) << id;
}

TEST(EffectiveAreas, RemovedAndReaddedNpcsAreNotVisitedAndAddedOnesWait) {
  grid g(strip_map());
  ASSERT_TRUE(g.add(100, entity_type::player, in_area(11), ignore_view{}));
  for (entity_id id = 0; id < 10; ++id)
    ASSERT_TRUE(g.add(id, entity_type::npc, in_area(10, id), ignore_view{}));
  std::vector<entity_id> seen;
  bool first = true;
  ASSERT_TRUE(g.for_each_active_npc(0, [&](entity_id id) {
    seen.push_back(id);
    if (!first) return;
    first = false;
    // The first visited NPC kills every other one, respawns one of them under the same id, and
    // summons new ones: none of them is visited in this pass.
    for (entity_id other = 0; other < 10; ++other)
      if (other != id) {
        ASSERT_TRUE(g.remove(other, ignore_view{}));
      }
    const entity_id back = id == 0 ? 1 : 0;
    ASSERT_TRUE(g.add(back, entity_type::npc, in_area(10), ignore_view{}));
    for (entity_id extra = 50; extra < 60; ++extra)
      ASSERT_TRUE(g.add(extra, entity_type::npc, in_area(30), ignore_view{}));
  }));
  EXPECT_EQ(seen.size(), 1u);
  seen.clear();
  ASSERT_TRUE(g.for_each_active_npc(0, [&](entity_id id) { seen.push_back(id); }));
  EXPECT_EQ(seen.size(), 12u);  // the survivor, the respawned one, ten summoned
}

// Random AI: each visited NPC walks, dies, spawns others or drags a player away. Every NPC visited is
// visited once and is eligible when visited; every NPC nobody touched that stays eligible is visited.
TEST(EffectiveAreas, RandomMutationsNeverSkipOrRepeatAnNpc) {
  grid g(strip_map());
  std::mt19937 rng(5);
  auto random_cell = [&] {
    return cell_point{static_cast<std::uint32_t>(rng() % 200), static_cast<std::uint32_t>(rng() % 20)};
  };
  for (entity_id id = 0; id < 6; ++id)
    ASSERT_TRUE(g.add(id, entity_type::player, random_cell(), ignore_view{}));
  for (entity_id id = 6; id < 300; ++id)
    ASSERT_TRUE(g.add(id, entity_type::npc, random_cell(), ignore_view{}));
  for (int pass = 0; pass < 60; ++pass) {
    const auto batch = static_cast<std::uint32_t>(pass % 10);
    std::set<entity_id> eligible_at_start, touched;
    for (entity_id id = 6; id < 400; ++id)
      if (g.contains(id) && g.type_of(id) == entity_type::npc && g.area_of(id) % 10 == batch &&
          g.cover_count(g.area_of(id)) > 0)
        eligible_at_start.insert(id);
    std::map<entity_id, int> visits;
    ASSERT_TRUE(g.for_each_active_npc(batch, [&](entity_id id) {
      ++visits[id];
      EXPECT_TRUE(eligible_at_start.count(id)) << id;
      EXPECT_GT(g.cover_count(g.area_of(id)), 0u);
      const auto r = rng() % 10;
      const auto other = static_cast<entity_id>(6 + rng() % 394);
      touched.insert(other);
      if (r < 5) {
        ASSERT_TRUE(g.move(id, random_cell(), ignore_view{}));
      } else if (r < 7 && g.contains(other)) {
        ASSERT_TRUE(g.remove(other, ignore_view{}));
      } else if (r < 9 && !g.contains(other)) {
        ASSERT_TRUE(g.add(other, entity_type::npc, random_cell(), ignore_view{}));
      } else {
        const auto p = static_cast<entity_id>(rng() % 6);
        ASSERT_TRUE(g.teleport(p, random_cell(), ignore_view{}));
        for (entity_id id2 = 6; id2 < 400; ++id2) touched.insert(id2);  // covers changed: anything goes
      }
    }));
    for (auto [id, n] : visits) EXPECT_EQ(n, 1) << id;
    for (entity_id id : eligible_at_start)
      if (!touched.count(id) && g.contains(id) && g.area_of(id) % 10 == batch &&
          g.cover_count(g.area_of(id)) > 0) {
        EXPECT_EQ(visits.count(id), 1u) << "npc " << id << " skipped";
      }
  }
}

}  // namespace
}  // namespace scenert::grid
