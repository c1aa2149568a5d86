// The randomized model test with phases: several threads send random requests — enter, transfer,
// leave, walk, enter and leave phases — to a real world on a real pool. Checkpoints compare the
// world's directory with a model built from the answers; watch modules on every phase count its
// rounds and how many phases run at once per town line.

#include <scenert/runtime/processor_pool.hpp>
#include <scenert/scene/world.hpp>
#include <scenert/space/space_module.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <deque>
#include <map>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "../scene/model_driver.hpp"

namespace scenert {
namespace {

using R = world_request;
constexpr scene_id town = 1, dungeon = 2, field = 3, quest = 5, dream = 6;
constexpr std::uint32_t quest_max = 3;

scene_table phase_table() {
  scene_table t;
  t.runtime.group_budget = 12;
  t.runtime.idle_grace = std::chrono::milliseconds(20);
  t.maps.push_back(map_def{1, "map", 32, 32, 8, 8, 1, 1, {}});
  auto add = [&](scene_id id, scene_kind k, scene_structure st, std::uint32_t cap, std::uint32_t min,
                 std::uint32_t max) {
    scene_def d;
    d.id = id, d.name = "s" + std::to_string(id), d.kind = k, d.structure = st, d.capacity = cap;
    d.hard_capacity = cap, d.min_lines = min, d.max_lines = max, d.frame_rate = 50, d.map = 1, d.monsters = 2;
    d.policy = allocation_policy::least_loaded;
    t.scenes.push_back(d);
  };
  add(town, scene_kind::town, scene_structure::single, 10, 1, 4);
  add(dungeon, scene_kind::dungeon, scene_structure::group, 3, 0, 40);
  add(field, scene_kind::field, scene_structure::single, 8, 1, 3);
  add(quest, scene_kind::space, scene_structure::single, 1, 0, 0);
  add(dream, scene_kind::space, scene_structure::single, 1, 0, 0);
  t.scenes[3].space = space_def{town, 1, quest_max};
  t.scenes[4].space = space_def{town, 0, 0};
  return t;
}

// Per town line object: phases running now and at most; per phase object: its rounds.
struct town_watch {
  std::atomic<int> running{0}, most{0};
};
struct phase_watch {
  std::atomic<int> actives{0}, inactives{0}, in_tick{0}, overlaps{0};
};
struct watch_module final : scene_module {
  town_watch* t;
  phase_watch* p;
  bool counts_quests;
  watch_module(town_watch* tw, phase_watch* pw, bool quests) : t(tw), p(pw), counts_quests(quests) {}
  void on_active(scene&) override {
    ++p->actives;
    if (!counts_quests) return;
    int now = ++t->running, most = t->most.load();
    while (now > most && !t->most.compare_exchange_weak(most, now)) {
    }
  }
  void on_inactive(scene&) override {
    ++p->inactives;
    if (counts_quests) --t->running;
  }
  void on_tick(scene&, const tick_context&) override {
    if (p->in_tick.fetch_add(1) != 0) ++p->overlaps;
    p->in_tick.fetch_sub(1);
  }
};

struct placed {
  line_handle line{};
  std::uint32_t phase = 0;
};

struct phase_run {
  static constexpr int threads = 3;
  static constexpr int players_per_thread = 30;
  static constexpr int requests_per_thread = 2000;
  static constexpr int checkpoint_every = 500;

  scene_table table = phase_table();
  std::unique_ptr<processor_pool> pool;
  std::shared_ptr<world> w;
  std::mutex watch_mutex;
  std::map<const scene*, town_watch> towns;
  std::deque<phase_watch> phases;
  std::vector<std::map<player_id, std::optional<placed>>> models{threads};
  test::violation_list violations;
  std::atomic<int> phase_entries{0}, phase_leaves{0}, space_full{0}, checks{0};

  void violation(std::string v) { violations.add(std::move(v)); }

  phase_run() {
    pool = test::quiet_pool();
    space_limits limits;
    limits.cache_limit = 2;
    limits.on_new_phase = [this](scene& t, scene& phase) {
      std::lock_guard g(watch_mutex);
      phase.add_module(
          std::make_unique<watch_module>(&towns[&t], &phases.emplace_back(), phase.def().id == quest));
    };
    world_options o;
    o.hz = 500;
    o.line_pool = 2;
    o.on_new_line = attach_space_modules(table, std::move(limits));
    w = world::create(table, *pool, std::move(o));
    (void)pool->start();
    w->start();
  }

  void check(const line_directory& dir) {
    ++checks;
    for (const auto& m : models)
      for (const auto& [p, at] : m) {
        auto loc = dir.locate(p);
        if (!at) {
          if (loc.where != location::state::none) violation(fmt::format("player {} should be nowhere", p));
          continue;
        }
        if (loc.where != location::state::in_line || !(loc.line == at->line) || loc.phase != at->phase ||
            loc.phase_pending)
          violation(fmt::format("player {}: directory says line {} phase {}, model line {} phase {}", p,
                                loc.line.line, loc.phase, at->line.line, at->phase));
      }
  }

