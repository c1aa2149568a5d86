#pragma once
// Shared by the scene tests: a small scene table, a manual-clock pool, and a scene host that records.

#include <chrono>
#include <mutex>
#include <vector>

#include <scenert/runtime/processor_pool.hpp>
#include <scenert/scene/scene.hpp>
#include <scenert/scene/world.hpp>

namespace scenert::test {

using namespace std::chrono_literals;

inline constexpr scene_id town_id = 1;
inline constexpr scene_id dungeon_id = 10;
inline constexpr scene_id guild_id = 20;
inline constexpr scene_id field_id = 30;
inline constexpr scene_id space_id = 40;

/// Town (single, least-loaded, 3 soft / 5 hard, lines 1..3), dungeon (group, fill-first, 5 / 6,
/// lines 1..8, 3 monsters), guild (single, 0..2 lines), field (single, fill-first, 2 / 2, 1..2),
/// and a space of the town (no lines of its own).
inline scene_table small_table() {
  scene_table t;
  t.runtime.group_budget = 20;  // 4 dungeons per group
  t.runtime.idle_grace = 1000ms;
  t.runtime.quarantine_after = 3;
  t.maps.push_back(map_def{1, "map", 32, 32, 8, 8, 1, 1, {cell_rect{0, 0, 2, 2}}});
  auto add = [&](scene_id id, const char* name, scene_kind kind, scene_structure st, std::uint32_t cap,
                 std::uint32_t hard, std::uint32_t min, std::uint32_t max, allocation_policy policy,
                 std::uint32_t monsters) {
    scene_def d;
    d.id = id, d.name = name, d.kind = kind, d.structure = st, d.capacity = cap, d.hard_capacity = hard;
    d.min_lines = min, d.max_lines = max, d.frame_rate = 10, d.map = 1, d.policy = policy,
    d.monsters = monsters;
    if (kind == scene_kind::space) d.space = space_def{town_id, 1, 2};
    t.scenes.push_back(d);
  };
  add(town_id, "town", scene_kind::town, scene_structure::single, 3, 5, 1, 3, allocation_policy::least_loaded,
      2);
  add(dungeon_id, "dungeon", scene_kind::dungeon, scene_structure::group, 5, 6, 1, 8,
      allocation_policy::fill_first, 3);
  add(guild_id, "guild", scene_kind::guild, scene_structure::single, 10, 10, 0, 2,
      allocation_policy::fill_first, 0);
  add(field_id, "field", scene_kind::field, scene_structure::single, 2, 2, 1, 2,
      allocation_policy::fill_first, 1);
  add(space_id, "phase", scene_kind::space, scene_structure::single, 1, 1, 0, 0,
      allocation_policy::fill_first, 1);
  return t;
}

/// A scene host that records what scenes tell it.
struct recording_host final : scene_host {
  std::mutex m;
  std::vector<line_handle> empties, quarantines;
  std::vector<player_id> left;
  void scene_empty(line_handle l) override {
    std::lock_guard g(m);
    empties.push_back(l);
  }
  void player_left(line_handle, player_id p) override {
    std::lock_guard g(m);
    left.push_back(p);
  }
  void scene_quarantined(line_handle l) override {
    std::lock_guard g(m);
    quarantines.push_back(l);
  }
};

/// Runs the world on a manual-clock pool.
struct manual_world {
  manual_clock clk;
  scene_table table;
  std::unique_ptr<processor_pool> pool;
  std::shared_ptr<world> w;

  explicit manual_world(scene_table t = small_table(), world_options o = {}) : table(std::move(t)) {
    pool_options po;
    po.manual = &clk;
    po.quarantine_after = table.runtime.quarantine_after;
    po.log = [](log_level, std::string_view) {};
    pool = std::make_unique<processor_pool>(std::move(po));
    (void)pool->start();
    w = world::create(table, *pool, std::move(o));
    w->start();
    step();
  }
  ~manual_world() { (void)pool->stop(); }
  /// Moves time on: enough for the world, then every scene, then the world again to run.
  void step(std::chrono::nanoseconds dt = 250ms) { pool->advance(dt); }
  world_result ask(const world_request& r) {
    auto f = w->submit(r);
    step();
    EXPECT_EQ(f.wait_for(0s), std::future_status::ready);
    return f.get();
  }
  location where(player_id p) {
    auto f = w->locate(p);
    step(10ms);
    return f.get();
  }
  std::shared_ptr<const world_snapshot> snap() {
    step(110ms);
    return w->snapshot();
  }
  const scene_snapshot& scene_of(const world_snapshot& s, scene_id id) {
    for (const auto& sc : s.scenes)
      if (sc.def->id == id) return sc;
    throw std::runtime_error("no such scene in the snapshot");
  }
};

}  // namespace scenert::test
