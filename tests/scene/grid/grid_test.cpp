#include <scenert/scene/grid/grid.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

// Counts allocations so that tests can prove an operation allocates nothing. Not inlined: g++
// would otherwise pair the inlined free() with the library's operator new and warn.
[[gnu::noinline]] void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace scenert::grid {
namespace {

std::shared_ptr<const map_data> map_100x60() { return *map_data::create({100, 60, 10, 10, 1, 1, {}}); }

std::vector<entity_id> sorted(std::vector<entity_id> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(Grid, AddReportsTheViewAndMoveReportsOnlyTheDifference) {
  grid g(map_100x60());
  view_events ev;
  ASSERT_TRUE(g.add(1, entity_type::player, {5, 5}, ev));
  EXPECT_TRUE(ev.entered.empty());
  ASSERT_TRUE(g.add(2, entity_type::npc, {25, 5}, ev));  // two areas away: unseen
  ASSERT_TRUE(g.add(3, entity_type::item, {5, 15}, ev));
  EXPECT_EQ(ev.entered, std::vector<entity_id>{1});
  ev.clear();
  auto crossed = g.move(1, {12, 5}, ev);  // one area right: 2 enters, nothing leaves
  ASSERT_TRUE(crossed);
  EXPECT_TRUE(*crossed);
  EXPECT_EQ(ev.entered, std::vector<entity_id>{2});
  EXPECT_TRUE(ev.left.empty());
  ev.clear();
  ASSERT_TRUE(g.move(1, {0, 59}, ev));  // far away: everything leaves
  EXPECT_EQ(sorted(ev.left), (std::vector<entity_id>{2, 3}));
  EXPECT_TRUE(ev.entered.empty());
  EXPECT_EQ(g.position_of(1), (cell_point{0, 59}));
  EXPECT_EQ(g.size(), 3u);
}

TEST(Grid, MoveInsideOneAreaReportsNothingAndAllocatesNothing) {
  grid g(map_100x60());
  view_events ev;
  for (entity_id id = 0; id < 50; ++id) ASSERT_TRUE(g.add(id, entity_type::player, {id % 30, id % 20}, ev));
  auto crossings = [&] {
    for (std::uint32_t i = 0; i < 20; ++i) {
      ev.clear();
      ASSERT_TRUE(g.move(7, {i % 2 ? 7u : 41u, 7}, ev));  // ends in area 0
      ASSERT_TRUE(g.teleport(7, g.position_of(7), ev));
    }
  };
  crossings();  // warms the event buffers and the area vectors
  ev.clear();
  const long before = g_allocations.load();
  for (std::uint32_t i = 0; i < 100; ++i) {
    auto crossed = g.move(7, {i % 10, (i / 10) % 10}, ev);
    ASSERT_TRUE(crossed);
    EXPECT_FALSE(*crossed);
  }
  EXPECT_TRUE(ev.entered.empty());
  EXPECT_TRUE(ev.left.empty());
  crossings();  // steady state: crossings reuse the same memory
  EXPECT_EQ(g_allocations.load(), before);
}

TEST(Grid, TeleportRebuildsTheViewEvenOnTheSameCell) {
  grid g(map_100x60());
  view_events ev;
  ASSERT_TRUE(g.add(1, entity_type::player, {5, 5}, ev));
  ASSERT_TRUE(g.add(2, entity_type::npc, {6, 5}, ev));
  ASSERT_TRUE(g.add(3, entity_type::npc, {25, 5}, ev));
  ev.clear();
  ASSERT_TRUE(g.teleport(1, {5, 5}, ev));
  EXPECT_EQ(ev.left, std::vector<entity_id>{2});
  EXPECT_EQ(ev.entered, std::vector<entity_id>{2});
  EXPECT_EQ(g.cover_count(0), 1u);
  ev.clear();
  ASSERT_TRUE(g.teleport(1, {15, 5}, ev));
  EXPECT_EQ(ev.left, std::vector<entity_id>{2});
  EXPECT_EQ(sorted(ev.entered), (std::vector<entity_id>{2, 3}));
}

TEST(Grid, RemoveReportsTheViewAndForgetsTheId) {
  grid g(map_100x60());
  view_events ev;
  ASSERT_TRUE(g.add(1, entity_type::player, {5, 5}, ev));
  ASSERT_TRUE(g.add(2, entity_type::item, {6, 5}, ev));
  ev.clear();
  ASSERT_TRUE(g.remove(1, ev));
  EXPECT_EQ(ev.left, std::vector<entity_id>{2});
  EXPECT_FALSE(g.contains(1));
  EXPECT_EQ(g.cover_count(0), 0u);
  EXPECT_EQ(g.move(1, {1, 1}, ev).code(), grid_errc::unknown_entity);
  EXPECT_EQ(g.remove(1, ev).code(), grid_errc::unknown_entity);
  ASSERT_TRUE(g.add(1, entity_type::npc, {1, 1}, ev));  // an id can come back
  EXPECT_EQ(g.type_of(1), entity_type::npc);
}

TEST(Grid, BadInputIsAnErrorValueNamingTheInput) {
  grid g(map_100x60(), grid_options{1000, 0});
  ignore_view none;
  ASSERT_TRUE(g.add(4, entity_type::player, {0, 0}, none));
  auto dup = g.add(4, entity_type::npc, {1, 1}, none);
  EXPECT_EQ(dup.code(), grid_errc::duplicate_entity);
  EXPECT_NE(dup.error().message.find("entity 4"), std::string::npos) << dup.error().message;
  auto out = g.add(5, entity_type::npc, {100, 0}, none);
  EXPECT_EQ(out.code(), grid_errc::out_of_map);
  EXPECT_NE(out.error().message.find("(100, 0)"), std::string::npos) << out.error().message;
  EXPECT_EQ(g.move(4, {0, 60}, none).code(), grid_errc::out_of_map);
  EXPECT_EQ(g.position_of(4), (cell_point{0, 0}));  // a rejected move changes nothing
  EXPECT_EQ(g.teleport(4, {1000, 1000}, none).code(), grid_errc::out_of_map);
  EXPECT_EQ(g.move(9, {1, 1}, none).code(), grid_errc::unknown_entity);
  EXPECT_EQ(g.add(1000, entity_type::npc, {1, 1}, none).code(), grid_errc::id_too_large);
  EXPECT_EQ(g.for_each_in_view({0, 60}, type_mask::all, [](entity_id) {}).code(), grid_errc::out_of_map);
  EXPECT_EQ(g.broadcast(9, type_mask::all, [](entity_id) {}).code(), grid_errc::unknown_entity);
  EXPECT_EQ(g.for_each_in_rect({{5, 5}, {4, 9}}, type_mask::all, [](entity_id) {}).code(),
            grid_errc::out_of_map);
  EXPECT_EQ(g.for_each_in_rect({{5, 5}, {100, 9}}, type_mask::all, [](entity_id) {}).code(),
            grid_errc::out_of_map);
  EXPECT_EQ(g.for_each_active_npc(10, [](entity_id) {}).code(), grid_errc::bad_batch);
  EXPECT_EQ(g.size(), 1u);
}

TEST(Grid, QueriesFilterByTypeAcrossSegments) {
  grid g(map_100x60());
  ignore_view none;
  // Interleave types so that segment rotation in one area is exercised.
  const entity_type order[] = {entity_type::item,   entity_type::npc, entity_type::player, entity_type::item,
                               entity_type::player, entity_type::npc, entity_type::player};
  for (entity_id id = 0; id < 7; ++id) ASSERT_TRUE(g.add(id, order[id], {id, id}, none));
  ASSERT_TRUE(g.add(7, entity_type::player, {50, 50}, none));
  auto collect = [&](type_mask m) {
    std::vector<entity_id> out;
    EXPECT_TRUE(g.for_each_in_view({3, 3}, m, [&](entity_id id) { out.push_back(id); }));
    return sorted(out);
  };
  EXPECT_EQ(collect(type_mask::player), (std::vector<entity_id>{2, 4, 6}));
  EXPECT_EQ(collect(type_mask::npc), (std::vector<entity_id>{1, 5}));
  EXPECT_EQ(collect(type_mask::item), (std::vector<entity_id>{0, 3}));
  EXPECT_EQ(collect(type_mask::player | type_mask::item), (std::vector<entity_id>{0, 2, 3, 4, 6}));
  EXPECT_EQ(g.count_in_area(0, entity_type::player), 3u);
  ASSERT_TRUE(g.remove(4, none));  // a player from the middle of its segment
  ASSERT_TRUE(g.remove(1, none));  // an npc
  EXPECT_EQ(collect(type_mask::all), (std::vector<entity_id>{0, 2, 3, 5, 6}));
  EXPECT_EQ(collect(type_mask::npc), (std::vector<entity_id>{5}));
  std::vector<entity_id> others;
  ASSERT_TRUE(g.broadcast(2, type_mask::all, [&](entity_id id) { others.push_back(id); }));
  EXPECT_EQ(sorted(others), (std::vector<entity_id>{0, 3, 5, 6}));
}

// An NPC's move that nobody hears (ignore_view) skips the view strips: two grids, one moved
// unheard and one heard, must agree on every area's contents, cover and view afterwards.
TEST(Grid, AnUnheardNpcMoveLeavesTheGridAsAHeardOne) {
  grid unheard(map_100x60()), heard(map_100x60());
  ignore_view none;
  view_events events;
  for (entity_id id = 0; id < 40; ++id) {
    const entity_type type = id % 5 == 0   ? entity_type::player
                             : id % 7 == 0 ? entity_type::item
                                           : entity_type::npc;
    const cell_point at{(id * 37) % 100, (id * 11) % 60};
    ASSERT_TRUE(unheard.add(id, type, at, none));
    ASSERT_TRUE(heard.add(id, type, at, none));
  }
  std::uint32_t seed = 7;
  for (int step = 0; step < 5000; ++step) {
    seed = seed * 1103515245u + 12345u;
    const entity_id id = (seed >> 8) % 40;
    const cell_point to{(seed >> 12) % 100, (seed >> 20) % 60};
    events.clear();
    ASSERT_EQ(*unheard.move(id, to, none), *heard.move(id, to, events));
  }
  for (std::uint32_t a = 0; a < 60; ++a) {
    ASSERT_EQ(unheard.cover_count(a), heard.cover_count(a)) << a;
    for (const auto type : {entity_type::player, entity_type::npc, entity_type::item})
      ASSERT_EQ(unheard.count_in_area(a, type), heard.count_in_area(a, type)) << a;
  }
  for (std::uint32_t y = 0; y < 60; y += 7)
    for (std::uint32_t x = 0; x < 100; x += 9) {
      std::vector<entity_id> a, b;
      ASSERT_TRUE(unheard.for_each_in_view({x, y}, type_mask::all, [&](entity_id id) { a.push_back(id); }));
      ASSERT_TRUE(heard.for_each_in_view({x, y}, type_mask::all, [&](entity_id id) { b.push_back(id); }));
      ASSERT_EQ(sorted(a), sorted(b)) << x << "," << y;
    }
}

TEST(Grid, RectangleQueryKeepsOnlyCellsInside) {
  grid g(map_100x60());
  ignore_view none;
  ASSERT_TRUE(g.add(1, entity_type::player, {3, 3}, none));
  ASSERT_TRUE(g.add(2, entity_type::npc, {4, 4}, none));
  ASSERT_TRUE(g.add(3, entity_type::npc, {12, 9}, none));
  ASSERT_TRUE(g.add(4, entity_type::npc, {13, 9}, none));
  ASSERT_TRUE(g.add(5, entity_type::item, {99, 59}, none));
  std::vector<entity_id> in;
  ASSERT_TRUE(g.for_each_in_rect({{4, 4}, {12, 9}}, type_mask::all, [&](entity_id id) { in.push_back(id); }));
  EXPECT_EQ(sorted(in), (std::vector<entity_id>{2, 3}));
  in.clear();
  ASSERT_TRUE(
      g.for_each_in_rect({{0, 0}, {99, 59}}, type_mask::npc, [&](entity_id id) { in.push_back(id); }));
  EXPECT_EQ(sorted(in), (std::vector<entity_id>{2, 3, 4}));
}

TEST(Grid, ClearEmptiesEverythingAndKeepsTheMapShared) {
  auto m = map_100x60();
  grid line1(m), line2(m);
  ignore_view none;
  ASSERT_TRUE(line1.add(1, entity_type::player, {3, 3}, none));
  EXPECT_FALSE(line2.contains(1));
  EXPECT_EQ(&line1.map(), &line2.map());
  line1.clear();
  EXPECT_EQ(line1.size(), 0u);
  EXPECT_EQ(line1.cover_count(0), 0u);
  ASSERT_TRUE(line1.add(1, entity_type::player, {3, 3}, none));
}

struct mutating_visitor {
  grid* g;
  void enter(entity_id) { (void)g->move(0, {1, 1}, ignore_view{}); }
  void leave(entity_id) {}
};

TEST(GridDeathTest, ChangingTheGridFromAVisitorAborts) {
  grid g(map_100x60());
  ASSERT_TRUE(g.add(0, entity_type::player, {3, 3}, ignore_view{}));
  mutating_visitor v{&g};
  EXPECT_DEATH((void)g.add(1, entity_type::player, {3, 3}, v), "inside a visitor");
}

}  // namespace
}  // namespace scenert::grid