  void checkpoint() {
    test::check_directory(*w, [this](const line_directory& dir) { check(dir); });
  }

  static R random_request(std::mt19937_64& rng, player_id p, const std::optional<placed>& at) {
    if (!at) return R::enter(p, rng() % 5 == 0 ? field : town);
    switch (rng() % 10) {
      case 0:
      case 1:
      case 2:
        return R::enter_phase(p, rng() % 3 == 0 ? dream : quest);
      case 3:
      case 4:
      case 5:
        return R::leave_phase(p);
      case 6:
        return R::move(p, {static_cast<std::uint32_t>(rng() % 32), static_cast<std::uint32_t>(rng() % 32)});
      case 7:
      case 8:
        return R::transfer(p, at->line.scene == town ? (rng() % 2 ? field : dungeon) : town);
      default:
        return R::leave(p);
    }
  }

  // The answer must be what the model predicts, and moves the model on.
  void apply(std::optional<placed>& at, player_id p, const R& req, const world_result& r) {
    auto expect_error = [&](world_errc want) {
      if (r.code() != want)
        violation(fmt::format("player {} request {}: want {}, got {}", p, static_cast<int>(req.what),
                              to_string(want), r ? "ok" : r.error().message));
    };
    switch (req.what) {
      case R::kind::enter:
        if (r)
          at = placed{r->line, 0};
        else if (r.code() != world_errc::line_full)
          violation(fmt::format("player {}: enter: {}", p, r.error().message));
        return;
      case R::kind::enter_phase:
        if (at->phase != 0) return expect_error(world_errc::space_in_space);
        if (at->line.scene != town) return expect_error(world_errc::wrong_town);
        if (!r) {
          if (r.code() == world_errc::space_full && req.scene == quest)
            ++space_full;
          else
            violation(fmt::format("player {}: enter phase: {}", p, r.error().message));
          return;
        }
        ++phase_entries;
        at->phase = r->phase;
        return;
      case R::kind::leave_phase:
        if (at->phase == 0) return expect_error(world_errc::not_in_space);
        if (!r) return violation(fmt::format("player {}: leave phase: {}", p, r.error().message));
        ++phase_leaves;
        at->phase = 0;
        return;
      case R::kind::move:
        if (!r) violation(fmt::format("player {}: move: {}", p, r.error().message));
        return;
      case R::kind::transfer:
        if (r)
          at = placed{r->line, 0};
        else if (r.code() != world_errc::line_full)
          violation(fmt::format("player {}: transfer: {}", p, r.error().message));
        return;
      default:
        if (!r) return violation(fmt::format("player {}: leave: {}", p, r.error().message));
        at.reset();
        return;
    }
  }

  void run_thread(int t, std::barrier<>& sync) {
    auto& model = models[t];
    auto mt = test::thread_share(t, players_per_thread, requests_per_thread, checkpoint_every);
    for (int i = 0; i < players_per_thread; ++i) model[mt.base + i] = std::nullopt;
    mt.next = [&](std::mt19937_64& rng, player_id p) { return random_request(rng, p, model[p]); };
    mt.apply = [&](player_id p, const R& req, const world_result& r) { apply(model[p], p, req, r); };
    mt.checkpoint = [this] { checkpoint(); };
    test::drive_players(*w, mt, sync);
  }
};

TEST(PhaseModel, RandomPhaseTrafficKeepsEveryPlayerInOnePlace) {
  phase_run run;
  std::barrier sync(phase_run::threads);
  std::vector<std::thread> threads;
  for (int t = 0; t < phase_run::threads; ++t) threads.emplace_back([&, t] { run.run_thread(t, sync); });
  for (auto& th : threads) th.join();
  run.checkpoint();
  run.w->shutdown().wait();
  (void)run.pool->stop();
  for (const auto& v : run.violations.list()) ADD_FAILURE() << v;
  EXPECT_EQ(run.checks.load(), 1 + phase_run::requests_per_thread / phase_run::checkpoint_every);
  EXPECT_GT(run.phase_entries.load(), 60);
  EXPECT_GT(run.phase_leaves.load(), 30);
  EXPECT_GT(run.space_full.load(), 0) << "max_spaces should have been reached";
  int actives = 0, inactives = 0, overlaps = 0;
  for (auto& pw : run.phases) {
    EXPECT_EQ(pw.actives.load(), pw.inactives.load());  // every phase opened was closed exactly once
    actives += pw.actives, inactives += pw.inactives, overlaps += pw.overlaps;
  }
  EXPECT_EQ(actives, inactives);
  EXPECT_GE(actives, run.phase_entries.load());
  EXPECT_EQ(overlaps, 0);
  for (auto& [t, tw] : run.towns) {
    EXPECT_LE(tw.most.load(), static_cast<int>(quest_max));
    EXPECT_EQ(tw.running.load(), 0);
  }
  std::fprintf(stderr, "phase model: %d entries, %d leaves, %d space_full, %d phase rounds\n",
               run.phase_entries.load(), run.phase_leaves.load(), run.space_full.load(), actives);
}

}  // namespace
}  // namespace scenert
