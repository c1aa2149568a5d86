#include <scenert/nav/pathbench.hpp>
#include <scenert/nav/search.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

namespace scenert::nav {
namespace {

using clock_type = std::chrono::steady_clock;

// One algorithm's samples for one bucket.
struct samples {
  std::vector<double> us;
  double expansions = 0;
  algo_figures figures() const {
    algo_figures f;
    f.paths = static_cast<std::uint32_t>(us.size());
    if (us.empty()) return f;
    auto sorted = us;
    std::sort(sorted.begin(), sorted.end());
    const auto at = [&](double q) { return sorted[static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1))]; };
    double sum = 0;
    for (double v : sorted) sum += v;
    f.mean_us = sum / static_cast<double>(sorted.size());
    f.p50_us = at(0.5), f.p99_us = at(0.99);
    f.mean_expansions = expansions / static_cast<double>(sorted.size());
    return f;
  }
};

struct runner {
  const nav_map& map;
  const pathbench_options& options;
  pathbench_report& report;
  search_context ctx;
  std::vector<cell> path, sliced_path;

  // A sliced run's path, to compare with the unsliced one.
  search_outcome run_sliced(const scenario& s, algorithm algo) {
    sliced_path.clear();
    if (ctx.begin(map, s.start, s.goal, algo) == search_status::running)
      while (ctx.step(options.budget) == search_status::running) {}
    ctx.path(sliced_path);
    return {ctx.status(), ctx.status() == search_status::found ? ctx.length() : 0.0, ctx.expansions()};
  }

  // Times `repeat` runs and keeps the median; checks the last run's result.
  void run(const scenario& s, algorithm algo, samples& into) {
    std::vector<double> times;
    search_outcome out;
    for (std::uint32_t k = 0; k < std::max<std::uint32_t>(1, options.repeat); ++k) {
      const auto t0 = clock_type::now();
      out = options.budget > 0 ? run_sliced(s, algo) : ctx.find(map, s.start, s.goal, algo, path);
      times.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
    }
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
    into.us.push_back(times[times.size() / 2]);
    into.expansions += out.expansions;
    check(s, algo, out);
  }

  void fail(const scenario& s, algorithm algo, const std::string& why) {
    report.failures.push_back(fmt::format("scenario at line {} ({},{})->({},{}) {}: {}", s.line, s.start.x, s.start.y,
                                          s.goal.x, s.goal.y, to_string(algo), why));
  }

  void check(const scenario& s, algorithm algo, const search_outcome& out) {
    if (options.budget > 0) {
      const auto whole = ctx.find(map, s.start, s.goal, algo, path);
      if (whole.status != out.status || path != sliced_path) return fail(s, algo, "sliced result differs from unsliced");
    }
    const bool no_path = s.length == 0 && s.start != s.goal;
    if (no_path) {
      if (out.status != search_status::unreachable) fail(s, algo, fmt::format("found {}, want no path", out.length));
      return;
    }
    if (out.status != search_status::found) return fail(s, algo, fmt::format("{}, want length {}", to_string(out.status), s.length));
    if (std::abs(out.length - s.length) > 1e-3) fail(s, algo, fmt::format("length {:.8f}, want {:.8f}", out.length, s.length));
    const auto checked = validate_path(map, path, s.start, s.goal);
    if (!checked) return fail(s, algo, checked.error().message);
    if (std::abs(*checked - out.length) > 1e-6) fail(s, algo, "the path's steps do not add up to its length");
  }
};

bucket_figures figures_of(std::int64_t bucket, const samples& astar, const samples& jps) {
  bucket_figures b;
  b.bucket = bucket;
  b.astar = astar.figures();
  b.jps = jps.figures();
  b.paths = std::max(b.astar.paths, b.jps.paths);
  if (b.astar.paths > 0 && b.jps.paths > 0 && b.jps.mean_us > 0) b.speedup = b.astar.mean_us / b.jps.mean_us;
  return b;
}

}  // namespace

pathbench_report pathbench(const nav_map& map, const std::vector<scenario>& scenarios, const pathbench_options& options,
                           const std::string& name) {
  pathbench_report report;
  report.map = name, report.width = map.width(), report.height = map.height();
  report.scenarios = static_cast<std::uint32_t>(scenarios.size());
  report.budget = options.budget;
  runner r{map, options, report, {}, {}, {}};
  std::map<std::int64_t, std::pair<samples, samples>> by_bucket;
  std::pair<samples, samples> all;
  for (const auto& s : scenarios) {
    if (s.map_width != map.width() || s.map_height != map.height() || !map.contains(s.start.x, s.start.y) ||
        !map.contains(s.goal.x, s.goal.y)) {
      report.failures.push_back(fmt::format("scenario at line {}: stated for a {}x{} map or outside it", s.line,
                                            s.map_width, s.map_height));
      continue;
    }
    auto& [astar, jps] = by_bucket[s.bucket];
    if (options.algos != pathbench_algos::jps) r.run(s, algorithm::astar, astar);
    if (options.algos != pathbench_algos::astar) r.run(s, algorithm::jps, jps);
  }
  for (const auto& [bucket, pair] : by_bucket) {
    report.buckets.push_back(figures_of(bucket, pair.first, pair.second));
    all.first.us.insert(all.first.us.end(), pair.first.us.begin(), pair.first.us.end());
    all.first.expansions += pair.first.expansions;
    all.second.us.insert(all.second.us.end(), pair.second.us.begin(), pair.second.us.end());
    all.second.expansions += pair.second.expansions;
  }
  report.total = figures_of(-1, all.first, all.second);
  report.exit_code = report.failures.empty() ? 0 : 3;
  return report;
}

pathbench_report pathbench(const pathbench_options& options) {
  pathbench_report report;
  report.map = options.map_path;
  report.exit_code = 2;
  auto file = load_movingai_map(options.map_path);
  if (!file) return (report.error = file.error().message), report;
  auto scenarios = load_movingai_scen(options.scen_path);
  if (!scenarios) return (report.error = scenarios.error().message), report;
  auto map = nav_map::create(file->width, file->height, file->blocked);
  if (!map) return (report.error = map.error().message), report;
  return pathbench(**map, *scenarios, options, options.map_path);
}

}  // namespace scenert::nav
