// The lines' events, fed to one view mirror per line as the network front does, keep every mirror
// equal to its line's grid: same players, same cells, same views. Random enters, moves, transfers
// and leaves through a real world on the manual clock.
#include <scenert/net/view_mirror.hpp>
#include <scenert/scene/world.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <random>
#include <span>
#include <vector>

#include "../scene/fixture.hpp"

namespace scenert {
namespace {

using namespace std::chrono_literals;
using R = world_request;

struct ignore_frames {
  void view(player_id, std::span<const player_id>) {}
  void appeared(player_id, player_id) {}
  void vanished(player_id, player_id) {}
  void moved(player_id, player_id) {}
  void monster_view(player_id, std::span<const player_id>) {}
  void monster_at(player_id, player_id) {}
  void monster_gone(player_id, player_id) {}
};

struct mirrors {
  std::mutex m;
  std::map<std::pair<scene_id, std::uint32_t>, net::view_mirror> lines;
  std::shared_ptr<const grid::map_data> map;
  std::size_t errors = 0, moves = 0, monster_events = 0;
  void feed(line_handle line, std::span<const line_event> events) {
    std::lock_guard lock(m);
    auto [it, fresh] = lines.try_emplace({line.scene, line.line}, map);
    for (const auto& e : events) {
      if (!it->second.apply(e, ignore_frames{})) ++errors;
      moves += e.what == line_event::kind::moved && !e.monster;
      monster_events += e.monster;
    }
  }
};

TEST(WorldMirror, EveryLineMirrorEqualsItsGridAfterRandomTraffic) {
  auto table = test::small_table();
  auto box = std::make_shared<mirrors>();
  box->map = make_map_data(table.maps.front());  // every scene of the small table has map 1
  world_options o;
  o.on_line_events = [box](line_handle l, phase_id phase, std::span<const line_event> ev) {
    if (phase == 0) box->feed(l, ev);  // the town lines' grids are compared; phases have their own
  };
  test::manual_world mw(table, std::move(o));
  const scene_id scenes[] = {test::town_id, test::field_id, test::dungeon_id};
  std::mt19937 rng(11);
  auto rnd = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
  std::vector<player_id> online;
  for (int round = 0; round < 60; ++round) {
    for (int k = 0; k < 8; ++k) {
      const std::uint32_t dice = rnd(10);
      if (online.size() < 4 || dice < 2) {
        const player_id p = 1000 + static_cast<player_id>(round * 8 + k);
        mw.w->submit(R::enter(p, scenes[rnd(3)]), {});
        online.push_back(p);
      } else if (dice < 3) {
        const std::size_t i = rnd(static_cast<std::uint32_t>(online.size()));
        mw.w->submit(R::leave(online[i]), {});
        online.erase(online.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (dice < 4) {
        mw.w->submit(R::transfer(online[rnd(static_cast<std::uint32_t>(online.size()))], scenes[rnd(3)]), {});
      } else {
        mw.w->submit(R::move(online[rnd(static_cast<std::uint32_t>(online.size()))], {rnd(32), rnd(32)}), {});
      }
    }
    mw.step(50ms);
  }
  mw.step();
  const auto snap = mw.snap();
  // The truth: each live line's grid, read between two ticks (the manual pool runs nothing now).
  std::lock_guard lock(box->m);
  EXPECT_EQ(box->errors, 0U);
  const std::size_t moves_seen = box->moves;
  std::size_t checked_players = 0, checked_monsters = 0, live = 0;
  for (const auto& sc : snap->scenes) {
    for (const auto& l : sc.lines) {
      const auto line = mw.w->line_object({sc.def->id, l.line, l.generation});
      ASSERT_NE(line, nullptr);
      ++live;
      SCOPED_TRACE(testing::Message() << sc.def->name << " line " << l.line);
      auto it = box->lines.find({sc.def->id, l.line});
      if (it == box->lines.end()) {
        EXPECT_EQ(line->player_count(), 0U) << "players on a line that sent no event";
        continue;
      }
      const net::view_mirror& mirror = it->second;
      EXPECT_EQ(mirror.size(), line->player_count());
      std::map<grid::entity_id, player_id> who;
      for (player_id p : online)
        if (auto e = line->entity_of(p)) who[*e] = p;
      EXPECT_EQ(who.size(), mirror.size());
      for (auto [entity, p] : who) {
        EXPECT_EQ(mirror.where(p), line->grid().position_of(entity)) << "player " << p;
        std::vector<player_id> truth;
        ASSERT_TRUE(line->grid()
                        .broadcast(entity, grid::type_mask::player,
                                   [&](grid::entity_id q) { truth.push_back(who.at(q)); })
                        .has_value());
        std::sort(truth.begin(), truth.end());
        EXPECT_EQ(mirror.view_of(p), truth) << "player " << p;
        std::vector<player_id> monsters;
        ASSERT_TRUE(line->grid()
                        .for_each_in_view(line->grid().position_of(entity), grid::type_mask::npc,
                                          [&](grid::entity_id m) { monsters.push_back(m); })
                        .has_value());
        std::sort(monsters.begin(), monsters.end());
        EXPECT_EQ(mirror.monsters_seen_by(p), monsters) << "player " << p;
        ++checked_players;
      }
      EXPECT_EQ(mirror.monster_count(), line->monsters().size());
      for (grid::entity_id m : line->monsters()) {
        EXPECT_EQ(mirror.where_monster(m), line->grid().position_of(m)) << "monster " << m;
        ++checked_monsters;
      }
    }
  }
  // A line that closed took its players off its mirror.
  std::size_t mirrored = 0;
  std::size_t mirrored_monsters = 0;
  for (const auto& [key, mirror] : box->lines)
    mirrored += mirror.size(), mirrored_monsters += mirror.monster_count();
  EXPECT_EQ(mirrored, checked_players);
  EXPECT_EQ(mirrored_monsters, checked_monsters) << "a line that closed took its monsters off too";
  EXPECT_GT(checked_monsters, 0U);
  EXPECT_GT(box->monster_events, checked_monsters) << "the monsters walked";
  EXPECT_GT(live, 3U);
  EXPECT_GT(checked_players, 20U) << "the trace left too few players to check";
  EXPECT_GT(moves_seen, 100U);
  EXPECT_GE(checked_players, online.size() / 2) << "the trace left too few players to check";
}

}  // namespace
}  // namespace scenert
