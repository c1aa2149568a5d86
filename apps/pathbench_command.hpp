#pragma once
// `scenert pathbench MAP.map SCEN.scen [--algo astar|jps|all] [--budget N] [--report FILE]`: every
// scenario of a Moving AI benchmark file, each length and path checked, figures per bucket.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace scenert::apps {

/// What `pathbench` was asked to do; filled in by the command-line parser.
struct pathbench_command_options {
  std::string map;           ///< the `.map` file
  std::string scen;          ///< the `.scen` file
  std::string algo = "all";  ///< astar, jps or all
  std::uint32_t budget = 0;  ///< > 0: sliced searches of this many expansions per step
  std::uint32_t repeat = 3;  ///< timed runs per scenario and algorithm (the median is kept)
  std::string report;        ///< a JSON report to this file; empty: none
  bool json = false;         ///< the report as JSON on stdout instead of the table
};

/// Adds the `pathbench` subcommand to `app`; `options` is filled in when it is parsed.
CLI::App* add_pathbench_command(CLI::App& app, pathbench_command_options& options);

/// Runs `pathbench`; returns the exit code (0 every path exact, 2 usage error or unreadable file,
/// 3 a wrong length or an invalid path, each named on stderr).
int run_pathbench_command(const pathbench_command_options& options);

}  // namespace scenert::apps
