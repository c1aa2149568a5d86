// Micro benches of nav/ (Google Benchmark): one shortest path per iteration on generated 512x512
// maps, A* against JPS on the same scenarios; heap allocations counted per search after warm-up.
#include <scenert/nav/search.hpp>

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

}  // namespace

BENCHMARK_MAIN();
