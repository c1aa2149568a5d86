// The grid against a brute-force oracle on random and scripted traces.
#include "grid_oracle.hpp"

#include <scenert/scene/grid/grid.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <vector>

namespace scenert::grid {
namespace {

using testing::oracle;
using testing::oracle_events;
using testing::sorted;

std::shared_ptr<const map_data> make_map(std::uint32_t w, std::uint32_t h, std::uint32_t aw, std::uint32_t ah,
                                         std::uint32_t rx, std::uint32_t ry) {
  auto m = map_data::create({w, h, aw, ah, rx, ry, {}});
  EXPECT_TRUE(m) << m.error().message;
  return *m;
}

// Replays operations on a grid and the oracle and compares every result.
class checker {
 public:
  explicit checker(std::shared_ptr<const map_data> m) : map_(m), grid_(m), oracle_(*m) {}

  void add(entity_id id, entity_type t, cell_point at) {
    events_.clear();
    ASSERT_TRUE(grid_.add(id, t, at, events_));
    expect_same(oracle_.add(id, t, at), "add");
  }
  void remove(entity_id id) {
    events_.clear();
    ASSERT_TRUE(grid_.remove(id, events_));
    expect_same(oracle_.remove(id), "remove");
  }
  void move(entity_id id, cell_point to) {
    events_.clear();
    const std::uint32_t before = grid_.area_of(id);
    auto crossed = grid_.move(id, to, events_);
    ASSERT_TRUE(crossed);
    EXPECT_EQ(*crossed, before != map_->area_index(to));
    expect_same(oracle_.move(id, to, false), "move");
  }
  void teleport(entity_id id, cell_point to) {
    events_.clear();
    ASSERT_TRUE(grid_.teleport(id, to, events_));
    expect_same(oracle_.move(id, to, true), "teleport");
  }
  void check_covers() const {
    std::vector<std::uint32_t> got(map_->area_count());
    for (std::uint32_t a = 0; a < got.size(); ++a) got[a] = grid_.cover_count(a);
    ASSERT_EQ(got, oracle_.covers()) << "cover counts after op " << ops_;
  }
  void check_queries(cell_point at) const {
    std::vector<entity_id> seen;
    ASSERT_TRUE(grid_.for_each_in_view(at, type_mask::all, [&](entity_id id) { seen.push_back(id); }));
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, oracle_.view(at, std::nullopt));
  }
  void check_active_npcs() {
    for (std::uint32_t b = 0; b < grid::ai_batch_count; ++b) {
      std::vector<entity_id> got, want;
      ASSERT_TRUE(grid_.for_each_active_npc(b, [&](entity_id id) { got.push_back(id); }));
      for (entity_id id = 0; id < oracle_.capacity(); ++id) {
        if (!oracle_.contains(id) || oracle_.type(id) != entity_type::npc) continue;
        const std::uint32_t a = map_->area_index(oracle_.at(id));
        if (a % grid::ai_batch_count == b && oracle_.cover(a) > 0) want.push_back(id);
      }
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want) << "batch " << b;
    }
  }
  const oracle& truth() const { return oracle_; }
  grid& under_test() { return grid_; }

 private:
  void expect_same(const oracle_events& want, const char* op) {
    ++ops_;
    const oracle_events got = sorted(events_);
    ASSERT_EQ(got.entered, want.entered) << op << " #" << ops_ << " enter set";
    ASSERT_EQ(got.left, want.left) << op << " #" << ops_ << " leave set";
  }
  std::shared_ptr<const map_data> map_;
  grid grid_;
  oracle oracle_;
  view_events events_;
  int ops_ = 0;
};

// Positions lean on the map edges: that is where clamped views go wrong.
cell_point random_cell(std::mt19937_64& rng, const map_data& m) {
  auto pick = [&](std::uint32_t n) -> std::uint32_t {
    const auto r = rng() % 10;
    if (r == 0) return 0;
    if (r == 1) return n - 1;
    return static_cast<std::uint32_t>(rng() % n);
  };
  return {pick(m.width()), pick(m.height())};
}

cell_point step(std::mt19937_64& rng, const map_data& m, cell_point p) {
  auto walk = [&](std::uint32_t v, std::uint32_t n, std::uint32_t reach) {
    const auto d = static_cast<std::int64_t>(rng() % (2 * reach + 1)) - static_cast<std::int64_t>(reach);
    const std::int64_t w = static_cast<std::int64_t>(v) + d;
    return static_cast<std::uint32_t>(std::clamp<std::int64_t>(w, 0, n - 1));
  };
  return {walk(p.x, m.width(), m.area_width() + 1), walk(p.y, m.height(), m.area_height() + 1)};
}

