#include <scenert/net/view_mirror.hpp>
#include <scenert/scene/grid/grid.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <span>
#include <vector>

namespace {

using scenert::entity_look;
using scenert::line_event;
using scenert::player_id;
using scenert::grid::cell_point;
using scenert::net::view_mirror;
namespace grid = scenert::grid;

// Plays the clients: each player's view as the frames it would get (202, appeared, vanished), and
// every frame it would get, for the checks.
struct clients {
  std::map<player_id, std::set<player_id>> seen;
  std::vector<std::pair<player_id, player_id>> appeared, vanished, moved;
  void view(player_id p, std::span<const player_id> all) {
    auto& v = seen[p];
    EXPECT_TRUE(v.empty()) << "a 202 for player " << p << " who already saw players";
    v.insert(all.begin(), all.end());
  }
  void appeared_(player_id to, player_id who) {
    EXPECT_TRUE(seen[to].insert(who).second) << who << " appeared twice to " << to;
    appeared.emplace_back(to, who);
  }
  void vanished_(player_id to, player_id who) {
    EXPECT_EQ(seen[to].erase(who), 1U) << who << " vanished from " << to << " who did not see it";
    vanished.emplace_back(to, who);
  }
};
struct out {
  clients& c;
  void view(player_id p, std::span<const player_id> all) { c.view(p, all); }
  void appeared(player_id to, player_id who) { c.appeared_(to, who); }
  void vanished(player_id to, player_id who) { c.vanished_(to, who); }
  void moved(player_id to, player_id who) {
    EXPECT_EQ(c.seen[to].count(who), 1U) << to << " hears " << who << " move without seeing it";
    c.moved.emplace_back(to, who);
  }
  void monster_view(player_id, std::span<const player_id> all) { EXPECT_TRUE(all.empty()); }
  void monster_at(player_id, player_id) { ADD_FAILURE() << "a monster where there is none"; }
  void monster_gone(player_id, player_id) { ADD_FAILURE() << "a monster where there is none"; }
};

std::shared_ptr<const grid::map_data> make_map(std::uint32_t eye) {
  grid::map_spec spec;
  spec.width = 90;
  spec.height = 70;
  spec.area_width = 10;
  spec.area_height = 10;
  spec.eyesight_x = eye;
  spec.eyesight_y = eye;
  return grid::map_data::create(spec).value();
}

// The oracle is the scene's own grid: after every event the mirror's fan-out equals the grid's
// enter and leave sets, and at the end each client's view equals the grid's view.
TEST(ViewMirror, FanOutEqualsTheGridOnRandomTraces) {
  for (std::uint32_t eye : {1U, 2U}) {  // 9-grid and 25-grid
    SCOPED_TRACE(testing::Message() << "eyesight " << eye);
    auto map = make_map(eye);
    grid::grid truth(map);
    view_mirror mirror(map);
    clients c;
    std::mt19937 rng(eye);
    auto rnd = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
    std::vector<player_id> here;
    auto cell = [&] { return cell_point{rnd(map->width()), rnd(map->height())}; };
    auto near = [&](std::uint32_t from, std::uint32_t size) {  // up to 6 cells either way
      const int to = static_cast<int>(from) + static_cast<int>(rnd(13)) - 6;
      return static_cast<std::uint32_t>(std::clamp(to, 0, static_cast<int>(size) - 1));
    };
    auto entity = [](player_id p) { return static_cast<grid::entity_id>(p); };
    for (int step = 0; step < 4000; ++step) {
      const std::uint32_t dice = rnd(10);
      grid::view_events ev;
      c.appeared.clear();
      c.vanished.clear();
      c.moved.clear();
      if (here.size() < 5 || dice < 2) {  // enter
        const player_id p = 1 + rnd(400);
        if (std::find(here.begin(), here.end(), p) != here.end()) continue;
        const cell_point at = cell();
        ASSERT_TRUE(truth.add(entity(p), grid::entity_type::player, at, ev).has_value());
        ASSERT_TRUE(mirror.apply({line_event::kind::entered, p, at}, out{c}).has_value());
        here.push_back(p);
        std::set<player_id> want(ev.entered.begin(), ev.entered.end());
        EXPECT_EQ(c.seen[p], want) << "the 202 of " << p;
      } else if (dice < 3) {  // leave
        const std::size_t i = rnd(static_cast<std::uint32_t>(here.size()));
        const player_id p = here[i];
        ASSERT_TRUE(truth.remove(entity(p), ev).has_value());
        ASSERT_TRUE(mirror.apply({line_event::kind::left, p, {}}, out{c}).has_value());
        here.erase(here.begin() + static_cast<std::ptrdiff_t>(i));
        std::set<player_id> want(ev.left.begin(), ev.left.end()), got;
        for (auto [to, who] : c.vanished) got.insert(to);
        EXPECT_EQ(got, want);
        c.seen.erase(p);
      } else {  // move, mostly near
        const player_id p = here[rnd(static_cast<std::uint32_t>(here.size()))];
        const cell_point from = truth.position_of(entity(p));
        cell_point at = cell();
        if (dice < 9) at = {near(from.x, map->width()), near(from.y, map->height())};
        ASSERT_TRUE(truth.move(entity(p), at, ev).has_value());
        ASSERT_TRUE(mirror.apply({line_event::kind::moved, p, at}, out{c}).has_value());
        std::set<player_id> left(ev.left.begin(), ev.left.end()),
            entered(ev.entered.begin(), ev.entered.end());
        std::set<player_id> got_left, got_entered, got_moved;
        for (auto [to, who] : c.vanished) got_left.insert(to == p ? who : to);
        for (auto [to, who] : c.appeared) got_entered.insert(to == p ? who : to);
        for (auto [to, who] : c.moved) {
          EXPECT_EQ(who, p);
          got_moved.insert(to);
        }
        EXPECT_EQ(got_left, left);
        EXPECT_EQ(got_entered, entered);
        EXPECT_EQ(c.vanished.size(), 2 * left.size()) << "both ways";
        EXPECT_EQ(c.appeared.size(), 2 * entered.size()) << "both ways";
        std::set<player_id> viewers;
        ASSERT_TRUE(
            truth.broadcast(entity(p), grid::type_mask::player, [&](grid::entity_id q) { viewers.insert(q); })
                .has_value());
        EXPECT_EQ(got_moved, viewers) << "200 Tp 4 to everyone who sees the mover";
      }
      if (testing::Test::HasFailure()) return;
    }
    // Every client's view is the truth, and the mirror's own answer too.
    for (player_id p : here) {
      std::vector<player_id> want;
      ASSERT_TRUE(
          truth.broadcast(entity(p), grid::type_mask::player, [&](grid::entity_id q) { want.push_back(q); })
              .has_value());
      std::sort(want.begin(), want.end());
      EXPECT_EQ(mirror.view_of(p), want);
      EXPECT_EQ(std::vector<player_id>(c.seen[p].begin(), c.seen[p].end()), want);
      EXPECT_EQ(mirror.where(p), truth.position_of(entity(p)));
    }
    EXPECT_EQ(mirror.size(), here.size());
  }
}

TEST(ViewMirror, EventsThatDoNotFitAreNamedAndChangeNothing) {
  view_mirror mirror(make_map(1));
  clients c;
  ASSERT_TRUE(mirror.apply({line_event::kind::entered, 7, {1, 1}}, out{c}).has_value());
  auto twice = mirror.apply({line_event::kind::entered, 7, {2, 2}}, out{c});
  ASSERT_FALSE(twice.has_value());
  EXPECT_EQ(twice.code(), scenert::net::mirror_errc::already_here);
  EXPECT_NE(twice.error().message.find("player 7"), std::string::npos) << twice.error().message;
  EXPECT_EQ(mirror.apply({line_event::kind::moved, 8, {2, 2}}, out{c}).code(),
            scenert::net::mirror_errc::not_here);
  EXPECT_EQ(mirror.apply({line_event::kind::left, 8, {}}, out{c}).code(),
            scenert::net::mirror_errc::not_here);
  EXPECT_EQ(mirror.apply({line_event::kind::moved, 7, {90, 0}}, out{c}).code(),
            scenert::net::mirror_errc::off_map);
  EXPECT_EQ(mirror.where(7), (cell_point{1, 1}));
  EXPECT_EQ(mirror.size(), 1U);
}

// Players and entities (monsters, a module's entities with their looks) on one grid: after every
// event each client's entities are the grid's in its view, where the grid has them, looking as the
// line last said, and nobody hears of an entity it does not see.
using sighting = std::pair<cell_point, entity_look>;
struct monster_clients {
  std::map<player_id, std::map<player_id, sighting>> seen;  // player -> entity -> cell and look
  view_mirror* mirror = nullptr;
  void view(player_id, std::span<const player_id>) {}
  void appeared(player_id, player_id) {}
  void vanished(player_id, player_id) {}
  void moved(player_id, player_id) {}
  void monster_view(player_id p, std::span<const player_id> all) {
    auto& v = seen[p];
    v.clear();
    for (player_id m : all) v[m] = {*mirror->where_monster(m), *mirror->look_of(m)};
  }
  void monster_at(player_id p, player_id m) { seen[p][m] = {*mirror->where_monster(m), *mirror->look_of(m)}; }
  void monster_gone(player_id p, player_id m) {
    EXPECT_EQ(seen[p].erase(m), 1U) << "monster " << m << " gone from " << p << " who did not see it";
  }
};

TEST(ViewMirror, MonstersSeenEqualTheGridOnRandomTraces) {
  for (std::uint32_t eye : {1U, 2U}) {
    SCOPED_TRACE(testing::Message() << "eyesight " << eye);
    auto map = make_map(eye);
    grid::grid truth(map);
    view_mirror mirror(map);
    monster_clients c;
    c.mirror = &mirror;
    std::mt19937 rng(40 + eye);
    auto rnd = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
    auto cell = [&] { return cell_point{rnd(map->width()), rnd(map->height())}; };
    auto near = [&](cell_point from) {  // up to 12 cells either way
      auto step = [&](std::uint32_t v, std::uint32_t size) {
        const int to = static_cast<int>(v) + static_cast<int>(rnd(25)) - 12;
        return static_cast<std::uint32_t>(std::clamp(to, 0, static_cast<int>(size) - 1));
      };
      return cell_point{step(from.x, map->width()), step(from.y, map->height())};
    };
    // Players are entities 1..999, monsters 1000 and up, as the ids of one grid.
    std::vector<player_id> players, monsters;
    std::map<player_id, entity_look> looks;  // the line's truth
    auto look = [&] {
      return entity_look{static_cast<std::uint16_t>(rnd(4)), static_cast<std::uint16_t>(rnd(3)),
                         static_cast<std::int32_t>(rnd(1000))};
    };
    auto pick = [&](std::vector<player_id>& v) { return v[rnd(static_cast<std::uint32_t>(v.size()))]; };
    auto id = [](player_id p) { return static_cast<grid::entity_id>(p); };
    for (int step = 0; step < 4000; ++step) {
      const std::uint32_t dice = rnd(12);
      line_event e;
      if (players.size() < 4 || dice == 0) {
        const player_id p = 1 + rnd(999);
        if (std::count(players.begin(), players.end(), p)) continue;
        e = {line_event::kind::entered, p, cell()};
        ASSERT_TRUE(truth.add(id(p), grid::entity_type::player, e.at, grid::ignore_view{}).has_value());
        players.push_back(p);
      } else if (dice == 1) {
        const player_id p = pick(players);
        e = {line_event::kind::left, p, {}};
        ASSERT_TRUE(truth.remove(id(p), grid::ignore_view{}).has_value());
        players.erase(std::find(players.begin(), players.end(), p));
        c.seen.erase(p);
      } else if (dice < 5) {
        const player_id p = pick(players);
        e = {line_event::kind::moved, p, near(truth.position_of(id(p)))};
        ASSERT_TRUE(truth.move(id(p), e.at, grid::ignore_view{}).has_value());
      } else if (monsters.size() < 20 || dice == 5) {
        const player_id m = 1000 + rnd(1000);
        if (std::count(monsters.begin(), monsters.end(), m)) continue;
        e = {line_event::kind::entered, m, cell(), true, look()};
        ASSERT_TRUE(truth.add(id(m), grid::entity_type::npc, e.at, grid::ignore_view{}).has_value());
        monsters.push_back(m);
        looks[m] = e.look;
      } else if (dice == 6) {
        const player_id m = pick(monsters);
        e = {line_event::kind::left, m, {}, true};
        ASSERT_TRUE(truth.remove(id(m), grid::ignore_view{}).has_value());
        monsters.erase(std::find(monsters.begin(), monsters.end(), m));
        looks.erase(m);
      } else if (dice == 7) {
        const player_id m = pick(monsters);
        e = {line_event::kind::changed, m, truth.position_of(id(m)), true, look()};
        looks[m] = e.look;
      } else {
        const player_id m = pick(monsters);
        e = {line_event::kind::moved, m, near(truth.position_of(id(m))), true};
        ASSERT_TRUE(truth.move(id(m), e.at, grid::ignore_view{}).has_value());
      }
      const auto applied = mirror.apply(e, c);
      ASSERT_TRUE(applied.has_value()) << applied.error().message;
      for (player_id p : players) {
        std::map<player_id, sighting> want;
        ASSERT_TRUE(truth
                        .for_each_in_view(truth.position_of(id(p)), grid::type_mask::npc,
                                          [&](grid::entity_id m) {
                                            want[m] = {truth.position_of(m), looks[m]};
                                          })
                        .has_value());
        ASSERT_EQ(c.seen[p], want) << "the monsters player " << p << " sees, after step " << step;
        std::vector<player_id> ids;
        for (const auto& [m, at] : want) ids.push_back(m);
        EXPECT_EQ(mirror.monsters_seen_by(p), ids);
      }
    }
    EXPECT_EQ(mirror.monster_count(), monsters.size());
    EXPECT_EQ(mirror.size(), players.size());
  }
}

TEST(ViewMirror, AMonsterEventThatDoesNotFitIsNamed) {
  view_mirror mirror(make_map(1));
  monster_clients c;
  c.mirror = &mirror;
  ASSERT_TRUE(mirror.apply({line_event::kind::entered, 7, {1, 1}, true}, c).has_value());
  auto twice = mirror.apply({line_event::kind::entered, 7, {2, 2}, true}, c);
  EXPECT_EQ(twice.code(), scenert::net::mirror_errc::already_here);
  EXPECT_NE(twice.error().message.find("monster 7"), std::string::npos) << twice.error().message;
  EXPECT_EQ(mirror.apply({line_event::kind::moved, 8, {2, 2}, true}, c).code(),
            scenert::net::mirror_errc::not_here);
  EXPECT_EQ(mirror.where_monster(7), (cell_point{1, 1}));
  EXPECT_FALSE(mirror.where(7).has_value()) << "a monster is not a player";
  EXPECT_EQ(mirror.apply({line_event::kind::changed, 7, {2, 2}, true, {1, 1, 1}}, c).code(),
            scenert::net::mirror_errc::not_here)
      << "a change names the cell the entity stands on";
  EXPECT_EQ(mirror.apply({line_event::kind::changed, 8, {1, 1}, true, {1, 1, 1}}, c).code(),
            scenert::net::mirror_errc::not_here);
  EXPECT_EQ(mirror.apply({line_event::kind::changed, 7, {1, 1}, false, {1, 1, 1}}, c).code(),
            scenert::net::mirror_errc::not_here)
      << "a player has no look";
  EXPECT_EQ(mirror.look_of(7), (entity_look{}));
}

}  // namespace
