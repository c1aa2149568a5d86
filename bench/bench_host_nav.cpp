// bench_host_nav: the monsters' navigation in the real host. N open dungeon lines (grouped, 20 to a
// group service, 10 Hz) on W workers, each with one boss that searches across its map and M mobs
// that steer and share flow fields, chasing a party of P players that walks its map together.
// After a warm-up (players in, monsters woken), one measured window: tick overruns, the group
// ticks' p50/p99/max against the 100 ms period, lateness, process CPU, and the monsters' own costs
// as the lines time them (thinks and the steps they took; the bosses' expansions and the flow
// fields' cells). think_ns_per_step charges every think, one that took no step too, to the steps taken.
//   bench_host_nav [--lines N] [--workers W] [--mobs M] [--party P] [--seconds S] [--warmup S]
//                  [--barrier none|default] [--budget B]
// Prints one JSON object on stdout; progress on stderr.
#include <scenert/nav/nav_map.hpp>
#include <scenert/runtime/processor_pool.hpp>
#include <scenert/scene/scene.hpp>
#include <scenert/scene/world.hpp>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_cli.hpp"
#include "process_cpu.hpp"

namespace {

using namespace std::chrono_literals;
using namespace scenert;

struct args {
  std::uint32_t lines = 1000, mobs = 30, party = 3, budget = 400;
  unsigned workers = 2;
  double seconds = 10, warmup = 5;
  std::string barrier = "none";
};

args parse(int argc, char** argv) {
  args a;
  CLI::App app{"bench_host_nav: dungeon lines with a boss and mobs chasing a walking party"};
  app.add_option("--lines", a.lines, "dungeon lines")->check(CLI::Range(1, 1'000'000));
  app.add_option("--workers", a.workers, "the pool's workers")->check(CLI::Range(1, 1024));
  app.add_option("--mobs", a.mobs, "mobs per line (besides the boss)")->check(CLI::Range(0, 1000));
  app.add_option("--party", a.party, "players per line")->check(CLI::Range(1, 5));
  app.add_option("--budget", a.budget, "path_budget per line and tick")->check(CLI::Range(1, 1'000'000));
  app.add_option("--seconds", a.seconds, "the measured window")->check(CLI::Range(0.1, 600.0));
  app.add_option("--warmup", a.warmup, "seconds before it")->check(CLI::Range(0.0, 600.0));
  app.add_option("--barrier", a.barrier, "the monsters' barrier")->check(CLI::IsMember({"none", "default"}));
  bench::parse_or_exit(app, argc, argv);
  return a;
}

// A 64x64 open dungeon: pillars and a few wall pieces, so that the boss's paths bend.
map_def dungeon_map() {
  map_def m{1, "open dungeon", 64, 64, 16, 16, 2, 2, {}};
  for (std::uint32_t y = 8; y < 64; y += 16)
    for (std::uint32_t x = 8; x < 64; x += 16) m.blocks.push_back({x, y, 3, 3});
  m.blocks.push_back({20, 30, 24, 1});
  m.blocks.push_back({30, 4, 1, 20});
  m.blocks.push_back({40, 40, 1, 20});
  return m;
}

scene_table dungeon_table(const args& a) {
  scene_table t;
  t.runtime.workers = a.workers;
  t.runtime.group_budget = 100;  // capacity 5: 20 lines per group service
  t.runtime.idle_grace = 3600s;
  t.maps.push_back(dungeon_map());
  scene_def d;
  d.id = 1, d.name = "dungeon", d.kind = scene_kind::dungeon, d.structure = scene_structure::group;
  d.capacity = 5, d.hard_capacity = 5, d.min_lines = a.lines, d.max_lines = a.lines, d.frame_rate = 10;
  d.map = 1, d.policy = allocation_policy::least_loaded, d.path_budget = a.budget;
  const monster_barrier barrier = a.barrier == "default" ? monster_barrier::standard : monster_barrier::none;
  d.monsters = 1;
  d.monster = monster_def{monster_kind::boss, 2, 96, 128, barrier};
  d.more_monsters.push_back({a.mobs, monster_def{monster_kind::mob, 2, 24, 40, barrier}});
  t.scenes.push_back(d);
  return t;
}

// The monsters' work over every line, pushed by each line's module as deltas every tick.
struct ai_totals {
  std::atomic<std::uint64_t> thinks{0}, think_ns{0}, search_ns{0}, expansions{0}, field_cells{0},
      timed_ticks{0}, steps{0}, still_thinks{0}, clock_ns{0};
};

// The party of a line walks together toward a waypoint, a step every other tick (5 cells a
// second); a new waypoint when it arrives. Reports the line's AI costs into the totals.
class party_walk final : public scene_module {
 public:
  explicit party_walk(ai_totals& totals) : totals_(totals) {}
  void on_player_enter(scene&, player_id p) override { at_[p] = std::nullopt; }
  void on_player_leave(scene&, player_id p) override { at_.erase(p); }
  void on_tick(scene& s, const tick_context& ctx) override {
    report(s);
    if (ctx.index % 2 != 0 || at_.empty()) return;
    const nav::nav_map& map = *s.nav_map();
    if (!waypoint_ || arrived(s)) waypoint_ = open_cell(map);
    for (auto& [player, cell] : at_) {
      auto entity = s.entity_of(player);
      if (!entity) continue;
      const auto c = s.grid().position_of(*entity);
      const nav::cell from{c.x, c.y};
      const nav::cell to{step_toward(from.x, waypoint_->x), step_toward(from.y, waypoint_->y)};
      if (nav::can_step(map, from, to))
        s.post_move(player, {to.x, to.y});
      else if (nav::can_step(map, from, {to.x, from.y}))
        s.post_move(player, {to.x, from.y});
      else if (nav::can_step(map, from, {from.x, to.y}))
        s.post_move(player, {from.x, to.y});
      else
        waypoint_.reset();  // stuck on a wall: another waypoint next time
    }
  }

