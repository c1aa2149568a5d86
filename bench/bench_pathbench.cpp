// bench_pathbench: nav::pathbench on a Moving AI map (--map, --scen) or on a generated map
// (--generated open|random|rooms|maze), A* and JPS in one run, every length and path checked.
// Prints one JSON object: the pathbench report plus heap allocations per search after warm-up.
// Exit codes as nav::pathbench: 0 ok, 2 usage or unreadable input, 3 a wrong length or path.
#include <scenert/nav/pathbench.hpp>
#include <scenert/nav/search.hpp>

#include <cstdio>
#include <cstring>
#include <string>

#include "nav_common.hpp"

namespace {

namespace nav = scenert::nav;

struct args {
  nav::pathbench_options options;
  std::string generated;
  std::uint32_t size = 512, paths = 200;
  std::uint64_t seed = 1;
  bool text = false;
};

bool parse(int argc, char** argv, args& a) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--text") {
      a.text = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    const std::string v = argv[++i];
    if (flag == "--map")
      a.options.map_path = v;
    else if (flag == "--scen")
      a.options.scen_path = v;
    else if (flag == "--generated")
      a.generated = v;
    else if (flag == "--size")
      a.size = static_cast<std::uint32_t>(std::stoul(v));
    else if (flag == "--paths")
      a.paths = static_cast<std::uint32_t>(std::stoul(v));
    else if (flag == "--seed")
      a.seed = std::stoull(v);
    else if (flag == "--budget")
      a.options.budget = static_cast<std::uint32_t>(std::stoul(v));
    else if (flag == "--repeat")
      a.options.repeat = static_cast<std::uint32_t>(std::stoul(v));
    else if (flag == "--algo")
      a.options.algos = v == "astar" ? nav::pathbench_algos::astar
                        : v == "jps" ? nav::pathbench_algos::jps
                                     : nav::pathbench_algos::all;
    else
      return false;
  }
  return !a.generated.empty() || (!a.options.map_path.empty() && !a.options.scen_path.empty());
}

// Allocations per search over a second pass of every scenario (the first one warms the context).
double allocations_per_search(const nav::nav_map& map, const std::vector<nav::scenario>& scenarios) {
  nav::search_context ctx;
  std::vector<nav::cell> path;
  std::uint64_t before = 0;
  for (int pass = 0; pass < 2; ++pass) {
    before = scenert::bench::nav_allocations.load();
    for (const auto& s : scenarios)
      for (auto algo : {nav::algorithm::astar, nav::algorithm::jps})
        (void)ctx.find(map, s.start, s.goal, algo, path);
  }
  const auto n = static_cast<double>(2 * scenarios.size());
  return n == 0 ? 0 : static_cast<double>(scenert::bench::nav_allocations.load() - before) / n;
}

}  // namespace

int main(int argc, char** argv) {
  args a;
  if (!parse(argc, argv, a)) {
    std::fprintf(
        stderr,
        "usage: bench_pathbench (--map M.map --scen M.scen | --generated open|random|rooms|maze "
        "[--size 512] [--paths 200] [--seed 1]) [--algo astar|jps|all] [--budget N] [--repeat 3] [--text]\n");
    return 2;
  }
  nav::pathbench_report report;
  double allocs = 0;
  if (!a.generated.empty()) {
    const auto kind = nav::parse_map_kind(a.generated);
    if (!kind) return std::fprintf(stderr, "unknown map kind %s\n", a.generated.c_str()), 2;
    const auto c = scenert::bench::generated_case(*kind, a.size, a.paths, a.seed, 64);
    report = nav::pathbench(*c.map, c.scenarios, a.options, a.generated);
    allocs = allocations_per_search(*c.map, c.scenarios);
  } else {
    report = nav::pathbench(a.options);
    const auto file = nav::load_movingai_map(a.options.map_path);
    const auto scen = nav::load_movingai_scen(a.options.scen_path);
    if (file && scen)
      allocs =
          allocations_per_search(**nav::nav_map::create(file->width, file->height, file->blocked), *scen);
  }
  if (a.text) std::fputs(nav::to_text(report).c_str(), stderr);
  std::string json = nav::to_json(report);
  json.pop_back();
  std::printf("%s, \"allocations_per_search\": %.3f}\n", json.c_str(), allocs);
  return report.exit_code;
}
