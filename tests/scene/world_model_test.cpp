// The randomized model test: several threads send random requests to a real world on a real pool;
// at checkpoints and at the end, the world is checked against a model built from the answers.

#include <scenert/scene/world.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "fixture.hpp"
#include "model_driver.hpp"

namespace scenert {
namespace {

using namespace std::chrono_literals;
using R = world_request;

// One line object's rounds; kept by the test, since the world may destroy surplus objects.
struct watch_counts {
  std::atomic<int> in_tick{0};
  std::atomic<std::uint64_t> actives{0}, inactives{0}, overlaps{0};
};

// Counts each line object's rounds and catches a tick running on two threads at once.
struct watch_module final : scene_module {
  watch_counts* c;
  explicit watch_module(watch_counts* counts) : c(counts) {}
  void on_active(scene&) override { c->actives.fetch_add(1); }
  void on_inactive(scene&) override { c->inactives.fetch_add(1); }
  void on_tick(scene&, const tick_context&) override {
    if (c->in_tick.fetch_add(1) != 0) c->overlaps.fetch_add(1);
    std::this_thread::yield();
    c->in_tick.fetch_sub(1);
  }
};

scene_table model_table() {
  scene_table t;
  t.runtime.group_budget = 12;  // 4 dungeons of 3 per group
  t.runtime.idle_grace = 20ms;  // lines close and reopen all the time
  t.runtime.quarantine_after = 3;
  t.maps.push_back(map_def{1, "map", 32, 32, 8, 8, 1, 1, {}});
  auto add = [&](scene_id id, scene_kind k, scene_structure st, std::uint32_t cap, std::uint32_t hard,
                 std::uint32_t min, std::uint32_t max, allocation_policy pol) {
    scene_def d;
    d.id = id, d.name = "s" + std::to_string(id), d.kind = k, d.structure = st, d.capacity = cap;
    d.hard_capacity = hard, d.min_lines = min, d.max_lines = max, d.frame_rate = 50, d.map = 1,
    d.policy = pol;
    d.monsters = 2;
    t.scenes.push_back(d);
  };
  add(1, scene_kind::town, scene_structure::single, 10, 12, 1, 4, allocation_policy::least_loaded);
  add(2, scene_kind::dungeon, scene_structure::group, 3, 4, 0, 60, allocation_policy::fill_first);
  add(3, scene_kind::field, scene_structure::single, 8, 8, 2, 3, allocation_policy::fill_first);
  add(4, scene_kind::guild, scene_structure::single, 10, 10, 0, 2, allocation_policy::fill_first);
  add(5, scene_kind::dungeon, scene_structure::group, 3, 4, 0, 40, allocation_policy::fill_first);
  t.scenes.back().instances = instance_mode::party;
  add(6, scene_kind::dungeon, scene_structure::group, 3, 4, 1, 40, allocation_policy::fill_first);
  t.scenes.back().instances = instance_mode::both;
  return t;
}

struct model_run {
  static constexpr int threads = 4;
  static constexpr int players_per_thread = 40;
  static constexpr int requests_per_thread = 1500;
  static constexpr int checkpoint_every = 500;

  scene_table table = model_table();
  std::unique_ptr<processor_pool> pool;
  std::shared_ptr<world> w;
  std::mutex watches_mutex;
  std::deque<watch_counts> watches;
  std::vector<std::map<player_id, std::optional<line_handle>>> models{threads};
  std::atomic<int> checks{0};
  test::violation_list violations;
  std::mutex counts_mutex;  // error_counts, ok_counts
  std::map<std::string, int> error_counts;
  std::map<int, int> ok_counts;  // by request kind

  void violation(std::string v) { violations.add(std::move(v)); }

  model_run() {
    pool = test::quiet_pool();
    world_options o;
    o.hz = 500;
    o.line_pool = 4;
    o.on_new_line = [this](scene& s) {
      std::lock_guard g(watches_mutex);
      s.add_module(std::make_unique<watch_module>(&watches.emplace_back()));
    };
    w = world::create(table, *pool, std::move(o));
    (void)pool->start();
    w->start();
  }

  // Players are in fixed parties across the threads; some go alone.
  static party_id party_of(player_id p) { return p % 5 == 0 ? 0 : 1 + p % 13; }

