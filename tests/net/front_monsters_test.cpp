// Monsters on the wire: a client of scenert's protocol sees the monsters in its view (1009, 1010);
// a client of seed 002's protocol never hears of them.
#include <cmath>
#include <map>

#include "front_fixture.hpp"

namespace scenert::net::test {
namespace {

// The cell a position stands in, with the line's geometry.
grid::cell_point cell_of(float x, float z, const scene_info& g) {
  return {static_cast<std::uint32_t>(std::floor((x - g.origin_x) / g.cell_size)),
          static_cast<std::uint32_t>(std::floor((z - g.origin_z) / g.cell_size))};
}

// Whether a cell is in the view of a player standing on `at`: the areas within eyesight of its own.
bool in_view(grid::cell_point c, grid::cell_point at, const scene_info& g) {
  const auto area = [&](std::uint32_t v) { return static_cast<std::int64_t>(v / g.area_size); };
  return std::abs(area(c.x) - area(at.x)) <= g.eyesight_x && std::abs(area(c.y) - area(at.y)) <= g.eyesight_z;
}

TEST(FrontMonsters, AScenertClientSeesTheMonstersInItsViewAndTheirSteps) {
  server s({}, [](scene_table& t) {
    for (auto& d : t.scenes)
      if (d.id == town_id) d.monsters = 12;
  });
  auto guest = s.connect();
  ASSERT_TRUE(guest);
  const auto guest_pid = land(*guest);

  auto c = s.connect();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->send(login{"hunter", ""}));
  const auto me = wait_for<login_ok>(*c);
  scene_info geometry;
  std::optional<position> mine;
  std::map<std::uint32_t, monster_spot> seen;  // by id; the geometry may come after them
  bool got_info = false, got_all = false;
  while (!got_info || !got_all || !mine) {
    auto m = c->receive(patience);
    ASSERT_TRUE(m.has_value()) << m.error().message;
    if (auto* i = std::get_if<scene_info>(&m.value())) geometry = *i, got_info = true;
    if (auto* b = std::get_if<broadcast>(&m.value()); b && is(*b, me.pid, broadcast_type::appeared))
      mine = b->p;
    if (auto* v = std::get_if<monsters_seen>(&m.value())) {
      ASSERT_TRUE(v->all) << "the first monsters of a view are all of them";
      ASSERT_FALSE(got_all);
      got_all = true;
      for (const auto& x : v->monsters)
        EXPECT_TRUE(seen.emplace(x.id, x).second) << "monster " << x.id << " twice";
    }
  }
  ASSERT_EQ(geometry.scene, town_id);
  ASSERT_FALSE(seen.empty()) << "12 monsters on a 32x32 town, none in a 24x24 view";
  const auto at = cell_of(mine->x, mine->z, geometry);
  for (const auto& [id, x] : seen)
    EXPECT_TRUE(in_view(cell_of(x.x, x.z, geometry), at, geometry)) << "monster " << id;

  // The monsters chase the player: a step arrives, inside the view, without any request.
  const auto step = wait_for<monsters_seen>(*c, [](const monsters_seen& v) { return !v.all; });
  ASSERT_EQ(step.monsters.size(), 1U);
  EXPECT_TRUE(in_view(cell_of(step.monsters[0].x, step.monsters[0].z, geometry), at, geometry));

  // The guest stands in the same view (it saw the hunter arrive) and heard none of it: every frame
  // it got before its own chat comes back is one of seed 002's.
  wait_for<broadcast>(*guest, [&](const broadcast& b) { return is(b, me.pid, broadcast_type::appeared); });
  ASSERT_TRUE(guest->send(talk{"anyone?"}));
  for (;;) {
    auto m = guest->receive(patience);
    ASSERT_TRUE(m.has_value()) << m.error().message;
    EXPECT_LT(static_cast<std::uint32_t>(id_of(m.value())), 1000U) << name_of(id_of(m.value()));
    if (auto* b = std::get_if<broadcast>(&m.value()); b && is(*b, guest_pid, broadcast_type::chat)) break;
  }
}

}  // namespace
}  // namespace scenert::net::test