void replay_random(std::shared_ptr<const map_data> m, std::uint64_t seed, int ops, entity_id ids) {
  checker c(m);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < ops; ++i) {
    const auto id = static_cast<entity_id>(rng() % ids);
    const auto r = rng() % 100;
    if (!c.truth().contains(id)) {
      c.add(id, static_cast<entity_type>(rng() % 3), random_cell(rng, *m));
    } else if (r < 8) {
      c.remove(id);
    } else if (r < 18) {
      c.teleport(id, r < 12 ? c.truth().at(id) : random_cell(rng, *m));
    } else if (r < 28) {
      c.move(id, random_cell(rng, *m));
    } else {
      c.move(id, step(rng, *m, c.truth().at(id)));
    }
    if (::testing::Test::HasFatalFailure()) return;
    c.check_covers();
    if (i % 50 == 0) {
      c.check_queries(random_cell(rng, *m));
      c.check_active_npcs();
    }
    if (::testing::Test::HasFatalFailure()) return;
  }
}

struct geometry {
  std::uint32_t w, h, aw, ah, rx, ry;
};

void PrintTo(const geometry& g, std::ostream* os) {
  *os << g.w << "x" << g.h << " cells, area " << g.aw << "x" << g.ah << ", radius " << g.rx << "x" << g.ry;
}

std::string geometry_name(const ::testing::TestParamInfo<geometry>& info) {
  const geometry& g = info.param;
  return "map" + std::to_string(g.w) + "x" + std::to_string(g.h) + "area" + std::to_string(g.aw) + "x" +
         std::to_string(g.ah) + "radius" + std::to_string(g.rx) + "x" + std::to_string(g.ry);
}

class GridOracle : public ::testing::TestWithParam<geometry> {};

TEST_P(GridOracle, EnterAndLeaveSetsAndCoversMatchBruteForceOnRandomTraces) {
  const geometry g = GetParam();
  for (std::uint64_t seed : {1u, 7u, 42u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    replay_random(make_map(g.w, g.h, g.aw, g.ah, g.rx, g.ry), seed, 1000, 40);
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Geometries, GridOracle,
                         ::testing::Values(geometry{48, 32, 8, 8, 1, 1},  // exact multiple, 9-grid
                                           geometry{37, 23, 5, 4, 2, 2},  // ragged edges, 25-grid
                                           geometry{50, 41, 7, 5, 2, 1},  // mixed radius
                                           geometry{64, 16, 4, 4, 1, 3},  // radius taller than the map
                                           geometry{10, 10, 3, 3, 5, 5},  // radius wider than the map
                                           geometry{9, 7, 1, 1, 1, 1},    // one cell per area
                                           geometry{1, 1, 1, 1, 1, 1}),   // a single cell
                         geometry_name);

// Walks an observer along each of the four edges of a 25-grid map among entities that stand on the
// edges, and checks every step.
TEST(GridOracleEdges, TwentyFiveGridIsExactAlongAllFourEdges) {
  auto m = make_map(71, 52, 7, 5, 2, 2);  // 11 x 11 areas, the last row and column ragged
  checker c(m);
  entity_id next = 0;
  for (std::uint32_t x = 0; x < 71; x += 3) {
    c.add(next++, entity_type::player, {x, 0});
    c.add(next++, entity_type::npc, {x, 51});
  }
  for (std::uint32_t y = 0; y < 52; y += 3) {
    c.add(next++, entity_type::item, {0, y});
    c.add(next++, entity_type::player, {70, y});
  }
  const entity_id walker = next;
  c.add(walker, entity_type::player, {0, 0});
  auto walk_to = [&](cell_point to) {
    cell_point p = c.truth().at(walker);
    while (!(p == to) && !HasFatalFailure()) {
      p.x += p.x < to.x ? 1 : (p.x > to.x ? -1u : 0);
      p.y += p.y < to.y ? 1 : (p.y > to.y ? -1u : 0);
      c.move(walker, p);
      c.check_covers();
    }
  };
  walk_to({70, 0});   // top edge
  walk_to({70, 51});  // right edge
  walk_to({0, 51});   // bottom edge
  walk_to({0, 0});    // left edge
  walk_to({70, 51});  // the diagonal, corner to corner
  c.teleport(walker, {0, 51});
  c.teleport(walker, {1, 50});
  c.check_covers();
  c.check_active_npcs();
}

}  // namespace
}  // namespace scenert::grid