  // A private line holds only its party (or its solo player), and a party has one open instance a scene.
  void check_private(const scene_def& def, const line_info& l, const line_directory& dir,
                     std::set<std::pair<party_id, scene_id>>& seen) {
    if (l.owner == 0) return;
    if (def.instances == instance_mode::shared)
      violation(fmt::format("scene {} line {}: private in a shared scene", def.id, l.handle.line));
    if (l.state == line_state::open && !seen.insert({l.owner, def.id}).second)
      violation(fmt::format("party {}: two open instances of scene {}", l.owner, def.id));
    for (player_id p : dir.players(l.handle))
      if (l.owner != party_of(p) && l.owner != ((party_id{1} << 63) | p))
        violation(fmt::format("player {} (party {}) on the instance of {}", p, party_of(p), l.owner));
  }

  // Runs on the world's thread: the directory against the models, capacities, line counts.
  void check(const line_directory& dir) {
    ++checks;
    std::map<player_id, line_handle> expected;
    for (const auto& m : models)
      for (const auto& [p, at] : m) {
        auto loc = dir.locate(p);
        if (!at && loc.where != location::state::none)
          violation(fmt::format("player {} should be nowhere", p));
        if (at && (loc.where != location::state::in_line || !(loc.line == *at)))
          violation(fmt::format("player {} is not on scene {} line {}", p, at->scene, at->line));
        if (at) expected[p] = *at;
      }
    std::size_t on_lines = 0;
    std::set<std::pair<party_id, scene_id>> instances;
    for (const auto& def : table.scenes) {
      std::uint32_t open = 0, live = 0;
      dir.for_each_line(def.id, [&](const line_info& l) {
        ++live;
        open += l.state == line_state::open && l.owner == 0;
        check_private(def, l, dir, instances);
        if (l.players > def.hard_capacity)
          violation(fmt::format("scene {} line {} above hard capacity", def.id, l.handle.line));
        for (player_id p : dir.players(l.handle)) {
          ++on_lines;
          auto it = expected.find(p);
          if (it == expected.end() || !(it->second == l.handle))
            violation(fmt::format("player {} found on scene {} line {}", p, def.id, l.handle.line));
        }
      });
      if (open < def.min_lines || live > def.max_lines)
        violation(fmt::format("scene {}: {} open / {} live lines outside {}..{}", def.id, open, live,
                              def.min_lines, def.max_lines));
    }
    if (on_lines != expected.size() || dir.player_count() != expected.size())
      violation(fmt::format("{} players on lines, {} known, {} expected", on_lines, dir.player_count(),
                            expected.size()));
  }

  void checkpoint() {
    test::check_directory(*w, [this](const line_directory& dir) { check(dir); });
  }

  void run_thread(int t, std::barrier<>& sync) {
    auto& model = models[t];
    auto mt = test::thread_share(t, players_per_thread, requests_per_thread, checkpoint_every);
    for (int i = 0; i < players_per_thread; ++i) model[mt.base + i] = std::nullopt;
    std::vector<line_handle> seen;
    mt.next = [&](std::mt19937_64& rng, player_id p) {
      return random_request(rng, p, model[p].has_value(), seen);
    };
    mt.apply = [&](player_id p, const R& req, const world_result& r) {
      apply(model, p, req, r);
      if (r) seen.push_back(r->line);
    };
    mt.checkpoint = [this] { checkpoint(); };
    test::drive_players(*w, mt, sync);
  }

  static R random_request(std::mt19937_64& rng, player_id p, bool placed,
                          const std::vector<line_handle>& seen) {
    scene_id scene = static_cast<scene_id>(1 + rng() % 6);
    if (rng() % 50 == 0) scene = 99;  // unknown
    if (rng() % 4 == 0) return R::enter_instance(p, 5 + rng() % 2, party_of(p));
    if (rng() % 20 == 0) return R::leave_party(p);
    auto some_line = [&] { return seen.empty() ? line_handle{1, 1, 1} : seen[rng() % seen.size()]; };
    switch (rng() % (placed ? 6 : 4)) {
      case 0:
        return R::enter(p, scene);
      case 1:
        return R::join_team(p,
                            1 + (rng() % model_run::threads) * 1000 + rng() % model_run::players_per_thread);
      case 2:
        return placed ? R::leave(p) : R::enter_line(p, some_line());
      case 3:
        return placed ? R::transfer(p, scene) : R::enter(p, scene);
      case 4:
        return R::transfer_line(p, some_line());
      default:
        return R::leave(p);
    }
  }

