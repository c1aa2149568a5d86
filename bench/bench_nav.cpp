// Micro benches of nav/ (Google Benchmark): one shortest path per iteration on generated 512x512
// maps, A* against JPS on the same scenarios; heap allocations counted per search after warm-up.
#include <scenert/nav/flow_field.hpp>
#include <scenert/nav/search.hpp>
#include <scenert/nav/steering.hpp>

#include <benchmark/benchmark.h>

#include <map>

#include "nav_common.hpp"

namespace {

namespace nav = scenert::nav;

const scenert::bench::nav_case& case_of(nav::map_kind kind) {
  static std::map<nav::map_kind, scenert::bench::nav_case> cases;
  auto it = cases.find(kind);
  if (it == cases.end()) it = cases.emplace(kind, scenert::bench::generated_case(kind, 512, 64, 1, 64)).first;
  return it->second;
}

void bm_path(benchmark::State& state) {
  const auto kind = static_cast<nav::map_kind>(state.range(0));
  const auto algo = static_cast<nav::algorithm>(state.range(1));
  const auto& c = case_of(kind);
  nav::search_context ctx;
  std::vector<nav::cell> path;
  for (const auto& s : c.scenarios) (void)ctx.find(*c.map, s.start, s.goal, algo, path);  // warm-up
  std::size_t i = 0;
  std::uint64_t expansions = 0, searches = 0, allocations = 0;
  for (auto _ : state) {
    const auto& s = c.scenarios[i++ % c.scenarios.size()];
    const std::uint64_t before = scenert::bench::nav_allocations.load(std::memory_order_relaxed);
    const auto out = ctx.find(*c.map, s.start, s.goal, algo, path);
    allocations += scenert::bench::nav_allocations.load(std::memory_order_relaxed) - before;
    if (out.status != nav::search_status::found) state.SkipWithError("no path");
    expansions += out.expansions, ++searches;
  }
  const double n = static_cast<double>(std::max<std::uint64_t>(1, searches));
  state.counters["expansions"] = static_cast<double>(expansions) / n;
  state.counters["allocs_per_search"] = static_cast<double>(allocations) / n;
  state.SetLabel(std::string(nav::to_string(kind)) + "/" + nav::to_string(algo));
}

void kinds_and_algorithms(benchmark::internal::Benchmark* b) {
  for (int kind = 0; kind < 4; ++kind)
    for (int algo = 0; algo < 2; ++algo) b->Args({kind, algo});
}

BENCHMARK(bm_path)->Apply(kinds_and_algorithms)->Unit(benchmark::kMicrosecond);

// 1,000 mobs on a 128x128 dungeon of rooms, each steering toward one of a few players, with the
// cell cap counted: the cost of one mob-step (the goal: at most 100 ns).
struct mob_crowd {
  std::shared_ptr<const nav::nav_map> map;
  std::vector<nav::mob_steer> mobs;
  std::vector<std::uint32_t> per_cell;
  std::vector<nav::cell> players;
  std::uint32_t operator()(nav::cell c) const { return per_cell[map->index(c)]; }
  explicit mob_crowd(nav::map_kind kind) {
    nav::map_spec spec{kind, 128, 128, 3};
    spec.room = 16;
    map = *nav::nav_map::create(128, 128, nav::generate_blocks(spec));
    per_cell.assign(map->cell_count(), 0);
    nav::nav_random rng(3);
    while (mobs.size() < 1000) {
      const nav::cell c{rng.below(128), rng.below(128)};
      if (map->passable(c.x, c.y) && per_cell[map->index(c)] < 2)
        mobs.push_back({c, c}), ++per_cell[map->index(c)];
    }
    while (players.size() < 4) {
      const nav::cell c{rng.below(128), rng.below(128)};
      if (map->passable(c.x, c.y)) players.push_back(c);
    }
  }
  void moved(nav::cell from, nav::cell to) { --per_cell[map->index(from)], ++per_cell[map->index(to)]; }
};

void bm_steer_step(benchmark::State& state) {
  mob_crowd crowd(nav::map_kind::rooms);
  const nav::steer_rules rules{40, 2};
  std::size_t i = 0;
  for (auto _ : state) {
    auto& mob = crowd.mobs[i % crowd.mobs.size()];
    const nav::cell from = mob.position;
    benchmark::DoNotOptimize(
        nav::steer(*crowd.map, mob, crowd.players[i % 4], rules, nav::cell_counter(crowd)));
    if (mob.position != from) crowd.moved(from, mob.position);
    if (++i % crowd.mobs.size() == 0 && mob.returning) mob = {mob.home, mob.home};
  }
}
BENCHMARK(bm_steer_step);

void bm_flow_step(benchmark::State& state) {
  mob_crowd crowd(nav::map_kind::rooms);
  nav::flow_field field;
  field.begin(*crowd.map, crowd.players[0]);
  while (!field.build(1u << 20)) {
  }
  std::size_t i = 0;
  for (auto _ : state) {
    auto& mob = crowd.mobs[i++ % crowd.mobs.size()];
    const auto next = field.next_step(mob.position, nav::cell_counter(crowd), 2);
    if (next) crowd.moved(mob.position, *next), mob.position = *next;
    if (mob.position == crowd.players[0]) crowd.moved(mob.position, mob.home), mob.position = mob.home;
  }
}
BENCHMARK(bm_flow_step);

// Building one flow field over the 128x128 dungeon, per settled cell.
void bm_flow_build(benchmark::State& state) {
  mob_crowd crowd(nav::map_kind::rooms);
  nav::flow_field field;
  std::uint64_t cells = 0;
  for (auto _ : state) {
    field.begin(*crowd.map, crowd.players[0]);
    while (!field.build(4096)) {
    }
    cells += field.settled();
  }
  state.counters["ns_per_cell"] = benchmark::Counter(
      static_cast<double>(cells), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(bm_flow_build)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