 private:
  static std::uint32_t step_toward(std::uint32_t v, std::uint32_t goal) {
    return v + (goal > v) - (goal < v);
  }
  nav::cell open_cell(const nav::nav_map& map) {
    for (;;) {
      const nav::cell c{static_cast<std::uint32_t>(rng_() % map.width()),
                        static_cast<std::uint32_t>(rng_() % map.height())};
      if (map.passable(c.x, c.y)) return c;
    }
  }
  bool arrived(const scene& s) const {
    for (const auto& [player, cell] : at_) {
      auto entity = s.entity_of(player);
      if (!entity) continue;
      const auto c = s.grid().position_of(*entity);
      if (c.x > waypoint_->x + 2 || c.x + 2 < waypoint_->x || c.y > waypoint_->y + 2 ||
          c.y + 2 < waypoint_->y)
        return false;
    }
    return true;
  }
  void report(const scene& s) {
    const ai_costs& now = s.ai_cost();
    totals_.thinks.fetch_add(s.ai_steps() - last_thinks_, std::memory_order_relaxed);
    totals_.think_ns.fetch_add(now.think_ns - last_.think_ns, std::memory_order_relaxed);
    totals_.search_ns.fetch_add(now.search_ns - last_.search_ns, std::memory_order_relaxed);
    totals_.expansions.fetch_add(now.expansions - last_.expansions, std::memory_order_relaxed);
    totals_.field_cells.fetch_add(now.field_cells - last_.field_cells, std::memory_order_relaxed);
    totals_.timed_ticks.fetch_add(now.timed_ticks - last_.timed_ticks, std::memory_order_relaxed);
    totals_.steps.fetch_add(now.steps - last_.steps, std::memory_order_relaxed);
    totals_.clock_ns.fetch_add(now.clock_ns - last_.clock_ns, std::memory_order_relaxed);
    totals_.still_thinks.fetch_add(now.still_thinks - last_.still_thinks, std::memory_order_relaxed);
    last_thinks_ = s.ai_steps(), last_ = now;
  }