  void apply(std::map<player_id, std::optional<line_handle>>& model, player_id p, const R& req,
             const world_result& r) {
    auto& at = model[p];
    bool placed = at.has_value();
    if (!r) {
      auto c = r.code();
      {
        std::lock_guard g(counts_mutex);
        ++error_counts[to_string(c)];
      }
      bool ok =
          c != world_errc::switching && c != world_errc::shutting_down && c != world_errc::line_quarantined;
      if (req.what == R::kind::enter && placed) ok = ok && c == world_errc::already_in_scene;
      if (req.what == R::kind::leave && !placed) ok = ok && c == world_errc::not_in_scene;
      if (!ok) violation(fmt::format("player {}: unexpected {}: {}", p, to_string(c), r.error().message));
      return;
    }
    {
      std::lock_guard g(counts_mutex);
      ++ok_counts[static_cast<int>(req.what)];
    }
    if (req.what == R::kind::leave) {
      if (!placed) violation(fmt::format("player {}: left while nowhere", p));
      at.reset();
    } else if (req.what == R::kind::leave_party && r->line.scene == 0) {
      if (placed) violation(fmt::format("player {}: left its party from nowhere while placed", p));
    } else {
      if (req.what == R::kind::enter && placed) violation(fmt::format("player {}: entered twice", p));
      at = r->line;
    }
  }
};

TEST(WorldModel, RandomRequestsFromSeveralThreadsKeepEveryInvariant) {
  model_run run;
  std::barrier sync(model_run::threads);
  std::vector<std::thread> threads;
  for (int t = 0; t < model_run::threads; ++t) threads.emplace_back([&, t] { run.run_thread(t, sync); });
  for (auto& th : threads) th.join();
  run.checkpoint();
  EXPECT_EQ(run.checks.load(), 1 + model_run::requests_per_thread / model_run::checkpoint_every);
  run.w->shutdown().wait();
  (void)run.pool->stop();
  for (const auto& v : run.violations.list()) ADD_FAILURE() << v;
  auto s = run.w->snapshot();
  EXPECT_TRUE(s->shut_down);
  EXPECT_EQ(s->requests, static_cast<std::uint64_t>(model_run::threads * model_run::requests_per_thread));
  std::uint64_t opened = 0, closed = 0, actives = 0, inactives = 0, overlaps = 0;
  for (const auto& sc : s->scenes) opened += sc.lines_opened, closed += sc.lines_closed;
  for (auto& wm : run.watches) {
    EXPECT_EQ(wm.actives.load(), wm.inactives.load());  // every opening closed exactly once
    actives += wm.actives, inactives += wm.inactives, overlaps += wm.overlaps;
  }
  EXPECT_EQ(actives, opened);
  EXPECT_EQ(inactives, closed);
  EXPECT_EQ(opened, closed);
  EXPECT_EQ(overlaps, 0u);
  EXPECT_GT(closed, 20u) << "the idle grace should have closed lines during the run";
  for (auto k : {R::kind::enter, R::kind::enter_line, R::kind::leave, R::kind::transfer,
                 R::kind::transfer_line, R::kind::join_team, R::kind::enter_instance, R::kind::leave_party})
    EXPECT_GT(run.ok_counts[static_cast<int>(k)], 50)
        << "request kind " << static_cast<int>(k) << " rarely succeeded";
  for (auto& [k, v] : run.error_counts) std::fprintf(stderr, "%s=%d ", k.c_str(), v);
  for (auto& [k, v] : run.ok_counts) std::fprintf(stderr, "ok%d=%d ", k, v);
  std::fprintf(stderr, "model: %llu requests, %llu errors, %llu lines opened\n",
               (unsigned long long)s->requests, (unsigned long long)s->errors, (unsigned long long)opened);
}

}  // namespace
}  // namespace scenert
