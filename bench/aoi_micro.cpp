// Micro benches of the grid AOI (Google Benchmark): the operations one at a time.
#include <scenert/scene/grid/grid.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "aoi_trace.hpp"

namespace sg = scenert::grid;

namespace {

struct sink {
  std::uint64_t sum = 0;
  void enter(sg::entity_id id) { sum += id; }
  void leave(sg::entity_id id) { sum += id; }
};

// A map of `size` cells with 16-cell areas and `n` players placed by splitmix64.
sg::grid populated(std::uint32_t size, std::uint32_t n, std::uint32_t radius = 1) {
  sg::grid g(*sg::map_data::create({size, size, 16, 16, radius, radius, {}}));
  scenert::bench::splitmix64 rng(42);
  for (sg::entity_id id = 0; id < n; ++id) {
    const auto x = static_cast<std::uint32_t>(rng() % size), y = static_cast<std::uint32_t>(rng() % size);
    if (!g.add(id, sg::entity_type::player, {x, y}, sg::ignore_view{})) std::abort();
  }
  return g;
}

void bm_move_inside_area(benchmark::State& state) {
  sg::grid g = populated(1024, 10000);
  const sg::cell_point base = g.position_of(0);
  const std::uint32_t x0 = base.x / 16 * 16, y0 = base.y / 16 * 16;
  std::uint32_t i = 0;
  sink s;
  for (auto _ : state) {
    auto r = g.move(0, {x0 + (i & 15), y0 + ((i >> 4) & 15)}, s);
    benchmark::DoNotOptimize(r);
    ++i;
  }
}
BENCHMARK(bm_move_inside_area);

// One area right and back: every move crosses; arg = players on a 256-cell map (density).
void bm_move_crossing(benchmark::State& state) {
  sg::grid g = populated(256, static_cast<std::uint32_t>(state.range(0)));
  const sg::cell_point p{100, 100};
  if (!g.teleport(0, p, sg::ignore_view{})) std::abort();
  bool right = false;
  sink s;
  for (auto _ : state) {
    right = !right;
    auto r = g.move(0, {right ? 116u : 100u, 100}, s);
    benchmark::DoNotOptimize(r);
  }
  benchmark::DoNotOptimize(s.sum);
}
BENCHMARK(bm_move_crossing)->Arg(100)->Arg(1000)->Arg(10000);

void bm_teleport(benchmark::State& state) {
  sg::grid g = populated(1024, 10000);
  scenert::bench::splitmix64 rng(7);
  sink s;
  for (auto _ : state) {
    auto r = g.teleport(
        0, {static_cast<std::uint32_t>(rng() % 1024), static_cast<std::uint32_t>(rng() % 1024)}, s);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(bm_teleport);

void bm_add_remove(benchmark::State& state) {
  sg::grid g = populated(1024, 10000);
  scenert::bench::splitmix64 rng(9);
  sink s;
  for (auto _ : state) {
    const sg::cell_point p{static_cast<std::uint32_t>(rng() % 1024),
                           static_cast<std::uint32_t>(rng() % 1024)};
    if (!g.add(20000, sg::entity_type::npc, p, s) || !g.remove(20000, s)) std::abort();
  }
  benchmark::DoNotOptimize(s.sum);
}
BENCHMARK(bm_add_remove);

void bm_view_query(benchmark::State& state) {
  sg::grid g = populated(256, 10000);
  std::uint64_t sum = 0;
  for (auto _ : state) {
    auto r = g.for_each_in_view({128, 128}, sg::type_mask::all, [&](sg::entity_id id) { sum += id; });
    benchmark::DoNotOptimize(r);
  }
  benchmark::DoNotOptimize(sum);
}
BENCHMARK(bm_view_query);

// One AI batch of a 1024-cell map with 2,000 players and 20,000 NPCs, NPCs walking as they are visited.
void bm_active_npc_batch(benchmark::State& state) {
  sg::grid g = populated(1024, 2000);
  scenert::bench::splitmix64 rng(11);
  for (sg::entity_id id = 2000; id < 22000; ++id)
    if (!g.add(id, sg::entity_type::npc,
               {static_cast<std::uint32_t>(rng() % 1024), static_cast<std::uint32_t>(rng() % 1024)},
               sg::ignore_view{}))
      std::abort();
  std::uint32_t batch = 0;
  std::uint64_t visited = 0;
  for (auto _ : state) {
    auto r = g.for_each_active_npc(batch, [&](sg::entity_id id) {
      ++visited;
      const sg::cell_point p = g.position_of(id);
      (void)g.move(id, {p.x ^ 1u, p.y}, sg::ignore_view{});
    });
    benchmark::DoNotOptimize(r);
    batch = (batch + 1) % sg::grid::ai_batch_count;
  }
  state.counters["npcs_per_batch"] = benchmark::Counter(double(visited), benchmark::Counter::kAvgIterations);
}
BENCHMARK(bm_active_npc_batch);

}  // namespace

BENCHMARK_MAIN();
