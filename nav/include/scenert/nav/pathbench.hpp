#pragma once
/// pathbench: every scenario of a Moving AI `.scen` on its map, by A*, JPS or both, each length
/// checked against the file's and each path step by step; figures per bucket. The library entry
/// point behind a thin command: options in, a report (table or JSON) and an exit code out.

#include <cstdint>
#include <string>
#include <vector>

#include <scenert/nav/movingai.hpp>
#include <scenert/nav/nav_map.hpp>

namespace scenert::nav {

/// Which searches a pathbench runs.
enum class pathbench_algos : std::uint8_t { astar, jps, all };

/// What to run.
struct pathbench_options {
  std::string map_path;                          ///< the `.map` file
  std::string scen_path;                         ///< the `.scen` file
  pathbench_algos algos = pathbench_algos::all;  ///< A*, JPS or both
  std::uint32_t budget =
      0;  ///< > 0: run sliced, `budget` expansions per step, and check the result equals unsliced
  std::uint32_t repeat = 3;  ///< timed runs per scenario and algorithm; the median is kept
};

/// Figures of one algorithm over a set of paths.
struct algo_figures {
  std::uint32_t paths = 0;     ///< scenarios run
  double mean_expansions = 0;  ///< nodes taken off the open list, per path
  double mean_us = 0;          ///< microseconds per path, mean
  double p50_us = 0;           ///< microseconds per path, median
  double p99_us = 0;           ///< microseconds per path, 99th percentile
};

/// Figures of one bucket (or of the whole file).
struct bucket_figures {
  std::int64_t bucket = -1;  ///< the bucket; -1 for the whole file
  std::uint32_t paths = 0;   ///< scenarios in it
  algo_figures astar;        ///< A*'s figures (paths = 0 when not run)
  algo_figures jps;          ///< JPS's figures (paths = 0 when not run)
  double speedup = 0;        ///< A*'s mean time over JPS's, from the same run (0 unless both ran)
};

/// What a pathbench found.
struct pathbench_report {
  std::string map;                      ///< the map's name
  std::uint32_t width = 0, height = 0;  ///< the map's size
  std::uint32_t scenarios = 0;          ///< scenarios in the file
  std::uint32_t budget = 0;             ///< the slice budget (0: unsliced)
  std::vector<bucket_figures> buckets;  ///< one per bucket, in order
  bucket_figures total;                 ///< all scenarios
  std::vector<std::string> failures;    ///< wrong lengths or invalid paths, each naming its scenario
  std::string error;                    ///< a file that could not be read or parsed
  int exit_code = 0;                    ///< 0 ok, 2 unreadable or bad input, 3 a wrong length or path
};

/// Runs a pathbench over files.
pathbench_report pathbench(const pathbench_options& options);
/// Runs a pathbench over a map and scenarios held in memory (generated maps); `name` labels it.
pathbench_report pathbench(const nav_map& map, const std::vector<scenario>& scenarios,
                           const pathbench_options& options, const std::string& name);
/// The report as a table for people.
std::string to_text(const pathbench_report& report);
/// The report as one JSON object.
std::string to_json(const pathbench_report& report);

}  // namespace scenert::nav