  ai_totals& totals_;
  std::map<player_id, std::optional<nav::cell>> at_;
  std::optional<nav::cell> waypoint_;
  std::minstd_rand rng_{7};
  std::uint64_t last_thinks_ = 0;
  ai_costs last_;
};

struct window {
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  std::uint64_t count = 0;
};

// Percentiles of what a histogram recorded between two snapshots of it.
window between(const histogram_snapshot& a, const histogram_snapshot& b) {
  window w;
  std::vector<std::uint64_t> d(b.counts.size());
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = b.counts[i] - (i < a.counts.size() ? a.counts[i] : 0);
  for (auto c : d) w.count += c;
  std::size_t top = 0;
  for (std::size_t i = 0; i < d.size(); ++i)
    if (d[i] != 0) top = i;
  const auto bound_ms = [&](std::size_t i) {
    return std::chrono::duration<double, std::milli>(i < b.upper_bounds.size() ? b.upper_bounds[i] : b.max)
        .count();
  };
  auto pct = [&](double q) {
    const auto want = static_cast<std::uint64_t>(q * static_cast<double>(w.count));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < d.size(); ++i)
      if ((seen += d[i]) > want) return bound_ms(i);
    return 0.0;
  };
  w.p50_ms = pct(0.50), w.p99_ms = pct(0.99), w.max_ms = w.count != 0 ? bound_ms(top) : 0.0;
  return w;
}

std::string json(const window& w) {
  return fmt::format(R"({{"count": {}, "p50_ms": {:.3f}, "p99_ms": {:.3f}, "max_bucket_ms": {:.3f}}})",
                     w.count, w.p50_ms, w.p99_ms, w.max_ms);
}

// What one read of the thread's CPU clock costs on this machine (a system call; slow in a VM): the
// lines' AI times each hold about one read per timed tick; printed beside the read measured in place.
double clock_read_ns() {
  const auto now = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
  };
  constexpr int reads = 200'000;
  const double start = now();
  for (int i = 0; i < reads - 1; ++i) (void)now();
  return (now() - start) / reads;
}

std::string loadavg() {
  std::ifstream in("/proc/loadavg");
  double one = 0, five = 0, fifteen = 0;
  in >> one >> five >> fifteen;
  return fmt::format("[{:.2f}, {:.2f}, {:.2f}]", one, five, fifteen);
}

struct ai_snapshot {
  std::uint64_t thinks, think_ns, search_ns, expansions, field_cells, timed_ticks, steps, still_thinks,
      clock_ns;
  explicit ai_snapshot(const ai_totals& t)
      : thinks(t.thinks.load()),
        think_ns(t.think_ns.load()),
        search_ns(t.search_ns.load()),
        expansions(t.expansions.load()),
        field_cells(t.field_cells.load()),
        timed_ticks(t.timed_ticks.load()),
        steps(t.steps.load()),
        still_thinks(t.still_thinks.load()),
        clock_ns(t.clock_ns.load()) {}
};

void enter_party(const args& a, world& w) {
  std::atomic<std::uint64_t> answered{0}, refused{0};
  const std::uint64_t players = std::uint64_t{a.lines} * a.party;
  for (player_id p = 1; p <= players; ++p)
    w.submit(world_request::enter(p, 1), [&](world_result r) {
      if (!r) refused.fetch_add(1);
      answered.fetch_add(1);
    });
  while (answered.load() < players) std::this_thread::sleep_for(10ms);
  if (refused.load() != 0)
    std::fprintf(stderr, "%llu players refused\n", static_cast<unsigned long long>(refused.load()));
}

}  // namespace

int main(int argc, char** argv) {
  const args a = parse(argc, argv);
  const scene_table table = dungeon_table(a);
  pool_options po;
  po.workers = a.workers;
  processor_pool pool(po);
  (void)pool.start();
  ai_totals totals;
  world_options wo;
  wo.on_new_line = [&totals](scene& s) {
    s.time_ai(true);
    s.add_module(std::make_unique<party_walk>(totals));
  };
  auto w = world::create(table, pool, wo);
  const std::string load_before = loadavg();
  std::fprintf(stderr, "opening %u lines...\n", a.lines);
  w->start();
  std::this_thread::sleep_for(1500ms);
  std::fprintf(stderr, "%u players a line entering...\n", a.party);
  enter_party(a, *w);
  std::fprintf(stderr, "warming up %.1f s...\n", a.warmup);
  std::this_thread::sleep_for(std::chrono::duration<double>(a.warmup));

  std::fprintf(stderr, "measuring %.1f s...\n", a.seconds);
  const pool_metrics m0 = pool.metrics();
  const ai_snapshot ai0(totals);
  const double cpu0 = bench::process_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(a.seconds));
  const double cpu = bench::process_cpu_seconds() - cpu0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const pool_metrics m1 = pool.metrics();
  const ai_snapshot ai1(totals);
  const std::string load_after = loadavg();
  w->shutdown().wait();
  (void)pool.stop();

  const double thinks = static_cast<double>(ai1.thinks - ai0.thinks);
  const double steps = static_cast<double>(ai1.steps - ai0.steps);
  const double still = static_cast<double>(ai1.still_thinks - ai0.still_thinks);
  const double expansions = static_cast<double>(ai1.expansions - ai0.expansions);
  const double cells = static_cast<double>(ai1.field_cells - ai0.field_cells);
  const double read_ns = clock_read_ns();
  const double timed_ticks = static_cast<double>(ai1.timed_ticks - ai0.timed_ticks);
  // The read's cost as measured in place in each timed tick (clock_ns), taken off each part; the
  // tight loop's figure (read_ns) is printed beside it.
  const double clock_share = static_cast<double>(ai1.clock_ns - ai0.clock_ns);
  const double think_ns = static_cast<double>(ai1.think_ns - ai0.think_ns) - clock_share;
  const double search_ns = static_cast<double>(ai1.search_ns - ai0.search_ns) - clock_share;
  const auto per = [](double num, double den) { return den > 0 ? num / den : 0.0; };
  std::printf(
      "{\"bench\": \"host_nav\", \"lines\": %u, \"workers\": %u, \"bosses_per_line\": 1, \"mobs_per_line\": "
      "%u, "
      "\"party\": %u, \"barrier\": \"%s\", \"path_budget\": %u, \"seconds\": %.2f,\n"
      " \"loadavg_before\": %s, \"loadavg_after\": %s,\n"
      " \"overruns\": %llu, \"period_ms\": 100, \"group_tick\": %s, \"lateness\": %s,\n"
      " \"cpu_per_wall_s\": %.3f, \"thinks_per_s\": %.0f, \"expansions_per_s\": %.0f, \"field_cells_per_s\": "
      "%.0f,\n"
      " \"steps_per_s\": %.0f, \"still_thinks_per_s\": %.0f, \"think_ns_per_step\": %.1f,\n"
      " \"process_cpu_ns_per_think\": %.1f, \"think_ns_per_think\": %.1f, "
      "\"search_ns_per_expansion_or_cell\": "
      "%.1f, \"clock_read_ns\": %.1f, \"clock_read_in_tick_ns\": %.1f}\n",
      a.lines, a.workers, a.mobs, a.party, a.barrier.c_str(), a.budget, wall, load_before.c_str(),
      load_after.c_str(), static_cast<unsigned long long>(m1.overruns - m0.overruns),
      json(between(m0.tick_duration, m1.tick_duration)).c_str(),
      json(between(m0.lateness, m1.lateness)).c_str(), cpu / wall, thinks / wall, expansions / wall,
      cells / wall, steps / wall, still / wall, per(think_ns, steps), per(cpu * 1e9, thinks),
      per(think_ns, thinks), per(search_ns, expansions + cells), read_ns, per(clock_share, timed_ticks));
  return 0;
}
